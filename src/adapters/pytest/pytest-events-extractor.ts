import { readFileSync } from "node:fs";
import type { EvidenceSink } from "../../domain/evidence.ts";
import {
  type FixtureTotals,
  integer,
  type PhaseState,
  PytestEventFold,
  type PytestEvent,
  pytestParseFailed,
  text,
} from "./pytest-event-fold.ts";

export const pytestExtractorVersion = "flameox.pytest@1";
const schema = "flameox.pytest-events.v1";

export type PytestOutcome = "passed" | "failed" | "skipped" | "xfailed" | "xpassed" | "error" | "crashed";

export type PytestTestResult = {
  nodeid: string;
  outcome: PytestOutcome;
  worker: string | null;
  durationNs: number;
  /** A phase's duration is null when the stream gave an impossible one (negative, or past 2^53 ns). */
  phases: Record<string, { outcome: string; durationNs: number | null }>;
  message: string | null;
};

/** One fixture's setup and teardown time over all its instances, in the rank of setup + teardown. */
export type PytestFixtureTime = {
  fixture: string;
  scope: string | null;
  instances: number;
  setup_ns: number;
  teardown_ns: number;
};

export type PytestSummary = {
  complete: boolean;
  exitStatus: number | null;
  scheduler: string;
  collected: number;
  executed: number;
  unexecuted: string[];
  counts: Record<PytestOutcome, number>;
  tests: PytestTestResult[];
  /** Slowest first, by the sum of setup, call and teardown. */
  slowest: { nodeid: string; durationNs: number; worker: string | null }[];
  workers: string[];
  crashedWorkers: { worker: string; error: string | null; nodeids: string[] }[];
  fixtureSetups: number;
  fixtureTeardowns: number;
  /** Fixtures by setup + teardown time, most first. */
  fixtures: PytestFixtureTime[];
  collectionNs: number | null;
  timeToFirstFailureNs: number | null;
  limitations: string[];
};

export function parsePytestEvents(content: string): PytestEvent[] {
  if (content.length === 0) throw pytestParseFailed("the stream is empty");
  if (!content.endsWith("\n")) throw pytestParseFailed("the stream ends inside a line (truncated)");
  const events: PytestEvent[] = [];
  const lines = content.split("\n");
  lines.pop();
  lines.forEach((line, index) => {
    if (line.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw pytestParseFailed(`line ${index + 1} is not JSON`, { line: index + 1 });
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) throw pytestParseFailed(`line ${index + 1} is not an object`);
    const record = value as Record<string, unknown>;
    if (record.schema !== schema)
      throw pytestParseFailed(`line ${index + 1} has schema ${JSON.stringify(record.schema)?.slice(0, 60)}, expected ${schema}`);
    if (typeof record.event !== "string" || typeof record.observed_at_ns !== "number") {
      throw pytestParseFailed(`line ${index + 1} lacks event/observed_at_ns`);
    }
    events.push(record as PytestEvent);
  });
  if (events[0]?.event !== "run_started") throw pytestParseFailed("the stream does not start with run_started");
  return events;
}

function classify(phases: Record<string, { outcome: string; wasxfail: boolean }>): PytestOutcome {
  if (phases.crash) return "crashed";
  const setup = phases.setup;
  const call = phases.call;
  const teardown = phases.teardown;
  if (setup?.outcome === "failed" || teardown?.outcome === "failed") return "error";
  if (call?.wasxfail) {
    if (call.outcome === "skipped") return "xfailed";
    if (call.outcome === "passed") return "xpassed";
  }
  if (setup?.wasxfail && setup.outcome === "skipped") return "xfailed";
  if (call?.outcome === "failed") return "failed";
  if (setup?.outcome === "skipped" || call?.outcome === "skipped") return "skipped";
  if (call?.outcome === "passed") return "passed";
  return "error";
}

/** Reads a flameox pytest event stream and emits measurements and test_outcome observations. */
export function extractPytestEvents(path: string, sink: EvidenceSink): PytestSummary {
  let content: string;
  try {
    content = readFileSync(path, "utf8");
  } catch {
    throw pytestParseFailed("the stream cannot be read");
  }
  return extractPytestEventsText(content, sink);
}

