import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { EvidenceSink, EvidenceTable, FrameRow, MeasurementRow, ObservationRow, StackRow, TraceEventRow } from "../domain/evidence.ts";
import { artifactParseFailed, evidenceSchemaMismatch, extractionBoundExceeded, FlameoxError } from "../domain/errors.ts";
import { FrameKeySet } from "../domain/frame-key-set.ts";
import { syncDirectory, syncFile } from "./atomic-file.ts";
import { crashPoint } from "./crash-points.ts";
import { retireBundleEngine, takeBundleEngine } from "./evidence-bundle-engines.ts";
import {
  decodedSelect,
  delimitedSource,
  escapeSql,
  frameLine,
  mergedStacksSelect,
  stackLabelLine,
  stackLine,
} from "./evidence-bundle-encoding.ts";
import { type Engine, TraceEventsWriter } from "./evidence-bundle-trace-events.ts";
import { putStackRow, stackRowBytesBound } from "./evidence-bundle-row-bytes.ts";
import { DelimitedWriter, NdjsonWriter } from "./evidence-bundle-writers.ts";
import { evidenceColumns, evidenceTables } from "./evidence-schema.ts";
import { processStagingPath } from "./process-staging.ts";
import type { Workspace } from "./workspace.ts";

export { escapeSql };
export { warmBundleEngines } from "./evidence-bundle-engines.ts";

/** The final labels of the stacks rows whose `thread` holds `key` (see mergeRepeatedStacks). */
export type StackLabel = { key: string; thread: string | null; process: string | null };

/** Staging bytes any extraction may use, however small its input. */
export const minimumStagingBytes = 256 << 20;
/** Below this much staged text a bundle's extractor left little garbage: a full collection would cost more than it frees. */
const collectGarbageAboveBytes = 16 << 20;

type SmallTable = "measurements" | "observations";

/**
 * Collects one extraction's rows in this process's staging and turns them into Parquet through
 * DuckDB. The finished folder stays in staging until the publishing transaction moves it into
 * evidence/ (placeBundle) and registers it, so evidence/ never holds a bundle no committed row
 * names except across a crash. Intermediate files (delimited
 * text, the trace_events pipe, an extractor's sorted runs) live in a scratch folder beside the
 * bundle folder, so the bundle folder only ever holds Parquet files.
 */
export class EvidenceBundleWriter implements EvidenceSink {
  readonly bundleId: string;
  private readonly stagingFolder: string;
  private readonly scratchFolder: string;
  private small = new Map<SmallTable, NdjsonWriter>();
  private frames: DelimitedWriter<FrameRow> | undefined;
  private stacks: DelimitedWriter<StackRow> | undefined;
  private traceEvents: TraceEventsWriter | undefined;
  private readonly seenFrames = new FrameKeySet();
  private stackLabels: StackLabel[] | null = null;
  /** Rows of the stacks table after the merge of flushed stacks (null until it ran). */
  private mergedStacks: number | null = null;
  private stagingLimit = Number.POSITIVE_INFINITY;
  private engine: Engine | undefined;
  private readonly engineReady: Promise<Engine>;
  /** Its instance was handed to retireBundleEngine (once: by finish, or by abandon). */
  private retired = false;

  constructor(
    workspace: Workspace,
    private readonly context: { runId: string; artifactId: string },
  ) {
    this.bundleId = `bundle-${crypto.randomUUID()}`;
    this.stagingFolder = processStagingPath(workspace, this.bundleId);
    this.scratchFolder = processStagingPath(workspace, `${this.bundleId}.scratch`);
    mkdirSync(this.stagingFolder, { recursive: true });
    mkdirSync(this.scratchFolder, { recursive: true });
    // DuckDB loads while the extractor runs, so trace_events can stream into it (or was made ahead by
    // warmBundleEngines). One thread: the extractor holds the other core, and a second DuckDB thread
    // mostly adds buffered row groups.
    const spill = join(this.scratchFolder, "duckdb");
    const taken = takeBundleEngine();
    this.engineReady = (async () => {
      const engine = await taken;
      // Set before any statement of this bundle runs, so nothing can have spilled elsewhere.
      await engine.connection.run(`SET temp_directory = '${escapeSql(spill)}'`);
      return engine;
    })();
    this.engineReady.then(
      (engine) => {
        this.engine = engine;
      },
      // The failure surfaces where engineReady is awaited; this handler only keeps it from being unhandled meanwhile.
      () => undefined,
    );
  }

