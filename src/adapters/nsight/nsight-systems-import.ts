/**
 * Reads an `nsys export --type sqlite` file (never the .nsys-rep) into trace events. Column names
 * vary across Nsight releases, so each is looked up among candidates. The tables are stepped row by
 * row and merged in timestamp order, so memory holds one row per table, and the whole read runs
 * under a deadline (checked between rows).
 */
import { Database } from "bun:sqlite";
import { artifactParseFailed, extractionBoundExceeded, FlameoxError } from "../../domain/errors.ts";
import type { EvidenceSink } from "../../domain/evidence.ts";
import { requireSqliteFile } from "../formats/sqlite-file.ts";
import {
  columnsOf,
  eventTables,
  graphSpec,
  kernelSpec,
  type PendingEvent,
  pick,
  readStrings,
  realTables,
  runtimeSpec,
  type TableSpec,
} from "./nsight-tables.ts";

export const nsightExtractorVersion = "flameox.nsight-systems-sqlite@1";

/** How long reading one export may take; a real export of a long session reads in seconds. */
export const nsightDeadlineMs = 120_000;

/** Timestamps beyond 2^62 ns (146 years) are not Nsight's clock and would overflow int64 arithmetic downstream. */
const largestTimestampNs = 2 ** 62;

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
  /** Kernels by total time, longest first (count breaks ties). */
  topKernels: { name: string; count: number; totalNs: number }[];
  observedTables: string[];
  limitations: string[];
};

export function importNsightSystems(path: string, sink: EvidenceSink, options: { deadlineMs?: number } = {}): NsightSummary {
  requireSqliteFile(path, parseFailed);
  let database: Database;
  try {
    database = new Database(path, { readonly: true });
  } catch (error) {
    throw parseFailed(`cannot open (${String(error).slice(0, 200)})`);
  }
  const deadlineMs = options.deadlineMs ?? nsightDeadlineMs;
  const deadline = Date.now() + deadlineMs;
  const checkDeadline = () => {
    if (Date.now() <= deadline) return;
    throw extractionBoundExceeded(`Nsight Systems export: reading took longer than ${Math.round(deadlineMs / 1000)} s.`, {
      details: { deadline_ms: deadlineMs },
      remediation: ["Export a shorter capture range (nsys profile --capture-range, or nsys export of a narrower report)."],
    });
  };
  try {
    return importOpen(database, sink, checkDeadline);
  } catch (error) {
    if (error instanceof FlameoxError) throw error;
    throw parseFailed(String(error).slice(0, 500));
  } finally {
    database.close();
  }
}

/** One table's rows as events, one at a time, with the rows it had to set right or leave out counted. */
class TableReader {
  head: PendingEvent | null = null;
  reversed = 0;
  outOfRange = 0;
  private readonly rows: Iterator<Record<string, unknown>>;

  constructor(
    database: Database,
    readonly spec: TableSpec,
    readonly actual: string,
    private readonly available: Set<string>,
    private readonly strings: Map<number, string>,
  ) {
    this.rows = database.query<Record<string, unknown>, []>(`select * from "${actual}" order by start`).iterate();
    this.advance();
  }

  advance(): void {
    for (let next = this.rows.next(); !next.done; next = this.rows.next()) {
      const row = next.value;
      const start = Number(row.start);
      const end = Number(row.end);
      if (!Number.isFinite(start) || !Number.isFinite(end)) throw parseFailed(`${this.spec.table} has a row without numeric start/end`);
      if (Math.abs(start) > largestTimestampNs || Math.abs(end) > largestTimestampNs) {
        this.outOfRange++;
        continue;
      }
      if (end < start) this.reversed++;
      this.head = {
        parent_id: null,
        depth: 0,
        category: this.spec.category,
        ts_ns: start,
        dur_ns: Math.max(0, end - start),
        pid: null,
        tid: null,
        args: null,
        correlation: null,
        device: null,
        stream: null,
        phase: "X",
        ...this.spec.build(row, this.available, this.strings),
      };
      return;
    }
    this.head = null;
  }

  limitations(): string[] {
    const notes: string[] = [];
    if (this.reversed > 0)
      notes.push(`${this.reversed} row(s) of ${this.spec.table} end before they start; they are kept with duration 0.`);
    if (this.outOfRange > 0)
      notes.push(`${this.outOfRange} row(s) of ${this.spec.table} have timestamps beyond 2^62 ns and were left out.`);
    return notes;
  }
}

type Opened = { readers: TableReader[]; observed: string[]; limitations: string[] };

