/**
 * Folds a flameox pytest event stream, event by event, into what the extractor reports: phases per
 * test, collection, workers and crashes, fixture setup and teardown per fixture. Per-instance
 * measurements (collection, each fixture setup and teardown) are emitted as their events arrive.
 * Durations that no clock can give (negative, or beyond 2^53 ns) are counted and left out.
 */
import { artifactParseFailed, type FlameoxError } from "../../domain/errors.ts";
import type { EvidenceSink, MeasurementRow } from "../../domain/evidence.ts";

export type PytestEvent = Record<string, unknown> & { event: string; observed_at_ns: number };

export type PhaseState = { outcome: string; durationNs: number | null; wasxfail: boolean; worker: string | null; message: string | null };

export type FixtureTotals = {
  fixture: string;
  scope: string | null;
  setups: number;
  setupNs: number;
  teardowns: number;
  teardownNs: number;
};

export function pytestParseFailed(message: string, details: Record<string, unknown> = {}): FlameoxError {
  return artifactParseFailed(`pytest event stream: ${message}`, {
    details,
    remediation: ["Capture the suite again with the pytest adapter; the stream is written by flameox's own plugin."],
  });
}

export function text(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

export function integer(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? Math.trunc(value) : null;
}

export class PytestEventFold {
  readonly collected: string[] = [];
  private readonly collectedSet = new Set<string>();
  readonly byTest = new Map<string, Record<string, PhaseState>>();
  readonly workers = new Set<string>();
  readonly crashed = new Map<string, { worker: string; error: string | null; nodeids: string[] }>();
  private readonly crashItems: { nodeid: string; worker: string | null }[] = [];
  readonly fixtures = new Map<string, FixtureTotals>();
  exitStatus: number | null = null;
  interrupted = false;
  sidecarProblems = 0;
  fixtureSetups = 0;
  fixtureTeardowns = 0;
  collectionStart: number | null = null;
  collectionEnd: number | null = null;
  readonly collectionDurations: number[] = [];
  firstFailureNs: number | null = null;
  /** Durations left out because no clock gives them: negative, or beyond 2^53 ns. */
  implausibleDurations = 0;
  valueIndex = 0;

  constructor(
    private readonly sink: EvidenceSink,
    private readonly runStartedNs: number,
  ) {}

  measurement(row: Omit<MeasurementRow, "value_index" | "is_warmup">): void {
    this.sink.measurement({ ...row, is_warmup: false, value_index: this.valueIndex++ });
  }

  /** A duration in ns, or null when it is absent or implausible (then counted). */
  duration(value: unknown): number | null {
    const duration = integer(value);
    if (duration === null) return null;
    if (duration < 0 || duration > Number.MAX_SAFE_INTEGER) {
      this.implausibleDurations++;
      return null;
    }
    return duration;
  }

  accept(event: PytestEvent): void {
    const worker = text(event.worker_id);
    switch (event.event) {
      case "test_collected":
        this.testCollected(event);
        return;
      case "collection_started":
        this.collectionStart = Math.min(this.collectionStart ?? event.observed_at_ns, event.observed_at_ns);
        return;
      case "collection_finished":
        this.collectionFinished(event, worker);
        return;
      case "fixture_setup":
      case "fixture_teardown":
        this.fixture(event, worker, event.event === "fixture_setup" ? "setup" : "teardown");
        return;
      case "test_phase":
        this.testPhase(event, worker);
        return;
      case "worker_down":
        if (worker) this.workers.add(worker);
        if (event.outcome === "crashed" && worker) this.crashed.set(worker, { worker, error: text(event.error), nodeids: [] });
        return;
      case "worker_crashed_item": {
        const nodeid = text(event.nodeid);
        if (nodeid) this.crashItems.push({ nodeid, worker });
        return;
      }
      case "worker_sidecar_recovered":
        if (event.outcome !== "complete") this.sidecarProblems += 1;
        return;
      case "session_finished":
        this.exitStatus = integer(event.exit_status);
        return;
      case "interrupted":
      case "internal_error":
        this.interrupted = true;
        return;
      default:
        return;
    }
  }

  /** After the last event: the tests in flight on crashed workers join their worker's entry. */
  finish(): void {
    for (const item of this.crashItems) {
      const worker = item.worker ?? "?";
      const entry = this.crashed.get(worker) ?? { worker, error: null, nodeids: [] };
      entry.nodeids.push(item.nodeid);
      this.crashed.set(worker, entry);
    }
  }

  private testCollected(event: PytestEvent): void {
    const nodeid = text(event.nodeid);
    if (nodeid && !this.collectedSet.has(nodeid)) {
      this.collectedSet.add(nodeid);
      this.collected.push(nodeid);
    }
  }

  private collectionFinished(event: PytestEvent, worker: string | null): void {
    this.collectionEnd = Math.max(this.collectionEnd ?? event.observed_at_ns, event.observed_at_ns);
    const duration = this.duration(event.duration_ns);
    if (duration === null) return;
    this.collectionDurations.push(duration);
    this.measurement({
      name: "test.collection_ns",
      value: duration,
      unit: "ns",
      aggregation: "single",
      worker,
      run_index: null,
      phase: "collection",
      dimensions: JSON.stringify({ test_count: integer(event.test_count) }),
    });
  }

  private fixture(event: PytestEvent, worker: string | null, phase: "setup" | "teardown"): void {
    if (integer(event.duration_ns) === null) throw pytestParseFailed(`fixture_${phase} without duration_ns`);
    const duration = this.duration(event.duration_ns);
    if (phase === "setup") this.fixtureSetups += 1;
    else this.fixtureTeardowns += 1;
    if (duration === null) return;
    const fixture = text(event.fixture) ?? "<unnamed>";
    const scope = text(event.scope);
    const key = `${fixture}\u0000${scope ?? ""}`;
    const totals = this.fixtures.get(key) ?? { fixture, scope, setups: 0, setupNs: 0, teardowns: 0, teardownNs: 0 };
    if (phase === "setup") {
      totals.setups += 1;
      totals.setupNs += duration;
    } else {
      totals.teardowns += 1;
      totals.teardownNs += duration;
    }
    this.fixtures.set(key, totals);
    this.measurement({
      name: `test.fixture_${phase}_ns`,
      value: duration,
      unit: "ns",
      aggregation: "sample",
      worker,
      run_index: null,
      phase,
      dimensions: JSON.stringify({
        fixture,
        scope,
        nodeid: text(event.nodeid),
        ...(phase === "setup" ? { outcome: text(event.outcome) } : {}),
      }),
    });
  }

  private testPhase(event: PytestEvent, worker: string | null): void {
    const nodeid = text(event.nodeid);
    const phase = text(event.phase);
    const outcome = text(event.outcome);
    if (!nodeid || !phase || !outcome || integer(event.duration_ns) === null)
      throw pytestParseFailed("test_phase lacks nodeid/phase/outcome/duration_ns");
    const duration = this.duration(event.duration_ns);
    if (worker && worker !== "controller") this.workers.add(worker);
    const phases = this.byTest.get(nodeid) ?? {};
    phases[phase] = {
      outcome,
      // An implausible duration is unknown: it adds nothing to the test's total and gets no measurement.
      durationNs: duration,
      wasxfail: event.wasxfail !== null && event.wasxfail !== undefined,
      worker,
      message: text(event.message),
    };
    this.byTest.set(nodeid, phases);
    if (outcome === "failed") {
      const stopped = integer(event.stopped_at_ns);
      const at = stopped && stopped > 0 ? stopped : event.observed_at_ns;
      const since = Math.max(0, at - this.runStartedNs);
      this.firstFailureNs = this.firstFailureNs === null ? since : Math.min(this.firstFailureNs, since);
    }
  }
}
