/**
 * The Chrome trace extractor bounds the stacks it holds by flushing them to a sink that merges repeats
 * (the bundle writer sums them in DuckDB when it writes Parquet). This drives that path end to end: the
 * same traces extracted into real bundles with a tiny flush threshold and with none, read back from
 * their Parquet files, and against an in-memory sink that never flushes.
 */
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { extractChromeTrace } from "../../../src/adapters/formats/chrome-trace.ts";
import { MemoryEvidenceSink } from "../../../src/domain/evidence.ts";
import { loadDuckdb } from "../../../src/store/duckdb.ts";
import type { StackRow } from "../../../src/domain/evidence.ts";
import { EvidenceBundleWriter } from "../../../src/store/evidence-bundle.ts";
import { initializeWorkspace } from "../../../src/store/workspace.ts";

// Real DuckDB conversions of real kineto traces, three extractions each, on a shared 2-core machine.
setDefaultTimeout(120_000);

const root = mkdtempSync(join(tmpdir(), "flameox-stack-flush-"));
const { workspace } = initializeWorkspace({ projectRoot: root, workspaceRoot: join(root, ".diagnostics") }, "");
afterAll(() => {
  workspace.close();
  rmSync(root, { recursive: true, force: true });
});

const kineto = join(import.meta.dir, "../../fixtures/formats/kineto");

/**
 * Nested slices under all-distinct step annotations (many distinct stacks, each on two threads), and a
 * data-loading slice between steps whose stack is the same every time (it repeats across flushed parts).
 */
function distinctSteps(steps: number): string {
  const events: string[] = [];
  for (let step = 0; step < steps; step += 1) {
    const start = step * 100;
    for (const tid of [1, 2]) {
      events.push(`{"ph":"X","cat":"user_annotation","name":"ProfilerStep#${step}","pid":7,"tid":${tid},"ts":${start},"dur":90}`);
      events.push(`{"ph":"X","cat":"cpu_op","name":"aten::linear","pid":7,"tid":${tid},"ts":${start + 5},"dur":40}`);
      events.push(`{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":7,"tid":${tid},"ts":${start + 10},"dur":${20 + (step % 7)}}`);
      events.push(`{"ph":"X","cat":"cpu_op","name":"aten::relu","pid":7,"tid":${tid},"ts":${start + 50},"dur":${10 + (step % 3)}}`);
      events.push(`{"ph":"X","cat":"user_annotation","name":"DataLoader","pid":7,"tid":${tid},"ts":${start + 91},"dur":8}`);
      events.push(`{"ph":"X","cat":"cpu_op","name":"aten::copy_","pid":7,"tid":${tid},"ts":${start + 92},"dur":${3 + (step % 2)}}`);
    }
  }
  return `{"traceEvents":[${events.join(",")}]}`;
}

type StackKey = { frame_keys: string[]; thread: string | null; process: string | null; weight: number; unit: string; sample_count: number };

async function parquetRows<Row>(path: string, sql: string): Promise<Row[]> {
  const duckdb = await loadDuckdb();
  const instance = await duckdb.DuckDBInstance.create(":memory:");
  const connection = await instance.connect();
  try {
    return (await connection.runAndReadAll(sql.replaceAll("$file", `'${path}'`))).getRowObjectsJS() as Row[];
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

function ordered<T>(rows: T[]): T[] {
  return rows
    .map((row) => JSON.stringify(row))
    .sort()
    .map((text) => JSON.parse(text) as T);
}

/** The real writer, counting the stack rows it is handed (a flushed stack repeats across parts). */
class CountingWriter extends EvidenceBundleWriter {
  staged = 0;
  override stack(row: StackRow): void {
    this.staged += 1;
    super.stack(row);
  }
}

/** Stacks and frames of one extraction into a real bundle, read back from its Parquet files. */
async function throughBundle(path: string, maxHeldStacks: number) {
  const writer = new CountingWriter(workspace, { runId: "run", artifactId: "artifact" });
  const result = await extractChromeTrace(path, writer, { projectRoot: root, maxHeldStacks });
  const finished = await writer.finish();
  const stacks = await parquetRows<StackKey & { sample_count: bigint }>(
    join(finished.folder, "stacks.parquet"),
    "SELECT frame_keys, thread, process, weight, unit, sample_count FROM read_parquet($file)",
  );
  const frames = await parquetRows<Record<string, unknown>>(
    join(finished.folder, "frames.parquet"),
    "SELECT frame_key, function, file, line, module, language FROM read_parquet($file)",
  );
  rmSync(finished.folder, { recursive: true, force: true });
  return {
    staged: writer.staged,
    tables: finished.tables,
    rows: result.rows,
    stacks: ordered(stacks.map((stack) => ({ ...stack, sample_count: Number(stack.sample_count) }))),
    frames: ordered(frames.map((frame) => ({ ...frame, line: frame.line === null ? null : Number(frame.line) }))),
  };
}

async function inMemory(path: string) {
  const sink = new MemoryEvidenceSink();
  await extractChromeTrace(path, sink, { projectRoot: root });
  return {
    stacks: ordered(
      sink.stacks.map((stack) => ({
        frame_keys: stack.frame_keys,
        thread: stack.thread,
        process: stack.process,
        weight: stack.weight,
        unit: stack.unit,
        sample_count: stack.sample_count,
      })),
    ),
    frames: ordered([...sink.frames.values()].map((frame) => ({ ...frame }))),
  };
}

test("stacks flushed every few distinct stacks and merged by the bundle writer equal the unflushed stacks, row for row", async () => {
  const generated = join(root, "distinct-steps.json");
  writeFileSync(generated, distinctSteps(400));
  const traces = [generated, join(kineto, "rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"), join(kineto, "sampled_rank-0.json.gz")];
  for (const path of traces) {
    const flushed = await throughBundle(path, 3);
    const held = await throughBundle(path, 1_000_000_000);
    const memory = await inMemory(path);
    expect(flushed.stacks.length).toBeGreaterThan(3);
    // The flush happened: rows for the same stack were staged in several parts and summed by the writer.
    expect(flushed.staged).toBeGreaterThan(flushed.stacks.length);
    expect(held.staged).toBe(held.stacks.length);
    // The bundle's row counts (what a receipt reports) are the Parquet's rows, after the merge.
    expect(flushed.tables.stacks).toBe(flushed.stacks.length);
    expect(held.tables.stacks).toBe(held.stacks.length);
    expect(flushed.tables.frames).toBe(flushed.frames.length);
    expect(flushed.stacks).toEqual(held.stacks);
    expect(flushed.frames).toEqual(held.frames);
    expect(flushed.stacks).toEqual(memory.stacks);
    expect(flushed.frames.map((frame) => JSON.stringify(frame))).toEqual(memory.frames.map((frame) => JSON.stringify(frame)));
  }
});
