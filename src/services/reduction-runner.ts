import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type DdminCandidate, type DdminVerdict, ddmin } from "../analysis/reduction/ddmin.ts";
import { type Partition, partitionArtifact } from "../analysis/reduction/partitioners.ts";
import { inheritedEnvironment, loadWorkspacePolicy } from "../config/workspace-policy.ts";
import { sha256Hex } from "../domain/canonical-json.ts";
import { toFlameoxError } from "../domain/errors.ts";
import {
  type AttemptClassification,
  type AttemptCounts,
  emptyAttemptCounts,
  type ReductionAttempt,
  type ReductionIntent,
  type ReductionRecord,
  reductionCandidateVariable,
  startingReductionRecord,
} from "../domain/reductions.ts";
import type { PlanReductionInput } from "../domain/requests/reductions.ts";
import { runProcess } from "../exec/broker.ts";
import { processStagingPath } from "../store/process-staging.ts";
import type { ReductionStore } from "../store/reduction-store.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";
import type { Workspace } from "../store/workspace.ts";
import { bestEffortProgress, type ProgressReporter } from "./progress.ts";
import { predicateOutputBytes, publishIntoRecord, runRecorded, sameBytes } from "./reduction-publication.ts";
import { ShrinkrayReduction } from "./shrinkray-reduction.ts";

type Judgement = { classification: AttemptClassification; exitCodes: (number | null)[]; durationMs: number; wallExceeded: boolean };

/**
 * Runs one reduction: the predicate on the original (it must exit 0), ddmin over the partition's
 * units with every candidate judged by the predicate (cached by candidate digest, bounded by attempts
 * and wall time), a final uncached revalidation, then the result stored as a new artifact. Every
 * predicate run is appended to the attempts as it finishes.
 */
export class ReductionRunner {
  constructor(
    private readonly workspace: WorkspaceHandle,
    private readonly reductions: ReductionStore,
  ) {}

  /** `planDigest` is the plan's public id (a digest of its token), the only form of it a record keeps. */
  async run(intent: ReductionIntent, planDigest: string, options: { signal?: AbortSignal; progress?: ProgressReporter }): Promise<void> {
    const workspace = this.workspace.open();
    const scratch = processStagingPath(workspace, `reduction-${intent.reduction_id}`);
    mkdirSync(scratch, { recursive: true, mode: 0o700 });
    try {
      // Made inside the try: a constructor that cannot read the original still leaves no scratch behind.
      const run =
        intent.request.engine === "shrinkray"
          ? new ShrinkrayReduction(workspace, intent, planDigest, scratch, this.reductions, options)
          : new ReductionExecution(workspace, intent, planDigest, scratch, this.reductions, options);
      await run.execute();
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }
}

class ReductionExecution {
  private readonly limits: PlanReductionInput["limits"];
  private readonly wallDeadline: number;
  private readonly cache = new Map<string, AttemptClassification>();
  private readonly counts: AttemptCounts = emptyAttemptCounts();
  private attempt = 0;
  /** Candidates the predicate judged (cache misses): what max_attempts bounds. */
  private judged = 0;
  private budgetExhausted: ReductionRecord["budget_exhausted"] = null;
  private cancelled = false;
  private publicationTried = false;
  private failure: string | null = null;
  private best: { kept: number[]; bytes: Uint8Array };
  private readonly candidatePath: string;
  private readonly report: (step: number, message: string) => Promise<void>;
  private partition!: Partition;
  private record: ReductionRecord;

  constructor(
    private readonly workspace: Workspace,
    private readonly intent: ReductionIntent,
    planDigest: string,
    private readonly scratch: string,
    private readonly reductions: ReductionStore,
    private readonly options: { signal?: AbortSignal; progress?: ProgressReporter },
  ) {
    this.limits = intent.request.limits;
    this.wallDeadline = Date.now() + this.limits.wall_time_seconds * 1000;
    this.candidatePath = join(scratch, `candidate${intent.original.extension}`);
    this.report = bestEffortProgress(options.progress, this.limits.max_attempts);
    const original = new Uint8Array(readFileSync(workspace.path(intent.original.stored_path)));
    this.best = { kept: [], bytes: original };
    this.record = startingReductionRecord(intent, planDigest, original.length, this.counts);
  }

  execute(): Promise<void> {
    return runRecorded(this.reductions, this.record, {
      reduce: () => this.reduce(),
      fail: (reason) => this.finish("inconclusive", [reason]),
      cancelled: () => this.cancelled,
    });
  }