/** Each test's phases and total become measurements and one test_outcome observation. */
function emitTests(fold: PytestEventFold, sink: EvidenceSink): { tests: PytestTestResult[]; counts: Record<PytestOutcome, number> } {
  const counts: Record<PytestOutcome, number> = { passed: 0, failed: 0, skipped: 0, xfailed: 0, xpassed: 0, error: 0, crashed: 0 };
  const tests: PytestTestResult[] = [];
  for (const [nodeid, phases] of fold.byTest) {
    const outcome = classify(phases);
    counts[outcome] += 1;
    const test = testResult(nodeid, outcome, phases);
    for (const [phase, state] of Object.entries(phases)) {
      if (state.durationNs === null) continue;
      fold.measurement({
        name: "test.duration_ns",
        value: state.durationNs,
        unit: "ns",
        aggregation: "single",
        worker: state.worker,
        run_index: null,
        phase,
        dimensions: JSON.stringify({ nodeid, outcome, phase_outcome: state.outcome }),
      });
    }
    fold.measurement({
      name: "test.duration_ns",
      value: test.durationNs,
      unit: "ns",
      aggregation: "sum",
      worker: test.worker,
      run_index: null,
      phase: null,
      dimensions: JSON.stringify({ nodeid, outcome }),
    });
    sink.observation({
      kind: "test_outcome",
      name: nodeid,
      file: nodeid.split("::")[0] ?? null,
      lines: null,
      context: test.worker,
      value: JSON.stringify({ outcome, duration_ns: test.durationNs, worker: test.worker, message: test.message?.slice(0, 2000) ?? null }),
    });
    tests.push(test);
  }
  return { tests, counts };
}

function testResult(nodeid: string, outcome: PytestOutcome, phases: Record<string, PhaseState>): PytestTestResult {
  let total = 0;
  let worker: string | null = null;
  let message: string | null = null;
  const summary: PytestTestResult["phases"] = {};
  for (const [phase, state] of Object.entries(phases)) {
    total += state.durationNs ?? 0;
    worker = worker ?? state.worker;
    message = message ?? state.message;
    summary[phase] = { outcome: state.outcome, durationNs: state.durationNs };
  }
  return { nodeid, outcome, worker, durationNs: total, phases: summary, message };
}

/**
 * Setup and teardown time per fixture, summed over its instances (`test.fixture_total_ns`, one row
 * per fixture and phase, aggregation sum): value_index is the fixture's rank by setup + teardown, so
 * query_measurements lists the costliest fixture first.
 */
function emitFixtureTotals(fold: PytestEventFold, sink: EvidenceSink): PytestFixtureTime[] {
  const ranked = [...fold.fixtures.values()].sort(
    (left, right) =>
      right.setupNs + right.teardownNs - (left.setupNs + left.teardownNs) ||
      left.fixture.localeCompare(right.fixture) ||
      (left.scope ?? "").localeCompare(right.scope ?? ""),
  );
  ranked.forEach((totals: FixtureTotals, rank) => {
    for (const [phase, value, instances] of [
      ["setup", totals.setupNs, totals.setups],
      ["teardown", totals.teardownNs, totals.teardowns],
    ] as const) {
      sink.measurement({
        name: "test.fixture_total_ns",
        value,
        unit: "ns",
        aggregation: "sum",
        is_warmup: false,
        worker: null,
        run_index: null,
        value_index: rank,
        phase,
        dimensions: JSON.stringify({ fixture: totals.fixture, scope: totals.scope, instances }),
      });
    }
  });
  return ranked.map((totals) => ({
    fixture: totals.fixture,
    scope: totals.scope,
    instances: totals.setups,
    setup_ns: totals.setupNs,
    teardown_ns: totals.teardownNs,
  }));
}