  /** Where an extractor may keep temporary files (removed with the bundle's staging). */
  scratchDirectory(): string {
    return this.scratchFolder;
  }

  /** Refuses (ARTIFACT_TOO_LARGE) any row that would take staging text past `bytes`. */
  limitStagingBytes(bytes: number): void {
    this.stagingLimit = Math.max(minimumStagingBytes, bytes);
  }

  /**
   * The stacks rows may repeat a stack, and their `thread` is a key of `labels`: the Parquet
   * conversion sums repeats and writes the labels (extractors that flush stacks to bound memory).
   */
  mergeRepeatedStacks(labels: StackLabel[]): void {
    this.stackLabels = labels;
  }

  frame(row: FrameRow): void {
    if (!this.seenFrames.add(row.frame_key)) return;
    this.frames ??= new DelimitedWriter(join(this.scratchFolder, "frames.txt"), frameLine);
    this.frames.write(row);
    this.checkStaging(this.frames);
  }

  stack(row: StackRow): void {
    this.stacks ??= new DelimitedWriter(join(this.scratchFolder, "stacks.txt"), stackLine, {
      bound: stackRowBytesBound,
      put: putStackRow,
    });
    this.stacks.write(row);
    this.checkStaging(this.stacks);
  }

  traceEvent(row: TraceEventRow): void {
    this.traceEvents ??= new TraceEventsWriter(
      this.scratchFolder,
      join(this.stagingFolder, "trace_events.parquet"),
      this.context,
      () => this.engine,
    );
    this.traceEvents.write(row);
    if ((this.traceEvents.count & 0xffff) === 0) this.checkStaging(null);
  }

  /** Back-pressure for streaming extractors: resolves once the trace_events stream has caught up. */
  async drain(): Promise<void> {
    await this.traceEvents?.drain();
  }

  measurement(row: MeasurementRow): void {
    this.smallWriter("measurements").write(row);
  }

  observation(row: ObservationRow): void {
    this.smallWriter("observations").write(row);
  }

  /** Forgets every row written so far, so an extractor can start over (a trace it must re-order). */
  async restart(): Promise<void> {
    const traceEvents = this.traceEvents;
    this.traceEvents = undefined;
    traceEvents?.abandon();
    await traceEvents?.release();
    for (const writer of [this.frames, this.stacks, ...this.small.values()]) writer?.close();
    this.frames = undefined;
    this.stacks = undefined;
    this.small = new Map();
    this.seenFrames.clear();
    this.stackLabels = null;
    this.mergedStacks = null;
    for (const name of readdirSync(this.stagingFolder)) rmSync(join(this.stagingFolder, name), { recursive: true, force: true });
    for (const name of readdirSync(this.scratchFolder)) rmSync(join(this.scratchFolder, name), { recursive: true, force: true });
  }

  rowCounts(): Record<string, number> {
    const counts: Record<string, number> = {};
    if (this.frames) counts.frames = this.frames.count;
    if (this.stacks) counts.stacks = this.mergedStacks ?? this.stacks.count;
    if (this.traceEvents) counts.trace_events = this.traceEvents.count;
    for (const [table, writer] of this.small) counts[table] = writer.count;
    return Object.fromEntries(evidenceTables.filter((table) => table in counts).map((table) => [table, counts[table] as number]));
  }

