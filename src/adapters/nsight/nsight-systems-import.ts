import { Database } from "bun:sqlite";
import { artifactParseFailed, FlameoxError } from "../../domain/errors.ts";
import type { EvidenceSink, TraceEventRow } from "../../domain/evidence.ts";
import { requireSqliteFile } from "../formats/sqlite-file.ts";

export const nsightExtractorVersion = "flameox.nsight-systems-sqlite@1";
const maxArgsLength = 2000;

function parseFailed(message: string): FlameoxError {
  return artifactParseFailed(`Nsight Systems export: ${message}`, {
    remediation: [
      "Export the report again: nsys export --type sqlite --output <name>.sqlite <name>.nsys-rep, then import the .sqlite file.",
    ],
  });
}

export type NsightSummary = {
  eventCount: number;
  counts: Record<string, number>;
  correlatedKernels: number;
  streams: string[];
  devices: string[];
  topKernels: { name: string; count: number; totalNs: number }[];
  observedTables: string[];
  limitations: string[];
};

type Row = Record<string, unknown>;

/**
 * Reads an `nsys export --type sqlite` file (never the .nsys-rep) into trace events. Column names
 * vary across Nsight releases, so each is looked up among candidates.
 */
export function importNsightSystems(path: string, sink: EvidenceSink): NsightSummary {
  requireSqliteFile(path, parseFailed);
  let database: Database;
  try {
    database = new Database(path, { readonly: true });
  } catch (error) {
    throw parseFailed(`cannot open (${String(error)})`);
  }
  try {
    return importOpen(database, sink);
  } catch (error) {
    if (error instanceof FlameoxError) throw error;
    throw parseFailed(String(error).slice(0, 500));
  } finally {
    database.close();
  }
}

