import { afterEach, expect, test } from "bun:test";
import { DetachedCaptureStore } from "../../../src/store/detached-capture-store.ts";
import { EvidenceRecordStore } from "../../../src/store/evidence-record-store.ts";
import { type RunSet, RunSetStore } from "../../../src/store/run-set-store.ts";
import type { StateDatabase } from "../../../src/store/sqlite.ts";
import { freshState } from "./state.ts";

let state: StateDatabase | undefined;
afterEach(() => state?.close());

test("recorded evidence is content-addressed: recording the same id again returns the first record", () => {
  const fresh = freshState("evidence-records");
  state = fresh.state;
  const store = new EvidenceRecordStore(fresh.source);
  const entry = {
    refType: "comparison" as const,
    refId: "sha256:c1",
    recipe: "compare_run_sets.v1",
    inputs: { a: 1 },
    corpusCommitId: "commit-1",
  };
  const first = store.record({ ...entry, result: { estimate: 1.5 } });
  expect(first).toMatchObject({
    created: true,
    ref_id: "sha256:c1",
    corpus_commit_id: "commit-1",
    resource_uri: "flameox://evidence/comparison/sha256%3Ac1",
  });
  const again = store.record({ ...entry, corpusCommitId: "commit-2", result: { estimate: 9 } });
  expect(again.created).toBe(false);
  expect(again.corpus_commit_id).toBe("commit-1");
  expect(again.result_digest).toBe(first.result_digest);
  expect(store.find("comparison", "sha256:c1")?.result).toEqual({ estimate: 1.5 });
  expect(store.find("analysis", "sha256:c1")).toBeNull();
});

test("a frozen run set is stored once under its content id", () => {
  const fresh = freshState("run-sets");
  state = fresh.state;
  const store = new RunSetStore(fresh.source);
  const runSet: RunSet = {
    schema_version: 1,
    run_set_id: "sha256:set",
    membership_digest: "sha256:members",
    corpus_commit_id: "commit-1",
    created_at: new Date().toISOString(),
    selection: {},
    experiment_id: null,
    members: [
      { order: 0, run_id: "r-1", trial_id: null, experiment_id: null, block_id: null, treatment: null, included: true, reason: null },
    ],
    counts: { members: 1, included: 1, excluded: 0 },
    resource_uri: "",
  };
  store.insertIfAbsent(runSet);
  store.insertIfAbsent({ ...runSet, selection: { changed: true } });
  expect(store.find("sha256:set")?.selection).toEqual({});
  expect(store.find("sha256:other")).toBeNull();
});

test("an idempotency key maps to the plan and run it started", () => {
  const fresh = freshState("detached");
  state = fresh.state;
  const store = new DetachedCaptureStore(fresh.source);
  expect(store.find("key-1")).toBeNull();
  store.insert("key-1", { plan_id: "digest", run_id: "run-1" }, new Date().toISOString());
  expect(store.find("key-1")).toEqual({ plan_id: "digest", run_id: "run-1" });
  expect(() => store.insert("key-1", { plan_id: "other", run_id: "run-2" }, new Date().toISOString())).toThrow();
});

test("a write inside a write joins the outer transaction, so a failure rolls back both", () => {
  const fresh = freshState("nested-writes");
  state = fresh.state;
  const detached = new DetachedCaptureStore(fresh.source);
  expect(() =>
    fresh.state.write(() => {
      detached.insert("key-a", { plan_id: "p", run_id: "r" }, "t");
      detached.insert("key-b", { plan_id: "p", run_id: "r" }, "t");
      throw new Error("later step failed");
    }),
  ).toThrow("later step failed");
  expect([detached.find("key-a"), detached.find("key-b")]).toEqual([null, null]);
  fresh.state.write(() => {
    detached.insert("key-c", { plan_id: "p", run_id: "r" }, "t");
  });
  expect(detached.find("key-c")).toEqual({ plan_id: "p", run_id: "r" });
});