  /** Staging text → Parquet (typed columns) and one round of fsyncs; the folder stays in staging until placeBundle. */
  async finish(): Promise<{ bundleId: string; tables: Record<string, number>; folder: string }> {
    for (const writer of [this.frames, this.stacks, ...this.small.values()]) writer?.close();
    // A big extractor's garbage goes before DuckDB's heaviest phase (merging stacks), not after; a
    // small bundle (a capture's runtime measurements, a short profile) skips the full collection.
    if (this.stagedBytes() > collectGarbageAboveBytes) Bun.gc(true);
    let engine: Engine;
    try {
      engine = await this.engineReady;
    } catch (error) {
      throw parquetFailed(error, null);
    }
    const { connection } = engine;
    const written: string[] = [];
    let table: EvidenceTable | null = null;
    try {
      // The streaming COPY holds the connection until its pipe ends, so it finishes first.
      if (this.traceEvents && this.traceEvents.count > 0) {
        table = "trace_events";
        await this.traceEvents.finish(engine);
        written.push(join(this.stagingFolder, "trace_events.parquet"));
      }
      // The extractor is done: the conversions may have both cores, in 512 MB (read_json's buffers
      // need that much). The merge of flushed stacks, one group per distinct stack, gets 256 MB: past
      // that it spills to the scratch folder, so the peak holds flat as distinct stacks grow.
      table = null;
      await connection.run("SET threads = 2");
      for (const sql of this.conversions()) {
        table = sql.table;
        const merging = sql.table === "stacks" && this.stackLabels !== null;
        await connection.run(`SET memory_limit = '${merging ? "256MB" : "512MB"}'`);
        const copied = await connection.run(sql.statement);
        // Flushed stacks were written once per flush; the merge sums repeats, so the table holds fewer rows.
        if (merging) this.mergedStacks = Number(copied.rowsChanged);
        written.push(sql.target);
      }
    } catch (error) {
      this.traceEvents?.abandon();
      await this.traceEvents?.release();
      this.retire(engine);
      throw parquetFailed(error, table);
    }
    // Every file's data reaches the disk in one round (the kernel overlaps the writebacks), then their
    // entries in the folder. Syncing the folder here rather than in the placing transaction measured
    // faster in a capture: this fsync commits the filesystem journal the files' creation and the scratch
    // folder's removal left, off the transaction. Each COPY has completed its file, so the instance is
    // closed later, off the path to publication.
    this.retire(engine);
    await Promise.all(written.map(syncFile));
    syncDirectory(this.stagingFolder);
    crashPoint("bundle_finished");
    return { bundleId: this.bundleId, tables: this.rowCounts(), folder: this.stagingFolder };
  }

  abandon(): void {
    for (const writer of [this.frames, this.stacks, ...this.small.values()]) {
      try {
        writer?.close();
      } catch {
        // Already closed or never opened.
      }
    }
    const traceEvents = this.traceEvents;
    traceEvents?.abandon();
    const released = traceEvents?.release();
    rmSync(this.stagingFolder, { recursive: true, force: true });
    if (this.retired) return;
    this.retired = true;
    // Retire DuckDB once a streaming COPY has ended, and with it the scratch that COPY may still be reading.
    void (async () => {
      await released?.catch(() => undefined);
      const engine = await this.engineReady.catch(() => null);
      retireBundleEngine(engine, this.scratchFolder);
    })();
  }

  /** Removes the scratch folder and hands the instance on to be closed a little later (see retireBundleEngine). */
  private retire(engine: Engine): void {
    if (this.retired) return;
    this.retired = true;
    retireBundleEngine(engine, this.scratchFolder);
  }

  private smallWriter(table: SmallTable): NdjsonWriter {
    let writer = this.small.get(table);
    if (!writer) {
      writer = new NdjsonWriter(join(this.scratchFolder, `${table}.ndjson`));
      this.small.set(table, writer);
    }
    return writer;
  }

  private stagedBytes(): number {
    return (
      (this.frames?.written ?? 0) +
      (this.stacks?.written ?? 0) +
      (this.traceEvents?.stagedBytes ?? 0) +
      [...this.small.values()].reduce((sum, small) => sum + small.bytes, 0)
    );
  }

  private checkStaging(writer: DelimitedWriter<FrameRow> | DelimitedWriter<StackRow> | null): void {
    if (writer !== null && (writer.count & 0x3ff) !== 0) return;
    if (this.stagedBytes() > this.stagingLimit) throw stagingExceeded(this.stagingLimit);
  }

  /** The COPY statements of the tables staged as files. */
  private conversions(): { statement: string; target: string; table: EvidenceTable }[] {
    const identity = `'${escapeSql(this.context.runId)}' AS run_id, '${escapeSql(this.context.artifactId)}' AS artifact_id`;
    const copy = (table: EvidenceTable, select: string) => {
      const target = join(this.stagingFolder, `${table}.parquet`);
      return {
        statement: `COPY (${select}) TO '${escapeSql(target)}' (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1)`,
        target,
        table,
      };
    };
    const statements: { statement: string; target: string; table: EvidenceTable }[] = [];
    if (this.frames && this.frames.count > 0) {
      statements.push(copy("frames", decodedSelect("frames", delimitedSource("frames", this.frames.path))));
    }
    if (this.stacks && this.stacks.count > 0) statements.push(copy("stacks", this.stacksSelect(identity, this.stacks.path)));
    for (const [table, writer] of this.small) {
      if (writer.count === 0) continue;
      const columns = Object.keys(evidenceColumns[table]).map((column) =>
        column === "run_id" || column === "artifact_id" ? "" : `"${column}"`,
      );
      statements.push(copy(table, `SELECT ${identity}, ${columns.filter(Boolean).join(", ")} FROM ${writer.source(table)}`));
    }
    return statements;
  }

