import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { StackRow, TraceEventRow } from "../../../src/domain/evidence.ts";
import { loadDuckdb } from "../../../src/store/duckdb.ts";
import { EvidenceBundleWriter, bundleFiles, placeBundle, warmBundleEngines } from "../../../src/store/evidence-bundle.ts";
import { initializeWorkspace } from "../../../src/store/workspace.ts";

function workspace() {
  const root = mkdtempSync(join(tmpdir(), "flameox-bundle-"));
  const { workspace } = initializeWorkspace({ projectRoot: root, workspaceRoot: join(root, ".diagnostics") }, "");
  return { workspace, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

async function rows(path: string, sql: string): Promise<Record<string, unknown>[]> {
  const duckdb = await loadDuckdb();
  const instance = await duckdb.DuckDBInstance.create(":memory:");
  const connection = await instance.connect();
  try {
    const reader = await connection.runAndReadAll(sql.replaceAll("$file", `'${path}'`));
    return reader.getRowObjectsJson() as Record<string, unknown>[];
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

const awkward = ["", "a\u001fb", "line\nbreak", "\u0003marker", "\u0002", "comma,here", "ünïcode ✓", 'tab\tand "quotes"'];

function traceRow(id: number, name: string): TraceEventRow {
  return {
    event_id: id,
    parent_id: id > 1 ? id - 1 : null,
    depth: id - 1,
    name,
    category: name === "" ? null : name,
    ts_ns: 1_695_835_542_481_129_000 + id,
    dur_ns: 10,
    pid: "p",
    tid: name,
    args: JSON.stringify({ name }),
    correlation: null,
    device: null,
    stream: null,
    phase: "X",
  };
}

describe("EvidenceBundleWriter", () => {
  test("every string survives the delimited staging text exactly; only Parquet files are published", async () => {
    const { workspace: space, cleanup } = workspace();
    try {
      const writer = new EvidenceBundleWriter(space, { runId: "run-1", artifactId: "artifact-1" });
      awkward.forEach((name, index) => writer.traceEvent(traceRow(index + 1, name)));
      const keys = awkward.map((_, index) => `f_${index}`);
      awkward.forEach((name, index) =>
        writer.frame({ frame_key: keys[index]!, function: name, file: name || null, line: index, module: null, language: "trace" }),
      );
      writer.stack({ thread: "a,b", process: "\u0003", frame_keys: keys, weight: 1.5, unit: "ns", sample_count: 2 });
      writer.stack({ thread: null, process: null, frame_keys: ["odd,key", "x"], weight: 3, unit: "samples", sample_count: 1 });
      const finished = await writer.finish();
      expect(readdirSync(finished.folder).sort()).toEqual(["frames.parquet", "stacks.parquet", "trace_events.parquet"]);
      expect(existsSync(join(finished.folder, "..", `${finished.bundleId}.scratch`))).toBe(false);
      // Finished bundles wait in staging; only the publishing transaction moves them into evidence/.
      expect(bundleFiles(space, finished.bundleId)).toEqual({});
      space.state.write(() => placeBundle(space, finished.bundleId, finished.folder));
      const files = bundleFiles(space, finished.bundleId);
      const events = await rows(
        files.trace_events!,
        "SELECT name, tid, category, args, ts_ns::VARCHAR AS ts, run_id FROM read_parquet($file) ORDER BY event_id",
      );
      expect(events.map((row) => row.name)).toEqual(awkward);
      expect(events.map((row) => row.tid)).toEqual(awkward);
      expect(events.map((row) => JSON.parse(row.args as string).name)).toEqual(awkward);
      expect(events[0]).toMatchObject({ category: null, run_id: "run-1" });
      const frames = await rows(files.frames!, "SELECT function, file FROM read_parquet($file) ORDER BY line");
      expect(frames.map((row) => row.function)).toEqual(awkward);
      expect(frames[0]!.file).toBeNull();
      const stacks = await rows(
        files.stacks!,
        "SELECT thread, process, frame_keys, weight, sample_count FROM read_parquet($file) ORDER BY weight",
      );
      expect(stacks).toEqual([
        { thread: "a,b", process: "\u0003", frame_keys: keys, weight: 1.5, sample_count: "2" },
        { thread: null, process: null, frame_keys: ["odd,key", "x"], weight: 3, sample_count: "1" },
      ]);
    } finally {
      cleanup();
    }
  });

  test("writers that take instances made ahead by warmBundleEngines, and one past them, each write their own bundle", async () => {
    const { workspace: space, cleanup } = workspace();
    try {
      warmBundleEngines(2);
      const writers = [1, 2, 3].map((index) => {
        const writer = new EvidenceBundleWriter(space, { runId: `run-${index}`, artifactId: `artifact-${index}` });
        for (let id = 1; id <= index; id += 1) writer.traceEvent(traceRow(id, `event ${index}.${id}`));
        writer.stack({ thread: `t${index}`, process: null, frame_keys: ["f"], weight: index, unit: "ns", sample_count: index });
        return writer;
      });
      const finished = await Promise.all(writers.map((writer) => writer.finish()));
      for (const [index, bundle] of finished.entries()) {
        space.state.write(() => placeBundle(space, bundle.bundleId, bundle.folder));
        const files = bundleFiles(space, bundle.bundleId);
        const events = await rows(files.trace_events!, "SELECT name, run_id FROM read_parquet($file) ORDER BY event_id");
        expect(events).toEqual(
          Array.from({ length: index + 1 }, (_, id) => ({ name: `event ${index + 1}.${id + 1}`, run_id: `run-${index + 1}` })),
        );
        expect(await rows(files.stacks!, "SELECT thread, weight FROM read_parquet($file)")).toEqual([
          { thread: `t${index + 1}`, weight: index + 1 },
        ]);
        expect(existsSync(join(bundle.folder, "..", `${bundle.bundleId}.scratch`))).toBe(false);
      }
    } finally {
      cleanup();
    }
  });

  test("repeated stacks are summed and relabelled when an extractor flushed them", async () => {
    const { workspace: space, cleanup } = workspace();
    try {
      const writer = new EvidenceBundleWriter(space, { runId: "run-1", artifactId: "artifact-1" });
      const stack = (thread: string, weight: number): StackRow => ({
        thread,
        process: null,
        frame_keys: ["f_a", "f_b"],
        weight,
        unit: "ns",
        sample_count: 1,
      });
      writer.stack(stack("1\u00002", 5));
      writer.stack(stack("1\u00003", 7));
      writer.stack(stack("1\u00002", 6));
      writer.mergeRepeatedStacks([
        { key: "1\u00002", thread: "MainThread (pid 1, tid 2)", process: "trainer" },
        { key: "1\u00003", thread: "worker", process: null },
      ]);
      const finished = await writer.finish();
      space.state.write(() => placeBundle(space, finished.bundleId, finished.folder));
      const stacks = await rows(
        bundleFiles(space, finished.bundleId).stacks!,
        "SELECT thread, process, weight, sample_count FROM read_parquet($file) ORDER BY weight",
      );
      expect(stacks).toEqual([
        { thread: "worker", process: null, weight: 7, sample_count: "1" },
        { thread: "MainThread (pid 1, tid 2)", process: "trainer", weight: 11, sample_count: "2" },
      ]);
    } finally {
      cleanup();
    }
  });

  test("restart forgets every row; the staging bound refuses an input that expands without limit", async () => {
    const { workspace: space, cleanup } = workspace();
    try {
      const writer = new EvidenceBundleWriter(space, { runId: "run-1", artifactId: "artifact-1" });
      for (let index = 1; index <= 1000; index++) writer.traceEvent(traceRow(index, "before"));
      writer.stack({ thread: null, process: null, frame_keys: ["f_a"], weight: 1, unit: "ns", sample_count: 1 });
      await writer.restart();
      writer.traceEvent(traceRow(1, "after"));
      const finished = await writer.finish();
      expect(finished.tables).toEqual({ trace_events: 1 });
      space.state.write(() => placeBundle(space, finished.bundleId, finished.folder));
      const events = await rows(bundleFiles(space, finished.bundleId).trace_events!, "SELECT name FROM read_parquet($file)");
      expect(events).toEqual([{ name: "after" }]);

      const bounded = new EvidenceBundleWriter(space, { runId: "run-2", artifactId: "artifact-2" });
      bounded.limitStagingBytes(0);
      const frameKeys = Array.from({ length: 2000 }, (_, index) => `f_${"0".repeat(40)}${index}`);
      let refused: unknown = null;
      try {
        for (let index = 0; index < 100_000; index++)
          bounded.stack({ thread: null, process: null, frame_keys: frameKeys, weight: 1, unit: "ns", sample_count: 1 });
      } catch (error) {
        refused = error;
      }
      expect((refused as { code?: string } | null)?.code).toBe("ARTIFACT_TOO_LARGE");
      bounded.abandon();
    } finally {
      cleanup();
    }
  });

  test("a value that does not fit its column is ARTIFACT_PARSE_FAILED naming table and column, never the staged line or a path", async () => {
    const { workspace: space, cleanup } = workspace();
    try {
      for (const [table, write] of [
        ["trace_events", (writer: EvidenceBundleWriter) => writer.traceEvent({ ...traceRow(1, "absurd"), ts_ns: 1e30 })],
        [
          "measurements",
          (writer: EvidenceBundleWriter) =>
            writer.measurement({
              name: "m",
              value: 1,
              unit: "ns",
              aggregation: null,
              is_warmup: false,
              worker: null,
              run_index: 1e30,
              value_index: null,
              phase: null,
              dimensions: null,
            }),
        ],
      ] as const) {
        const writer = new EvidenceBundleWriter(space, { runId: "run-1", artifactId: "artifact-1" });
        write(writer);
        const error = (await writer.finish().catch((caught: unknown) => caught)) as { code: string; message: string; details: unknown };
        expect(error.code).toBe("ARTIFACT_PARSE_FAILED");
        expect(error.message).toContain(table);
        // DuckDB names the column for the delimited staging text (trace events), not for NDJSON.
        expect(error.details).toEqual({ table, column: table === "trace_events" ? "ts_ns" : null });
        expect(error.message).not.toContain(space.root);
        expect(error.message).not.toContain("1000000000000000000000000000000");
        expect(error.message).not.toContain("Original Line");
      }
      expect(readdirSync(space.path("evidence"))).toEqual([]);
    } finally {
      cleanup();
    }
  });
});
