import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EvidenceBundleWriter, placeBundle } from "../../../src/store/evidence-bundle.ts";
import { evidenceEngine } from "../../../src/store/evidence-query.ts";
import { initializeWorkspace, type Workspace } from "../../../src/store/workspace.ts";

// Real DuckDB over real Parquet bundles on a shared 2-core machine.
setDefaultTimeout(60_000);

const root = mkdtempSync(join(tmpdir(), "flameox-engine-"));
const { workspace } = initializeWorkspace({ projectRoot: root, workspaceRoot: join(root, ".diagnostics") }, "");

afterAll(() => {
  workspace.close();
  rmSync(root, { recursive: true, force: true });
});

/** A bundle placed in evidence/ (as the publishing transaction places it) of one stack of `weight` samples on function `name`. */
async function bundle(space: Workspace, name: string, weight: number): Promise<string> {
  const writer = new EvidenceBundleWriter(space, { runId: `run-${name}`, artifactId: `artifact-${name}` });
  writer.frame({ frame_key: `f_${name}`, function: name, file: "app.py", line: 1, module: null, language: "python" });
  writer.stack({ thread: "main", process: null, frame_keys: [`f_${name}`], weight, unit: "samples", sample_count: weight });
  const finished = await writer.finish();
  space.state.write(() => placeBundle(space, finished.bundleId, finished.folder));
  return finished.bundleId;
}

const totalSql = "SELECT sum(weight) AS total, count(*) AS stacks FROM stacks";

test("a view is opened once per bundle set and kept: the same set again is warm, a new set (a publication) gets its own", async () => {
  const engine = evidenceEngine(workspace);
  expect(evidenceEngine(workspace)).toBe(engine);
  const first = await bundle(workspace, "first", 3);
  const before = engine.viewsOpened;
  const read = (ids: string[]) => engine.use(ids, (view) => view.rows<{ total: number; stacks: bigint }>(totalSql));
  expect((await read([first]))[0]!.total).toBe(3);
  expect((await read([first]))[0]!.total).toBe(3);
  expect(engine.viewsOpened).toBe(before + 1);
  const second = await bundle(workspace, "second", 4);
  expect((await read([first, second]))[0]!.total).toBe(7);
  expect(engine.viewsOpened).toBe(before + 2);
  // The first set is still open and unchanged.
  expect((await read([first]))[0]!.total).toBe(3);
  expect(engine.viewsOpened).toBe(before + 2);
});

test("a relation is kept per view and read back with bound values; calls on one view run in order", async () => {
  const engine = evidenceEngine(workspace);
  const id = await bundle(workspace, "relation", 5);
  await engine.use([id], async (view) => {
    const select = (name: string) => `SELECT total + $1 AS shifted FROM ${name}`;
    expect((await view.rowsFrom<{ shifted: number }>(totalSql, select, [1]))[0]!.shifted).toBe(6);
    expect((await view.rowsFrom<{ shifted: number }>(totalSql, select, [2]))[0]!.shifted).toBe(7);
    // Calls on one view run one at a time, in order, whatever their number.
    const many = await Promise.all(Array.from({ length: 20 }, (_, index) => view.rowsFrom<{ shifted: number }>(totalSql, select, [index])));
    expect(many.map((rows) => rows[0]!.shifted)).toEqual(Array.from({ length: 20 }, (_, index) => index + 5));
  });
});

test("a fixed question is asked of DuckDB once per view and its answer shared, frozen; another bundle set asks again", async () => {
  const engine = evidenceEngine(workspace);
  const id = await bundle(workspace, "fixed", 6);
  const select = (name: string) => `SELECT total FROM ${name}`;
  const { first, again, asked } = await engine.use([id], async (view) => {
    const before = view.queriesRun;
    const first = await view.fixedRowsFrom<{ total: number }>(totalSql, select);
    const again = await view.fixedRowsFrom<{ total: number }>(totalSql, select);
    return { first, again, asked: view.queriesRun - before };
  });
  expect(first[0]!.total).toBe(6);
  expect(again).toBe(first);
  expect(asked).toBe(1);
  expect(Object.isFrozen(first)).toBe(true);
  expect(Object.isFrozen(first[0])).toBe(true);
  // A publication makes a new bundle set: its view has its own answer.
  const other = await bundle(workspace, "fixed-other", 2);
  expect((await engine.use([id, other], (view) => view.fixedRowsFrom<{ total: number }>(totalSql, select)))[0]!.total).toBe(8);
});

test("past the cache size the least recently used views close, but never under a call that holds one", async () => {
  const engine = evidenceEngine(workspace);
  const ids = await Promise.all(Array.from({ length: 10 }, (_, index) => bundle(workspace, `many${index}`, index + 1)));
  let release: () => void = () => {};
  const held = engine.use([ids[0]!], async (view) => {
    await new Promise<void>((resolve) => {
      release = resolve;
    });
    return view.rows<{ total: number }>(totalSql);
  });
  for (const id of ids.slice(1)) await engine.use([id], (view) => view.rows(totalSql));
  const opened = engine.viewsOpened;
  release();
  // The held view was evicted while in use; its call still completes on its own connection.
  expect((await held)[0]!.total).toBe(1);
  // Asking for it again opens it anew; the most recent ones are still warm.
  await engine.use([ids[0]!], (view) => view.rows(totalSql));
  await engine.use([ids[9]!], (view) => view.rows(totalSql));
  expect(engine.viewsOpened).toBe(opened + 1);
});

test("closing the workspace closes its engine; reopening gives a fresh one", async () => {
  const id = await bundle(workspace, "closing", 2);
  const engine = evidenceEngine(workspace);
  await engine.use([id], (view) => view.rows(totalSql));
  workspace.close();
  await expect(engine.use([id], (view) => view.rows(totalSql))).rejects.toThrow("closed");
  const fresh = evidenceEngine(workspace);
  expect(fresh).not.toBe(engine);
  expect((await fresh.use([id], (view) => view.rows<{ total: number }>(totalSql)))[0]!.total).toBe(2);
});
