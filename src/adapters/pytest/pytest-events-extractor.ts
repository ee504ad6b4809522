import { readFileSync } from "node:fs";
import { artifactParseFailed, type FlameoxError } from "../../domain/errors.ts";
import type { EvidenceSink } from "../../domain/evidence.ts";

export const pytestExtractorVersion = "flameox.pytest@1";
const schema = "flameox.pytest-events.v1";

export type PytestOutcome = "passed" | "failed" | "skipped" | "xfailed" | "xpassed" | "error" | "crashed";

export type PytestTestResult = {
  nodeid: string;
  outcome: PytestOutcome;
  worker: string | null;
  durationNs: number;
  phases: Record<string, { outcome: string; durationNs: number }>;
  message: string | null;
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
  collectionNs: number | null;
  timeToFirstFailureNs: number | null;
  limitations: string[];
};

type Event = Record<string, unknown> & { event: string; observed_at_ns: number };

function parseFailed(message: string, details: Record<string, unknown> = {}): FlameoxError {
  return artifactParseFailed(`pytest event stream: ${message}`, {
    details,
    remediation: ["Capture the suite again with the pytest adapter; the stream is written by flameox's own plugin."],
  });
}

function text(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

function integer(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? Math.trunc(value) : null;
}

export function parsePytestEvents(content: string): Event[] {
  if (content.length === 0) throw parseFailed("the stream is empty");
  if (!content.endsWith("\n")) throw parseFailed("the stream ends inside a line (truncated)");
  const events: Event[] = [];
  const lines = content.split("\n");
  lines.pop();
  lines.forEach((line, index) => {
    if (line.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw parseFailed(`line ${index + 1} is not JSON`, { line: index + 1 });
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) throw parseFailed(`line ${index + 1} is not an object`);
    const record = value as Record<string, unknown>;
    if (record.schema !== schema) throw parseFailed(`line ${index + 1} has schema ${JSON.stringify(record.schema)}, expected ${schema}`);
    if (typeof record.event !== "string" || typeof record.observed_at_ns !== "number") {
      throw parseFailed(`line ${index + 1} lacks event/observed_at_ns`);
    }
    events.push(record as Event);
  });
  if (events[0]?.event !== "run_started") throw parseFailed("the stream does not start with run_started");
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
  } catch (error) {
    throw parseFailed(`cannot read ${path}: ${String(error)}`);
  }
  return extractPytestEventsText(content, sink);
}