  private async reduce(): Promise<ReductionRecord> {
    const original = this.best.bytes;
    this.partition = partitionArtifact(this.intent.request.partitioner, original);
    this.best.kept = Array.from({ length: this.partition.unitCount }, (_, index) => index);
    const first = await this.judgeFresh(original, this.partition.unitCount, { requestedRemoved: 0, dependencyAdded: 0 });
    if (first.classification !== "interesting") return this.stopEarly(first, "on the original artifact");
    // A partitioner that re-serializes (JSON) must still produce something interesting from all units.
    const rebuilt = this.partition.rebuild(this.best.kept);
    if (!sameBytes(rebuilt, original)) {
      const whole = await this.judgeFresh(rebuilt, this.partition.unitCount, { requestedRemoved: 0, dependencyAdded: 0 });
      if (whole.classification !== "interesting")
        return this.finish("inconclusive", [
          `The ${this.intent.request.partitioner} rebuild of all units is not interesting (${whole.classification}): partitioner_incompatible. Use text_lines.`,
        ]);
      this.best.bytes = rebuilt;
    }
    const result = await ddmin(this.partition.unitCount, this.partition.requires, (candidate) => this.test(candidate));
    this.counts.dependency_closure_no_op = result.dependencyNoOps;
    if (this.cancelled) return this.finish("cancelled", []);
    if (result.stoppedBy === "unresolved")
      return this.finish("inconclusive", [`The predicate could not run: ${this.failure ?? "unknown"}.`]);
    this.record.minimality = result.minimality;
    if (this.best.kept.length === this.partition.unitCount) return this.finish("unchanged", []);
    // Out of wall time there is no time left to revalidate; the candidate was judged interesting once.
    if (this.budgetExhausted === "wall_time")
      return this.finish("succeeded", ["The result was not revalidated: the wall-time budget ran out."]);
    const check = await this.judgeFresh(this.best.bytes, this.best.kept.length, { requestedRemoved: 0, dependencyAdded: 0 }, true);
    // A cancel during revalidation is a cancel, not a sign of a flaky predicate.
    if (this.cancelled) return this.finish("cancelled", []);
    this.record.final_revalidation = check.classification === "interesting" ? "passed" : "failed";
    if (check.classification !== "interesting")
      return this.finish("inconclusive", [
        `The reduced candidate did not revalidate (${check.classification}); the predicate may be flaky.`,
      ]);
    return this.finish("succeeded", []);
  }

  private stopEarly(judgement: Judgement, where: string): ReductionRecord {
    if (this.cancelled) return this.finish("cancelled", []);
    if (judgement.classification === "not_interesting")
      return this.finish("original_not_interesting", [
        `The predicate exited ${judgement.exitCodes.join("/")} ${where}; it must exit 0 on the input whose property is to be kept.`,
      ]);
    return this.finish("inconclusive", [`The predicate was ${judgement.classification.replaceAll("_", " ")} ${where}.`]);
  }

  /** ddmin's predicate: cached by candidate digest, bounded by attempts and wall time. */
  private async test(candidate: DdminCandidate): Promise<DdminVerdict> {
    if (this.cancelled || this.budgetExhausted) return "stop";
    const bytes = this.partition.rebuild(candidate.kept);
    const digest = sha256Hex(bytes);
    const cached = this.cache.get(digest);
    this.counts.candidates += 1;
    if (cached) {
      this.counts.cache_hits += 1;
      this.append(digest, bytes, candidate, { classification: cached, exitCodes: [], durationMs: 0, wallExceeded: false }, "hit", false);
      return cached === "interesting" ? "interesting" : "rejected";
    }
    if (this.judged >= this.limits.max_attempts) {
      this.budgetExhausted = "max_attempts";
      return "stop";
    }
    const judgement = await this.judge(bytes);
    if (this.cancelled) return "stop";
    if (judgement.wallExceeded) {
      this.budgetExhausted = "wall_time";
      return "stop";
    }
    if (judgement.classification === "failed_to_run") return "unresolved";
    this.cache.set(digest, judgement.classification);
    const better = judgement.classification === "interesting" && bytes.length <= this.best.bytes.length;
    if (better) this.best = { kept: candidate.kept, bytes };
    this.append(digest, bytes, candidate, judgement, "miss", better);
    await this.report(Math.min(this.judged, this.limits.max_attempts), `Attempt ${this.attempt}: ${candidate.kept.length} units`);
    return judgement.classification === "interesting" ? "interesting" : "rejected";
  }

  /** A judgement outside the cache (the original, the full rebuild, the final revalidation), recorded like any attempt. */
  private async judgeFresh(
    bytes: Uint8Array,
    units: number,
    shape: { requestedRemoved: number; dependencyAdded: number },
    revalidation = false,
  ): Promise<Judgement> {
    const judgement = await this.judge(bytes);
    if (judgement.classification !== "failed_to_run" && !revalidation) this.cache.set(sha256Hex(bytes), judgement.classification);
    this.append(sha256Hex(bytes), bytes, { kept: new Array(units), ...shape }, judgement, "miss", false);
    return judgement;
  }

