import { afterEach, expect, test } from "bun:test";
import type { Finding, Hypothesis, Investigation } from "../../../src/domain/investigation.ts";
import { InvestigationStore } from "../../../src/store/investigation-store.ts";
import type { StateDatabase } from "../../../src/store/sqlite.ts";
import { freshState } from "./state.ts";

let state: StateDatabase | undefined;
afterEach(() => state?.close());

const investigation = (id: string, createdAt: string): Investigation => ({
  schema_version: 1,
  investigation_id: id,
  question: `why ${id}?`,
  symptom: null,
  parent_investigation_id: null,
  status: "open",
  created_at: createdAt,
  resource_uri: "",
});

const hypothesis = (id: string, revision: number, first: string): Hypothesis => ({
  schema_version: 1,
  hypothesis_id: id,
  investigation_id: "i-1",
  revision,
  claim: `claim ${revision}`,
  prediction: "p",
  discriminating_condition: "d",
  assessment: "unassessed",
  lifecycle: "active",
  created_at: new Date().toISOString(),
  first_created_at: first,
  resource_uri: "",
});

const finding = (id: string, revision: number, assessment: Finding["assessment"], first: string): Finding => ({
  schema_version: 1,
  finding_id: id,
  revision,
  investigation_id: "i-1",
  hypothesis_id: null,
  kind: "performance",
  title: id,
  claim: "c",
  evidence_level: "observed",
  confidence: "low",
  assessment,
  lifecycle: "active",
  limitations: [],
  next_experiments: [],
  evidence: [{ ref_type: "run", ref_id: "run-1", relation: "context", resource_uri: "" }],
  created_at: new Date().toISOString(),
  first_created_at: first,
  resource_uri: "",
});

test("investigations list newest first, keyset-paged and pinned at the first page's time", () => {
  const fresh = freshState("investigations");
  state = fresh.state;
  const store = new InvestigationStore(fresh.source);
  store.insertInvestigation(investigation("i-a", "2024-01-01T00:00:00.000Z"));
  store.insertInvestigation(investigation("i-b", "2024-01-02T00:00:00.000Z"));
  store.insertInvestigation(investigation("i-c", "2024-01-03T00:00:00.000Z"));
  const pinnedAt = "2024-01-02T12:00:00.000Z";
  const first = store.listInvestigations({ pinnedAt, after: null, limit: 1 });
  expect(first.total).toBe(2);
  expect(first.rows.map((row) => row.id)).toEqual(["i-b", "i-a"]);
  const next = store.listInvestigations({ pinnedAt, after: { created_at: first.rows[0]!.created_at, id: "i-b" }, limit: 1 });
  expect(next.rows.map((row) => row.record.investigation_id)).toEqual(["i-a"]);
  expect(store.findInvestigation("i-c")?.question).toBe("why i-c?");
  expect(store.findInvestigation("nope")).toBeNull();
});

test("revisions append; the current one is the highest, and a refusal inside next() writes nothing", () => {
  const fresh = freshState("revisions");
  state = fresh.state;
  const store = new InvestigationStore(fresh.source);
  const first = "2024-02-01T00:00:00.000Z";
  store.appendHypothesis(null, (current) => {
    expect(current).toBeNull();
    return hypothesis("h-1", 1, first);
  });
  store.appendHypothesis("h-1", (current) => hypothesis("h-1", current!.revision + 1, current!.first_created_at));
  expect(store.findHypothesis("h-1")).toMatchObject({ revision: 2, claim: "claim 2", first_created_at: first });
  expect(() =>
    store.appendHypothesis("h-1", () => {
      throw new Error("stale");
    }),
  ).toThrow("stale");
  const count = fresh.state.database.query<{ n: number }, []>("SELECT count(*) AS n FROM hypotheses").get()!.n;
  expect(count).toBe(2);
});

test("findings list their current revision with filters, and index the evidence each revision cites", () => {
  const fresh = freshState("findings");
  state = fresh.state;
  const store = new InvestigationStore(fresh.source);
  store.appendFinding(null, () => finding("f-1", 1, "unassessed", "2024-03-01T00:00:00.000Z"));
  store.appendFinding("f-1", () => finding("f-1", 2, "inconclusive", "2024-03-01T00:00:00.000Z"));
  store.appendFinding(null, () => finding("f-2", 1, "unassessed", "2024-03-02T00:00:00.000Z"));
  const pinnedAt = new Date().toISOString();
  const all = store.listFindings({ investigationId: "i-1", assessment: null }, { pinnedAt, after: null, limit: 10 });
  expect(all.rows.map((row) => [row.id, row.record.revision])).toEqual([
    ["f-2", 1],
    ["f-1", 2],
  ]);
  const inconclusive = store.listFindings({ investigationId: null, assessment: "inconclusive" }, { pinnedAt, after: null, limit: 10 });
  expect(inconclusive.rows.map((row) => row.id)).toEqual(["f-1"]);
  const cited = fresh.state.database
    .query<{ owner_revision: number; ref_id: string }, []>(
      "SELECT owner_revision, ref_id FROM evidence_references WHERE owner_id = 'f-1' ORDER BY owner_revision",
    )
    .all();
  expect(cited).toEqual([
    { owner_revision: 1, ref_id: "run-1" },
    { owner_revision: 2, ref_id: "run-1" },
  ]);
});

test("a reference exists only when its table holds that id (and, for recorded evidence, that ref_type)", () => {
  const fresh = freshState("references");
  state = fresh.state;
  const store = new InvestigationStore(fresh.source);
  fresh.state.database
    .query(
      "INSERT INTO evidence_records (ref_type, ref_id, recipe, corpus_commit_id, result_digest, created_at, record) VALUES ('analysis', 'a-1', 'r', 'c', 'd', 't', '{}')",
    )
    .run();
  expect(store.referenceExists("analysis", "a-1")).toBe(true);
  expect(store.referenceExists("comparison", "a-1")).toBe(false);
  expect(store.referenceExists("run", "run-1")).toBe(false);
});