function emitSessionSummary(fold: PytestEventFold, counts: Record<PytestOutcome, number>, sink: EvidenceSink): void {
  const summary = (name: string, value: number, dimensions: string | null) =>
    fold.measurement({ name, value, unit: "count", aggregation: "sum", worker: null, run_index: null, phase: "summary", dimensions });
  for (const [outcome, count] of Object.entries(counts)) summary("test.count", count, JSON.stringify({ outcome }));
  summary("test.collected", fold.collected.length, null);
  if (fold.firstFailureNs !== null) {
    fold.measurement({
      name: "test.time_to_first_failure_ns",
      value: fold.firstFailureNs,
      unit: "ns",
      aggregation: "first",
      worker: null,
      run_index: null,
      phase: "failure",
      dimensions: null,
    });
  }
  for (const entry of fold.crashed.values()) {
    sink.observation({
      kind: "annotation",
      name: "pytest.worker_crashed",
      file: null,
      lines: null,
      context: entry.worker,
      value: JSON.stringify({ worker: entry.worker, error: entry.error, nodeids: entry.nodeids }),
    });
  }
}

function limitationsOf(fold: PytestEventFold, scheduler: string, unexecuted: number): string[] {
  const limitations: string[] = [];
  if (fold.exitStatus === null) limitations.push("The stream has no session_finished event; the session did not end normally.");
  if (fold.interrupted) limitations.push("The session was interrupted or hit an internal error.");
  if (fold.crashed.size > 0) {
    limitations.push(
      `${fold.crashed.size} xdist worker(s) crashed: ${[...fold.crashed.values()].map((entry) => `${entry.worker} (${entry.nodeids.join(", ") || "no test in flight"})`).join("; ")}.`,
    );
  }
  if (fold.sidecarProblems > 0) limitations.push(`${fold.sidecarProblems} worker sidecar(s) were recovered only partially.`);
  if (unexecuted > 0) limitations.push(`${unexecuted} collected test(s) never ran.`);
  if (scheduler !== "no") limitations.push("xdist hooks do not expose per-test queue latency.");
  if (fold.implausibleDurations > 0) {
    limitations.push(
      `${fold.implausibleDurations} duration(s) in the stream were negative or beyond 2^53 ns; they were left out (their tests keep their outcomes).`,
    );
  }
  return limitations;
}

export function extractPytestEventsText(content: string, sink: EvidenceSink): PytestSummary {
  const events = parsePytestEvents(content);
  const runStarted = events[0]!;
  const scheduler = text(runStarted.scheduler) ?? "no";
  const fold = new PytestEventFold(sink, integer(runStarted.run_started_at_ns) ?? runStarted.observed_at_ns);
  for (const event of events) fold.accept(event);
  fold.finish();
  const { tests, counts } = emitTests(fold, sink);
  const executed = new Set(fold.byTest.keys());
  const unexecuted = fold.collected.filter((nodeid) => !executed.has(nodeid));
  emitSessionSummary(fold, counts, sink);
  const fixtures = emitFixtureTotals(fold, sink);
  const slowest = [...tests]
    .sort((left, right) => right.durationNs - left.durationNs || left.nodeid.localeCompare(right.nodeid))
    .slice(0, 20)
    .map((test) => ({ nodeid: test.nodeid, durationNs: test.durationNs, worker: test.worker }));
  const { collectionDurations, collectionStart, collectionEnd } = fold;
  return {
    complete: fold.exitStatus !== null && !fold.interrupted && fold.crashed.size === 0 && fold.sidecarProblems === 0,
    exitStatus: fold.exitStatus,
    scheduler,
    collected: fold.collected.length,
    executed: executed.size,
    unexecuted,
    counts,
    tests,
    slowest,
    workers: [...fold.workers].sort(),
    crashedWorkers: [...fold.crashed.values()],
    fixtureSetups: fold.fixtureSetups,
    fixtureTeardowns: fold.fixtureTeardowns,
    fixtures,
    collectionNs:
      collectionDurations.length > 0
        ? Math.max(...collectionDurations)
        : collectionStart !== null && collectionEnd !== null
          ? collectionEnd - collectionStart
          : null,
    timeToFirstFailureNs: fold.firstFailureNs,
    limitations: limitationsOf(fold, scheduler, unexecuted.length),
  };
}