  /** Stacks as written, or summed per distinct stack and relabelled when an extractor flushed them. */
  private stacksSelect(identity: string, path: string): string {
    if (this.stackLabels === null) return `SELECT ${identity}, * FROM (${decodedSelect("stacks", delimitedSource("stacks", path))})`;
    const labelsPath = join(this.scratchFolder, "stack-labels.txt");
    writeFileSync(labelsPath, this.stackLabels.map(stackLabelLine).join(""), { mode: 0o600 });
    return mergedStacksSelect(identity, path, labelsPath);
  }
}

function stagingExceeded(limit: number): FlameoxError {
  return extractionBoundExceeded(
    `Extracting this artifact would stage more than ${limit} bytes of evidence text (a bound in proportion to its size).`,
    {
      details: { staging_limit_bytes: limit },
      remediation: [
        "Check that the file is what it claims to be: a small input that expands without bound is refused.",
        "Capture or export a smaller profile or trace and import that.",
      ],
    },
  );
}

/** DuckDB's words for a staged value that does not fit its typed column: the input's fault, not the schema's. */
const conversionFailure = /\b(Conversion Error|Invalid Input Error|Out of Range Error|CSV Error)\b/;

/**
 * A failed Parquet conversion. A value that does not fit its column (an extractor let through a
 * number no clock or size can be) is ARTIFACT_PARSE_FAILED naming the table and column only: DuckDB's
 * own text quotes the staged line and the staging path, neither of which an agent may see.
 */
function parquetFailed(error: unknown, table: EvidenceTable | null): FlameoxError {
  if (error instanceof FlameoxError) return error;
  const text = error instanceof Error ? error.message : String(error);
  if (conversionFailure.test(text)) {
    const named = /converting column "([^"]+)"/.exec(text)?.[1] ?? null;
    const column = table && named && named in evidenceColumns[table] ? named : null;
    return artifactParseFailed(
      `A value read from the artifact does not fit the evidence schema (${table ?? "a table"}${column ? `, column ${column}` : ""}): a number or text outside what the column holds.`,
      {
        details: { table, column },
        remediation: ["Check that the file is a complete, genuine export of its format; a value out of every plausible range is refused."],
        cause: error,
      },
    );
  }
  const firstLine = (text.split("\n")[0] ?? "").replace(/(?:\/[^\s'"/]+)+\/?/g, "<path>");
  return evidenceSchemaMismatch(`Writing evidence Parquet failed: ${firstLine}`.slice(0, 500), {
    remediation: ["Report this extractor failure; the native artifact is kept and can be extracted again."],
    cause: error,
  });
}

/**
 * Inside the publishing transaction: moves a finished bundle folder (its own entries synced by finish)
 * from staging into evidence/. Its entry in evidence/ is synced before the transaction commits, together
 * with every other folder the transaction placed something in.
 */
export function placeBundle(workspace: Workspace, bundleId: string, stagedFolder: string): string {
  const folder = workspace.path("evidence", bundleId);
  renameSync(stagedFolder, folder);
  workspace.state.syncBeforeCommit(workspace.path("evidence"));
  crashPoint("bundle_placed");
  return folder;
}

/** Parquet files of a published bundle, by table. */
export function bundleFiles(workspace: Workspace, bundleId: string): Partial<Record<EvidenceTable, string>> {
  const folder = workspace.path("evidence", bundleId);
  const files: Partial<Record<EvidenceTable, string>> = {};
  if (!existsSync(folder)) return files;
  for (const name of readdirSync(folder)) {
    if (!name.endsWith(".parquet")) continue;
    const table = name.slice(0, -".parquet".length) as EvidenceTable;
    if (evidenceTables.includes(table) && statSync(join(folder, name)).isFile()) files[table] = join(folder, name);
  }
  return files;
}