  /** Runs the predicate `predicate_repetitions` times on the candidate; every run must agree. */
  private async judge(bytes: Uint8Array): Promise<Judgement> {
    writeFileSync(this.candidatePath, bytes, { mode: 0o600 });
    const policy = loadWorkspacePolicy(this.workspace.root);
    this.judged += 1;
    const started = performance.now();
    const exitCodes: (number | null)[] = [];
    let timedOut = false;
    for (let repetition = 0; repetition < this.limits.predicate_repetitions; repetition++) {
      const deadline = Math.min(Date.now() + this.limits.predicate_timeout_seconds * 1000, this.wallDeadline);
      if (deadline <= Date.now()) return { classification: "timed_out", exitCodes, durationMs: 0, wallExceeded: true };
      this.counts.predicate_runs += 1;
      try {
        const result = await runProcess(
          {
            argv: this.intent.predicate.argv,
            cwd: this.intent.predicate.cwd,
            deadline,
            stdoutPath: join(this.scratch, "predicate-stdout.txt"),
            stderrPath: join(this.scratch, "predicate-stderr.txt"),
            outputBudgetBytes: predicateOutputBytes,
            environment: this.intent.predicate.environment,
            trustedEnvironment: { [reductionCandidateVariable]: this.candidatePath },
          },
          {
            signal: this.options.signal,
            gracePeriodMs: policy.limits.cleanup_grace_seconds * 1000,
            inheritEnvironment: inheritedEnvironment(policy),
            sampling: false,
          },
        );
        if (result.cancelled && result.cancellation_cause === "caller_cancelled") {
          this.cancelled = true;
          return { classification: "failed_to_run", exitCodes, durationMs: performance.now() - started, wallExceeded: false };
        }
        exitCodes.push(result.exit_code);
        if (result.timed_out) {
          timedOut = true;
          if (deadline >= this.wallDeadline) return { classification: "timed_out", exitCodes, durationMs: 0, wallExceeded: true };
          break;
        }
      } catch (error) {
        this.failure = toFlameoxError(error).message.slice(0, 300);
        return { classification: "failed_to_run", exitCodes, durationMs: performance.now() - started, wallExceeded: false };
      }
    }
    const durationMs = Math.round(performance.now() - started);
    const classification: Exclude<AttemptClassification, "failed_to_run"> = timedOut
      ? "timed_out"
      : exitCodes.every((code) => code === 0)
        ? "interesting"
        : exitCodes.every((code) => code !== 0)
          ? "not_interesting"
          : "contradictory";
    this.counts[classification] += 1;
    return { classification, exitCodes, durationMs, wallExceeded: false };
  }

  private append(
    digest: string,
    bytes: Uint8Array,
    candidate: DdminCandidate,
    judgement: Judgement,
    cacheStatus: "hit" | "miss",
    becameBest: boolean,
  ): void {
    this.attempt += 1;
    this.reductions.appendAttempt(this.intent.reduction_id, {
      attempt: this.attempt,
      candidate_digest: `sha256:${digest}`,
      units: candidate.kept.length,
      byte_length: bytes.length,
      removed_units: candidate.requestedRemoved,
      dependency_added_units: candidate.dependencyAdded,
      classification: judgement.classification,
      cache_status: cacheStatus,
      exit_codes: judgement.exitCodes,
      duration_ms: Math.round(judgement.durationMs),
      became_best: becameBest,
    } satisfies ReductionAttempt);
  }

  /** Stores the smallest interesting candidate (if smaller than the original) and writes the final record. */
  private finish(disposition: ReductionRecord["disposition"], limitations: string[]): ReductionRecord {
    const record = this.record;
    record.disposition = disposition;
    record.budget_exhausted = this.budgetExhausted;
    record.limitations = [...record.limitations, ...limitations];
    if (this.budgetExhausted)
      record.limitations.push(`The ${this.budgetExhausted.replaceAll("_", " ")} budget ran out; the result is not claimed to be minimal.`);
    const reduced = this.partition && this.best.kept.length > 0 && this.best.kept.length < this.partition.unitCount;
    // Published at most once: a publication that fails (disk full, over the artifact limit) is said in the
    // record, which is still written, so the reduction never stays 'running'.
    if (reduced && disposition !== "original_not_interesting" && !this.publicationTried) {
      this.publicationTried = true;
      publishIntoRecord(this.workspace, this.intent, record, {
        bytes: this.best.bytes,
        scratch: this.scratch,
        predicateOutputs: [join(this.scratch, "predicate-stdout.txt"), join(this.scratch, "predicate-stderr.txt")],
        attempts: this.attempt,
        units: () => this.best.kept.length,
      });
    }
    record.finished_at = new Date().toISOString();
    this.reductions.update(record);
    return record;
  }
}