function importOpen(database: Database, sink: EvidenceSink): NsightSummary {
  const tables = new Map<string, string>();
  for (const row of database.query("select name from sqlite_master where type in ('table','view')").all() as { name: string }[]) {
    tables.set(row.name.toLowerCase(), row.name);
  }
  const table = (name: string) => tables.get(name.toLowerCase()) ?? null;
  const runtime = table("CUPTI_ACTIVITY_KIND_RUNTIME");
  const kernel = table("CUPTI_ACTIVITY_KIND_KERNEL");
  if (!runtime || !kernel) throw parseFailed("the CUDA runtime and kernel tables are required (trace with --trace=cuda)");
  const columns = (name: string) =>
    new Set((database.query(`pragma table_info("${name}")`).all() as { name: string }[]).map((row) => row.name));
  const pick = (available: Set<string>, ...candidates: string[]) => candidates.find((candidate) => available.has(candidate)) ?? null;
  const strings = new Map<number, string>();
  const stringTable = table("StringIds");
  if (stringTable) {
    const available = columns(stringTable);
    const valueColumn = pick(available, "value", "string");
    if (valueColumn)
      for (const row of database.query(`select id, "${valueColumn}" as value from "${stringTable}"`).all() as {
        id: number;
        value: string;
      }[])
        strings.set(row.id, row.value);
  }
  type Pending = Omit<TraceEventRow, "event_id">;
  const events: Pending[] = [];
  const counts: Record<string, number> = {};
  const observed: string[] = [];
  const limitations: string[] = ["The SQLite export is authoritative; its clock is Nsight's own, not aligned with other captures."];
  const text = (value: unknown) => (value === null || value === undefined ? null : String(value));
  const bounded = (value: Record<string, unknown>) => {
    const json = JSON.stringify(value);
    return json.length <= maxArgsLength ? json : json.slice(0, maxArgsLength);
  };

  const readTable = (name: string, category: string, build: (row: Row, available: Set<string>) => Partial<Pending> & { name: string }) => {
    const actual = table(name);
    if (!actual) {
      limitations.push(`No ${name} table in this export.`);
      return [] as Pending[];
    }
    const available = columns(actual);
    if (!available.has("start") || !available.has("end")) {
      limitations.push(`${name} lacks start/end columns and was skipped.`);
      return [] as Pending[];
    }
    observed.push(actual);
    const produced: Pending[] = [];
    for (const row of database.query(`select * from "${actual}" order by start`).all() as Row[]) {
      const start = Number(row.start);
      const end = Number(row.end);
      if (!Number.isFinite(start) || !Number.isFinite(end)) throw parseFailed(`${name} has a row without numeric start/end`);
      const built = build(row, available);
      produced.push({
        parent_id: null,
        depth: 0,
        category,
        ts_ns: start,
        dur_ns: Math.max(0, end - start),
        pid: null,
        tid: null,
        args: null,
        correlation: null,
        device: null,
        stream: null,
        phase: "X",
        ...built,
      });
    }
    counts[category] = (counts[category] ?? 0) + produced.length;
    return produced;
  };
  const nameOf = (row: Row, available: Set<string>, category: string) => {
    const idColumn = pick(available, "nameId", "textId");
    if (idColumn && row[idColumn] !== null && row[idColumn] !== undefined)
      return strings.get(Number(row[idColumn])) ?? `${category}:${row[idColumn]}`;
    const direct = pick(available, "name", "text");
    return direct ? String(row[direct] ?? `${category}:unnamed`) : `${category}:unnamed`;
  };
  const processOf = (row: Row) =>
    text(
      row.globalPid ??
        row.processId ??
        row.pid ??
        (row.globalTid !== undefined && row.globalTid !== null ? BigInt(row.globalTid as number) >> 24n : null),
    );

  const runtimeEvents = readTable("CUPTI_ACTIVITY_KIND_RUNTIME", "cuda_runtime", (row, available) => ({
    name: nameOf(row, available, "cuda_runtime"),
    correlation: text(row.correlationId ?? row.correlation),
    tid: text(row.globalTid),
    pid: processOf(row),
    args: bounded({ return_value: row.returnValue ?? null }),
  }));
  events.push(...runtimeEvents);
  events.push(
    ...readTable("CUPTI_ACTIVITY_KIND_DRIVER", "cuda_driver", (row, available) => ({
      name: nameOf(row, available, "cuda_driver"),
      correlation: text(row.correlationId ?? row.correlation),
      tid: text(row.globalTid),
      pid: processOf(row),
    })),
  );
  const kernels = readTable("CUPTI_ACTIVITY_KIND_KERNEL", "kernel", (row, available) => {
    const nameColumn = pick(available, "demangledName", "shortName", "name");
    const raw = nameColumn ? row[nameColumn] : null;
    return {
      name: typeof raw === "number" ? (strings.get(raw) ?? `kernel:${raw}`) : String(raw ?? "kernel:unnamed"),
      correlation: text(row.correlationId),
      device: text(row.deviceId),
      stream: text(row.streamId),
      pid: processOf(row),
      args: bounded({
        context: row.contextId ?? null,
        grid: [row.gridX, row.gridY, row.gridZ],
        block: [row.blockX, row.blockY, row.blockZ],
        graph_id: row.graphId ?? null,
        launch_type: row.launchType ?? null,
      }),
    };
  });
  events.push(...kernels);
  events.push(
    ...readTable("CUPTI_ACTIVITY_KIND_MEMCPY", "cuda_memcpy", (row) => ({
      name: `cuda_memcpy:${row.copyKind ?? "unknown"}`,
      correlation: text(row.correlationId),
      device: text(row.deviceId),
      stream: text(row.streamId),
      pid: processOf(row),
      args: bounded({
        bytes: row.bytes ?? null,
        copy_kind: row.copyKind ?? null,
        src_kind: row.srcKind ?? null,
        dst_kind: row.dstKind ?? null,
      }),
    })),
  );
  events.push(
    ...readTable("CUPTI_ACTIVITY_KIND_MEMSET", "cuda_memset", (row) => ({
      name: "cuda_memset",
      correlation: text(row.correlationId),
      device: text(row.deviceId),
      stream: text(row.streamId),
      pid: processOf(row),
      args: bounded({ bytes: row.bytes ?? null, value: row.value ?? null }),
    })),
  );
  events.push(
    ...readTable("NVTX_EVENTS", "nvtx", (row, available) => ({
      name: nameOf(row, available, "nvtx"),
      tid: text(row.globalTid),
      pid: processOf(row),
    })),
  );
  // Graph launches appear both as a runtime call and as a graph-trace row; count them once.
  const runtimeHasGraphLaunch = runtimeEvents.some((event) =>
    event.name
      .toLowerCase()
      .replace(/[^a-z0-9]/g, "")
      .includes("graphlaunch"),
  );
  const graphTable = table("CUPTI_ACTIVITY_KIND_GRAPH_TRACE");
  if (graphTable && !runtimeHasGraphLaunch) {
    events.push(
      ...readTable("CUPTI_ACTIVITY_KIND_GRAPH_TRACE", "cuda_graph", (row) => ({
        name: "cudaGraphLaunch",
        correlation: text(row.correlationId),
        device: text(row.deviceId),
        stream: text(row.streamId),
        pid: processOf(row),
        args: bounded({ graph_id: row.graphId ?? null, graph_exec_id: row.graphExecId ?? null }),
      })),
    );
  } else if (graphTable) {
    observed.push(graphTable);
    limitations.push("Graph launches are counted from the runtime API rows; the graph-trace rows duplicate them.");
  }
  events.sort(
    (left, right) =>
      left.ts_ns - right.ts_ns || (left.category ?? "").localeCompare(right.category ?? "") || left.name.localeCompare(right.name),
  );
  events.forEach((event, index) => sink.traceEvent({ event_id: index, ...event }));

  const launchCorrelations = new Set(
    events
      .filter((event) => event.category === "cuda_runtime" || event.category === "cuda_driver")
      .map((event) => event.correlation)
      .filter((value) => value !== null),
  );
  const kernelEvents = events.filter((event) => event.category === "kernel");
  const byKernel = new Map<string, { name: string; count: number; totalNs: number }>();
  for (const event of kernelEvents) {
    const entry = byKernel.get(event.name) ?? { name: event.name, count: 0, totalNs: 0 };
    entry.count += 1;
    entry.totalNs += event.dur_ns ?? 0;
    byKernel.set(event.name, entry);
  }
  return {
    eventCount: events.length,
    counts,
    correlatedKernels: kernelEvents.filter((event) => event.correlation !== null && launchCorrelations.has(event.correlation)).length,
    streams: [...new Set(events.map((event) => event.stream).filter((value): value is string => value !== null))].sort(),
    devices: [...new Set(events.map((event) => event.device).filter((value): value is string => value !== null))].sort(),
    topKernels: [...byKernel.values()].sort((left, right) => right.count - left.count || right.totalNs - left.totalNs),
    observedTables: observed,
    limitations,
  };
}