/** Opens a reader per table present (with start/end columns); the graph trace only when runtime rows do not already hold graph launches. */
function openReaders(database: Database, tables: Map<string, string>, strings: Map<number, string>): Opened {
  const opened: Opened = { readers: [], observed: [], limitations: [] };
  const open = (spec: TableSpec) => {
    const actual = tables.get(spec.table.toLowerCase());
    if (!actual) {
      opened.limitations.push(`No ${spec.table} table in this export.`);
      return;
    }
    const available = columnsOf(database, actual);
    if (!available.has("start") || !available.has("end")) {
      opened.limitations.push(`${spec.table} lacks start/end columns and was skipped.`);
      return;
    }
    opened.observed.push(actual);
    opened.readers.push(new TableReader(database, spec, actual, available, strings));
  };
  for (const spec of eventTables) open(spec);
  const graphTable = tables.get(graphSpec.table.toLowerCase());
  // Graph launches appear both as a runtime call and as a graph-trace row; count them once.
  if (graphTable && !runtimeHasGraphLaunch(database, tables.get(runtimeSpec.table.toLowerCase())!, strings)) open(graphSpec);
  else if (graphTable) {
    opened.observed.push(graphTable);
    opened.limitations.push("Graph launches are counted from the runtime API rows; the graph-trace rows duplicate them.");
  }
  return opened;
}

function runtimeHasGraphLaunch(database: Database, runtime: string, strings: Map<number, string>): boolean {
  const available = columnsOf(database, runtime);
  const idColumn = pick(available, "nameId", "textId");
  const column = idColumn ?? pick(available, "name", "text");
  if (!column) return false;
  for (const row of database.query<{ value: unknown }, []>(`select distinct "${column}" as value from "${runtime}"`).iterate()) {
    const name = idColumn ? (strings.get(Number(row.value)) ?? "") : String(row.value ?? "");
    if (
      name
        .toLowerCase()
        .replace(/[^a-z0-9]/g, "")
        .includes("graphlaunch")
    )
      return true;
  }
  return false;
}

/** Kernels whose correlation id matches a runtime or driver launch. */
function correlatedKernels(database: Database, tables: Map<string, string>): number {
  const kernel = tables.get(kernelSpec.table.toLowerCase())!;
  if (!columnsOf(database, kernel).has("correlationId")) return 0;
  const launches = ["CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER"].flatMap((name) => {
    const actual = tables.get(name.toLowerCase());
    const column = actual ? pick(columnsOf(database, actual), "correlationId", "correlation") : null;
    return actual && column ? [`select "${column}" from "${actual}"`] : [];
  });
  if (launches.length === 0) return 0;
  const row = database
    .query<{ count: number }, []>(
      `select count(*) as count from "${kernel}" where "correlationId" is not null and "correlationId" in (${launches.join(" union ")})`,
    )
    .get();
  return row?.count ?? 0;
}

type MergeStatistics = {
  events: number;
  counts: Record<string, number>;
  streams: Set<string>;
  devices: Set<string>;
  kernels: Map<string, { name: string; count: number; totalNs: number }>;
};

function precedes(left: PendingEvent, right: PendingEvent): boolean {
  return (left.ts_ns - right.ts_ns || (left.category ?? "").localeCompare(right.category ?? "") || left.name.localeCompare(right.name)) < 0;
}

/** Emits every table's events in timestamp order (category, then name, break ties) and tallies them. */
function mergeInto(sink: EvidenceSink, readers: TableReader[], checkDeadline: () => void): MergeStatistics {
  const statistics: MergeStatistics = { events: 0, counts: {}, streams: new Set(), devices: new Set(), kernels: new Map() };
  for (const reader of readers) statistics.counts[reader.spec.category] = 0;
  for (;;) {
    let first: TableReader | null = null;
    for (const reader of readers) if (reader.head && (!first || precedes(reader.head, first.head!))) first = reader;
    if (!first) return statistics;
    const event = first.head!;
    first.advance();
    sink.traceEvent({ event_id: statistics.events++, ...event });
    const category = event.category as string;
    statistics.counts[category] = (statistics.counts[category] ?? 0) + 1;
    if (event.stream !== null) statistics.streams.add(event.stream);
    if (event.device !== null) statistics.devices.add(event.device);
    if (category === "kernel") {
      const entry = statistics.kernels.get(event.name) ?? { name: event.name, count: 0, totalNs: 0 };
      entry.count += 1;
      entry.totalNs += event.dur_ns ?? 0;
      statistics.kernels.set(event.name, entry);
    }
    if (statistics.events % 4096 === 0) checkDeadline();
  }
}

function importOpen(database: Database, sink: EvidenceSink, checkDeadline: () => void): NsightSummary {
  const tables = realTables(database);
  if (!tables.has(runtimeSpec.table.toLowerCase()) || !tables.has(kernelSpec.table.toLowerCase()))
    throw parseFailed("the CUDA runtime and kernel tables are required (trace with --trace=cuda)");
  const strings = readStrings(database, tables.get("stringids") ?? null, checkDeadline);
  const opened = openReaders(database, tables, strings);
  const statistics = mergeInto(sink, opened.readers, checkDeadline);
  return {
    eventCount: statistics.events,
    counts: statistics.counts,
    correlatedKernels: correlatedKernels(database, tables),
    streams: [...statistics.streams].sort(),
    devices: [...statistics.devices].sort(),
    topKernels: [...statistics.kernels.values()].sort(
      (left, right) => right.totalNs - left.totalNs || right.count - left.count || left.name.localeCompare(right.name),
    ),
    observedTables: opened.observed,
    limitations: [
      "The SQLite export is authoritative; its clock is Nsight's own, not aligned with other captures.",
      ...opened.limitations,
      ...opened.readers.flatMap((reader) => reader.limitations()),
    ],
  };
}
