/**
 * The tables of an Nsight Systems SQLite export that flameox reads, and how a row of each becomes a
 * trace event. Only real tables are read (never views: a view is a query the file's author wrote,
 * and a recursive one never ends), each through one `ORDER BY start` statement stepped row by row.
 */
import type { Database } from "bun:sqlite";
import type { TraceEventRow } from "../../domain/evidence.ts";
import { boundedArgsJson } from "../formats/chrome-event-record.ts";

export type PendingEvent = Omit<TraceEventRow, "event_id">;
type Row = Record<string, unknown>;
type Built = Partial<PendingEvent> & { name: string };

/** The export's real tables by lower-case name (views and virtual tables are left out). */
export function realTables(database: Database): Map<string, string> {
  const tables = new Map<string, string>();
  const rows = database.query<{ name: string; sql: string | null }, []>("select name, sql from sqlite_master where type = 'table'").all();
  for (const row of rows) {
    if (/^\s*create\s+virtual\b/i.test(row.sql ?? "")) continue;
    tables.set(row.name.toLowerCase(), row.name);
  }
  return tables;
}

export function columnsOf(database: Database, table: string): Set<string> {
  return new Set(
    database
      .query<{ name: string }, []>(`pragma table_info("${table}")`)
      .all()
      .map((row) => row.name),
  );
}

export function pick(available: Set<string>, ...candidates: string[]): string | null {
  return candidates.find((candidate) => available.has(candidate)) ?? null;
}

/** Nsight's string table (`StringIds`), which names runtime calls, NVTX ranges and some kernels. */
export function readStrings(database: Database, table: string | null, checkDeadline: () => void): Map<number, string> {
  const strings = new Map<number, string>();
  if (!table) return strings;
  const valueColumn = pick(columnsOf(database, table), "value", "string");
  if (!valueColumn) return strings;
  let count = 0;
  for (const row of database.query<{ id: number; value: string }, []>(`select id, "${valueColumn}" as value from "${table}"`).iterate()) {
    strings.set(row.id, row.value);
    if (++count % 4096 === 0) checkDeadline();
  }
  return strings;
}

function text(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value);
}

/** JSON.rawJSON (ES2025): a value that JSON.stringify writes as the given text. */
const rawJson = (JSON as unknown as { rawJSON(text: string): object }).rawJSON;

/** A bigint as a JSON number with all its digits (graph ids and addresses pass 2^53), at any depth. */
function exactNumbers(item: unknown): unknown {
  if (typeof item === "bigint") return Number.isSafeInteger(Number(item)) ? Number(item) : rawJson(item.toString());
  if (Array.isArray(item)) return item.map(exactNumbers);
  if (item !== null && typeof item === "object") {
    return Object.fromEntries(Object.entries(item).map(([key, value]) => [key, exactNumbers(value)]));
  }
  return item;
}

/**
 * Args as JSON text within the evidence bound, valid however long a column's value is (a malformed
 * export can put any text in any column). Integers read as bigint are written as exact JSON numbers.
 */
export function boundedNsightArgs(value: Record<string, unknown>): string | null {
  return boundedArgsJson(exactNumbers(value));
}

function processOf(row: Row): string | null {
  return text(
    row.globalPid ??
      row.processId ??
      row.pid ??
      (row.globalTid !== undefined && row.globalTid !== null ? BigInt(row.globalTid as number) >> 24n : null),
  );
}

/** A host API call (runtime or driver): the launch a device activity correlates with. */
function hostCall(row: Row): Pick<Built, "correlation" | "tid" | "pid"> {
  return { correlation: text(row.correlationId ?? row.correlation), tid: text(row.globalTid), pid: processOf(row) };
}

/** Work on a GPU (kernel, copy, set, graph): the launch it correlates with and where it ran. */
function deviceActivity(row: Row): Pick<Built, "correlation" | "device" | "stream" | "pid"> {
  return { correlation: text(row.correlationId), device: text(row.deviceId), stream: text(row.streamId), pid: processOf(row) };
}