export function extractPytestEventsText(content: string, sink: EvidenceSink): PytestSummary {
  const events = parsePytestEvents(content);
  const runStarted = events[0]!;
  const runStartedNs = integer(runStarted.run_started_at_ns) ?? runStarted.observed_at_ns;
  const scheduler = text(runStarted.scheduler) ?? "no";
  const collected: string[] = [];
  const collectedSet = new Set<string>();
  type PhaseState = { outcome: string; durationNs: number; wasxfail: boolean; worker: string | null; message: string | null };
  const byTest = new Map<string, Record<string, PhaseState>>();
  const workers = new Set<string>();
  const crashed = new Map<string, { worker: string; error: string | null; nodeids: string[] }>();
  const crashItems: { nodeid: string; worker: string | null }[] = [];
  let exitStatus: number | null = null;
  let interrupted = false;
  let sidecarProblems = 0;
  let fixtureSetups = 0;
  let collectionStart: number | null = null;
  let collectionEnd: number | null = null;
  const collectionDurations: number[] = [];
  let firstFailureNs: number | null = null;
  let valueIndex = 0;

  for (const event of events) {
    const worker = text(event.worker_id);
    switch (event.event) {
      case "test_collected": {
        const nodeid = text(event.nodeid);
        if (nodeid && !collectedSet.has(nodeid)) {
          collectedSet.add(nodeid);
          collected.push(nodeid);
        }
        break;
      }
      case "collection_started":
        collectionStart = Math.min(collectionStart ?? event.observed_at_ns, event.observed_at_ns);
        break;
      case "collection_finished": {
        collectionEnd = Math.max(collectionEnd ?? event.observed_at_ns, event.observed_at_ns);
        const duration = integer(event.duration_ns);
        if (duration !== null) {
          collectionDurations.push(duration);
          sink.measurement({
            name: "test.collection_ns",
            value: duration,
            unit: "ns",
            aggregation: "single",
            is_warmup: false,
            worker,
            run_index: null,
            value_index: valueIndex++,
            phase: "collection",
            dimensions: JSON.stringify({ test_count: integer(event.test_count) }),
          });
        }
        break;
      }
      case "fixture_setup": {
        const duration = integer(event.duration_ns);
        if (duration === null) throw parseFailed("fixture_setup without duration_ns");
        fixtureSetups += 1;
        sink.measurement({
          name: "test.fixture_setup_ns",
          value: duration,
          unit: "ns",
          aggregation: "sample",
          is_warmup: false,
          worker,
          run_index: null,
          value_index: valueIndex++,
          phase: "setup",
          dimensions: JSON.stringify({
            fixture: text(event.fixture),
            scope: text(event.scope),
            nodeid: text(event.nodeid),
            outcome: text(event.outcome),
          }),
        });
        break;
      }
      case "test_phase": {
        const nodeid = text(event.nodeid);
        const phase = text(event.phase);
        const outcome = text(event.outcome);
        const duration = integer(event.duration_ns);
        if (!nodeid || !phase || !outcome || duration === null) throw parseFailed("test_phase lacks nodeid/phase/outcome/duration_ns");
        if (worker && worker !== "controller") workers.add(worker);
        const phases = byTest.get(nodeid) ?? {};
        phases[phase] = {
          outcome,
          durationNs: duration,
          wasxfail: event.wasxfail !== null && event.wasxfail !== undefined,
          worker,
          message: text(event.message),
        };
        byTest.set(nodeid, phases);
        if (outcome === "failed") {
          const stopped = integer(event.stopped_at_ns);
          const at = stopped && stopped > 0 ? stopped : event.observed_at_ns;
          const since = Math.max(0, at - runStartedNs);
          firstFailureNs = firstFailureNs === null ? since : Math.min(firstFailureNs, since);
        }
        break;
      }
      case "worker_down":
        if (worker) workers.add(worker);
        if (event.outcome === "crashed" && worker) crashed.set(worker, { worker, error: text(event.error), nodeids: [] });
        break;
      case "worker_crashed_item": {
        const nodeid = text(event.nodeid);
        if (nodeid) crashItems.push({ nodeid, worker });
        break;
      }
      case "worker_sidecar_recovered":
        if (event.outcome !== "complete") sidecarProblems += 1;
        break;
      case "session_finished":
        exitStatus = integer(event.exit_status);
        break;
      case "interrupted":
      case "internal_error":
        interrupted = true;
        break;
      default:
        break;
    }
  }
  for (const item of crashItems) {
    const worker = item.worker ?? "?";
    const entry = crashed.get(worker) ?? { worker, error: null, nodeids: [] };
    entry.nodeids.push(item.nodeid);
    crashed.set(worker, entry);
  }

  const counts: Record<PytestOutcome, number> = { passed: 0, failed: 0, skipped: 0, xfailed: 0, xpassed: 0, error: 0, crashed: 0 };
  const tests: PytestTestResult[] = [];
  for (const [nodeid, phases] of byTest) {
    const outcome = classify(phases);
    counts[outcome] += 1;
    let total = 0;
    let worker: string | null = null;
    let message: string | null = null;
    const phaseSummary: PytestTestResult["phases"] = {};
    for (const [phase, state] of Object.entries(phases)) {
      total += state.durationNs;
      worker = worker ?? state.worker;
      message = message ?? state.message;
      phaseSummary[phase] = { outcome: state.outcome, durationNs: state.durationNs };
      sink.measurement({
        name: "test.duration_ns",
        value: state.durationNs,
        unit: "ns",
        aggregation: "single",
        is_warmup: false,
        worker: state.worker,
        run_index: null,
        value_index: valueIndex++,
        phase,
        dimensions: JSON.stringify({ nodeid, outcome, phase_outcome: state.outcome }),
      });
    }
    sink.measurement({
      name: "test.duration_ns",
      value: total,
      unit: "ns",
      aggregation: "sum",
      is_warmup: false,
      worker,
      run_index: null,
      value_index: valueIndex++,
      phase: null,
      dimensions: JSON.stringify({ nodeid, outcome }),
    });
    sink.observation({
      kind: "test_outcome",
      name: nodeid,
      file: nodeid.split("::")[0] ?? null,
      lines: null,
      context: worker,
      value: JSON.stringify({ outcome, duration_ns: total, worker, message: message?.slice(0, 2000) ?? null }),
    });
    tests.push({ nodeid, outcome, worker, durationNs: total, phases: phaseSummary, message });
  }

  const executed = new Set(byTest.keys());
  const unexecuted = collected.filter((nodeid) => !executed.has(nodeid));
  const summaryDimensions = (outcome: string) => JSON.stringify({ outcome });
  for (const [outcome, count] of Object.entries(counts)) {
    sink.measurement({
      name: "test.count",
      value: count,
      unit: "count",
      aggregation: "sum",
      is_warmup: false,
      worker: null,
      run_index: null,
      value_index: valueIndex++,
      phase: "summary",
      dimensions: summaryDimensions(outcome),
    });
  }
  sink.measurement({
    name: "test.collected",
    value: collected.length,
    unit: "count",
    aggregation: "sum",
    is_warmup: false,
    worker: null,
    run_index: null,
    value_index: valueIndex++,
    phase: "summary",
    dimensions: null,
  });
  if (firstFailureNs !== null) {
    sink.measurement({
      name: "test.time_to_first_failure_ns",
      value: firstFailureNs,
      unit: "ns",
      aggregation: "first",
      is_warmup: false,
      worker: null,
      run_index: null,
      value_index: valueIndex++,
      phase: "failure",
      dimensions: null,
    });
  }
  for (const entry of crashed.values()) {
    sink.observation({
      kind: "annotation",
      name: "pytest.worker_crashed",
      file: null,
      lines: null,
      context: entry.worker,
      value: JSON.stringify({ worker: entry.worker, error: entry.error, nodeids: entry.nodeids }),
    });
  }

  const limitations: string[] = [];
  if (exitStatus === null) limitations.push("The stream has no session_finished event; the session did not end normally.");
  if (interrupted) limitations.push("The session was interrupted or hit an internal error.");
  if (crashed.size > 0) {
    limitations.push(
      `${crashed.size} xdist worker(s) crashed: ${[...crashed.values()].map((entry) => `${entry.worker} (${entry.nodeids.join(", ") || "no test in flight"})`).join("; ")}.`,
    );
  }
  if (sidecarProblems > 0) limitations.push(`${sidecarProblems} worker sidecar(s) were recovered only partially.`);
  if (unexecuted.length > 0) limitations.push(`${unexecuted.length} collected test(s) never ran.`);
  if (scheduler !== "no") limitations.push("xdist hooks do not expose per-test queue latency.");

  const slowest = [...tests]
    .sort((left, right) => right.durationNs - left.durationNs || left.nodeid.localeCompare(right.nodeid))
    .slice(0, 20)
    .map((test) => ({ nodeid: test.nodeid, durationNs: test.durationNs, worker: test.worker }));
  return {
    complete: exitStatus !== null && !interrupted && crashed.size === 0 && sidecarProblems === 0,
    exitStatus,
    scheduler,
    collected: collected.length,
    executed: executed.size,
    unexecuted,
    counts,
    tests,
    slowest,
    workers: [...workers].sort(),
    crashedWorkers: [...crashed.values()],
    fixtureSetups,
    collectionNs:
      collectionDurations.length > 0
        ? Math.max(...collectionDurations)
        : collectionStart !== null && collectionEnd !== null
          ? collectionEnd - collectionStart
          : null,
    timeToFirstFailureNs: firstFailureNs,
    limitations,
  };
}