/** A source table: its Nsight name, the category its events get, and how a row is described. */
export type TableSpec = {
  table: string;
  category: string;
  build: (row: Row, available: Set<string>, strings: Map<number, string>) => Built;
};

function nameOf(row: Row, available: Set<string>, category: string, strings: Map<number, string>): string {
  const idColumn = pick(available, "nameId", "textId");
  if (idColumn && row[idColumn] !== null && row[idColumn] !== undefined)
    return strings.get(Number(row[idColumn])) ?? `${category}:${row[idColumn]}`;
  const direct = pick(available, "name", "text");
  return direct ? String(row[direct] ?? `${category}:unnamed`) : `${category}:unnamed`;
}

export const runtimeSpec: TableSpec = {
  table: "CUPTI_ACTIVITY_KIND_RUNTIME",
  category: "cuda_runtime",
  build: (row, available, strings) => ({
    name: nameOf(row, available, "cuda_runtime", strings),
    ...hostCall(row),
    args: boundedNsightArgs({ return_value: row.returnValue ?? null }),
  }),
};

const driverSpec: TableSpec = {
  table: "CUPTI_ACTIVITY_KIND_DRIVER",
  category: "cuda_driver",
  build: (row, available, strings) => ({
    name: nameOf(row, available, "cuda_driver", strings),
    ...hostCall(row),
  }),
};

export const kernelSpec: TableSpec = {
  table: "CUPTI_ACTIVITY_KIND_KERNEL",
  category: "kernel",
  build: (row, available, strings) => {
    const nameColumn = pick(available, "demangledName", "shortName", "name");
    const raw = nameColumn ? row[nameColumn] : null;
    return {
      name: typeof raw === "number" ? (strings.get(raw) ?? `kernel:${raw}`) : String(raw ?? "kernel:unnamed"),
      ...deviceActivity(row),
      args: boundedNsightArgs({
        context: row.contextId ?? null,
        grid: [row.gridX, row.gridY, row.gridZ],
        block: [row.blockX, row.blockY, row.blockZ],
        graph_id: row.graphId ?? null,
        launch_type: row.launchType ?? null,
      }),
    };
  },
};

const memcpySpec: TableSpec = {
  table: "CUPTI_ACTIVITY_KIND_MEMCPY",
  category: "cuda_memcpy",
  build: (row) => ({
    name: `cuda_memcpy:${row.copyKind ?? "unknown"}`,
    ...deviceActivity(row),
    args: boundedNsightArgs({
      bytes: row.bytes ?? null,
      copy_kind: row.copyKind ?? null,
      src_kind: row.srcKind ?? null,
      dst_kind: row.dstKind ?? null,
    }),
  }),
};

const memsetSpec: TableSpec = {
  table: "CUPTI_ACTIVITY_KIND_MEMSET",
  category: "cuda_memset",
  build: (row) => ({
    name: "cuda_memset",
    ...deviceActivity(row),
    args: boundedNsightArgs({ bytes: row.bytes ?? null, value: row.value ?? null }),
  }),
};

const nvtxSpec: TableSpec = {
  table: "NVTX_EVENTS",
  category: "nvtx",
  build: (row, available, strings) => ({ name: nameOf(row, available, "nvtx", strings), tid: text(row.globalTid), pid: processOf(row) }),
};

export const graphSpec: TableSpec = {
  table: "CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
  category: "cuda_graph",
  build: (row) => ({
    name: "cudaGraphLaunch",
    ...deviceActivity(row),
    args: boundedNsightArgs({ graph_id: row.graphId ?? null, graph_exec_id: row.graphExecId ?? null }),
  }),
};

/** Every table read besides the graph trace, whose rows may duplicate runtime launches. */
export const eventTables: TableSpec[] = [runtimeSpec, driverSpec, kernelSpec, memcpySpec, memsetSpec, nvtxSpec];
