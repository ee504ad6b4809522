/**
 * A reduction with the shrinkray engine: ShrinkRay from its managed provider environment, run through
 * the broker with the plan's wall time as its deadline, on a copy of the original in the reduction's
 * scratch folder under .diagnostics (its temporary files too). Its interestingness test is flameox's
 * script (adapters/shrinkray), which runs the predicate exactly as native_ddmin does and logs every
 * attempt; this reads that log while ShrinkRay runs, records each attempt, and stops ShrinkRay once
 * max_attempts candidates were judged or the predicate cannot run. The smallest interesting candidate
 * is revalidated and stored like a native result.
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { partitionArtifact } from "../analysis/reduction/partitioners.ts";
import { inheritedEnvironment, loadWorkspacePolicy } from "../config/workspace-policy.ts";
import {
  type AttemptCounts,
  emptyAttemptCounts,
  type ReductionIntent,
  type ReductionRecord,
  reductionCandidateVariable,
  startingReductionRecord,
} from "../domain/reductions.ts";
import { type ProcessResult, runProcess } from "../exec/broker.ts";
import { buildChildEnvironment } from "../exec/environment-policy.ts";
import {
  parseAttemptLines,
  type ShrinkrayAttempt,
  type ShrinkrayTestConfig,
  shrinkrayArgv,
  shrinkrayFiles,
  shrinkrayLauncherSource,
  shrinkrayTestSource,
} from "../adapters/shrinkray/shrinkray-engine.ts";
import type { ReductionStore } from "../store/reduction-store.ts";
import type { Workspace } from "../store/workspace.ts";
import { bestEffortProgress, type ProgressReporter } from "./progress.ts";
import { predicateOutputBytes, publishIntoRecord, runRecorded, sameBytes } from "./reduction-publication.ts";

const pollIntervalMs = 500;

type Options = { signal?: AbortSignal; progress?: ProgressReporter };

export class ShrinkrayReduction {
  private readonly counts: AttemptCounts = emptyAttemptCounts();
  private readonly record: ReductionRecord;
  private readonly original: Uint8Array;
  private readonly wallDeadline: number;
  private readonly paths: Record<"work" | "candidate" | "log" | "best" | "limit" | "stdout" | "stderr" | "final", string>;
  private readonly report: (step: number, message: string) => Promise<void>;
  private logOffset = 0;
  private pending = "";
  private attempts = 0;
  private first: ShrinkrayAttempt | null = null;
  private lastRevalidation: ShrinkrayAttempt | null = null;
  private failure: string | null = null;
  private limitHit = false;
  private cancelled = false;
  private published = false;

  constructor(
    private readonly workspace: Workspace,
    private readonly intent: ReductionIntent,
    planDigest: string,
    private readonly scratch: string,
    private readonly reductions: ReductionStore,
    private readonly options: Options,
  ) {
    const limits = intent.request.limits;
    this.wallDeadline = Date.now() + limits.wall_time_seconds * 1000;
    this.report = bestEffortProgress(options.progress, limits.max_attempts);
    this.original = new Uint8Array(readFileSync(workspace.path(intent.original.stored_path)));
    const extension = intent.original.extension;
    this.paths = {
      work: join(scratch, "work"),
      candidate: join(scratch, "work", `candidate${extension}`),
      log: join(scratch, "attempts.jsonl"),
      best: join(scratch, `best${extension}`),
      limit: join(scratch, "limit-reached"),
      stdout: join(scratch, "predicate-stdout.txt"),
      stderr: join(scratch, "predicate-stderr.txt"),
      final: join(scratch, `final${extension}`),
    };
    // Stays not_claimed: ShrinkRay cuts bytes with its own passes, not ddmin over the partition.
    this.record = startingReductionRecord(intent, planDigest, this.original.length, this.counts);
  }

  execute(): Promise<void> {
    return runRecorded(this.reductions, this.record, {
      reduce: () => this.reduce(),
      fail: (reason) => this.finish("inconclusive", [reason], null),
      cancelled: () => this.cancelled,
    });
  }

  private async reduce(): Promise<void> {
    this.prepare();
    const result = await this.runShrinkray();
    this.ingest();
    if (this.cancelled) return this.finish("cancelled", [], this.bestBytes());
    if (this.failure) return this.finish("inconclusive", [`The predicate could not run: ${this.failure}.`], this.bestBytes());
    const first = this.first;
    if (!first) return this.finish("inconclusive", [`ShrinkRay stopped before judging the original: ${this.describe(result)}.`], null);
    if (first.classification === "not_interesting")
      return this.finish(
        "original_not_interesting",
        [
          `The predicate exited ${first.exit_codes.join("/")} on the original artifact; it must exit 0 on the input whose property is to be kept.`,
        ],
        null,
      );
    if (first.classification !== "interesting")
      return this.finish(
        "inconclusive",
        [`The predicate was ${first.classification.replaceAll("_", " ")} on the original artifact.`],
        null,
      );
    if (result.timed_out) this.record.budget_exhausted = "wall_time";
    else if (this.limitHit) this.record.budget_exhausted = "max_attempts";
    else if (result.exit_code !== 0) return this.finish("inconclusive", [`ShrinkRay failed: ${this.describe(result)}.`], this.bestBytes());
    // A finished ShrinkRay leaves its answer in the candidate file; a stopped one, the test's best so far.
    const reduced = this.record.budget_exhausted === null ? new Uint8Array(readFileSync(this.paths.candidate)) : this.bestBytes();
    if (sameBytes(reduced, this.original)) return this.finish("unchanged", [], null);
    // Out of wall time there is no time left to revalidate; the candidate was judged interesting once.
    if (this.record.budget_exhausted === "wall_time")
      return this.finish("succeeded", ["The result was not revalidated: the wall-time budget ran out."], reduced);
    await this.revalidate(reduced);
    // A cancel during revalidation is a cancel, not a sign of a flaky predicate.
    if (this.cancelled) return this.finish("cancelled", [], reduced);
    const check = this.lastRevalidation?.classification ?? "failed_to_run";
    this.record.final_revalidation = check === "interesting" ? "passed" : "failed";
    if (check !== "interesting")
      return this.finish("inconclusive", [`The reduced candidate did not revalidate (${check}); the predicate may be flaky.`], reduced);
    return this.finish("succeeded", [], reduced);
  }

  /** The candidate copy, ShrinkRay's own temporary folders and the test with its configuration, all inside scratch. */
  private prepare(): void {
    for (const folder of [this.paths.work, join(this.scratch, "tmp"), join(this.scratch, "cache")])
      mkdirSync(folder, { recursive: true, mode: 0o700 });
    writeFileSync(this.paths.candidate, this.original, { mode: 0o600 });
    writeFileSync(join(this.scratch, shrinkrayFiles.launcher), shrinkrayLauncherSource, { mode: 0o600 });
    writeFileSync(join(this.scratch, shrinkrayFiles.test), shrinkrayTestSource, { mode: 0o600 });
    const policy = loadWorkspacePolicy(this.workspace.root);
    const limits = this.intent.request.limits;
    // The environment the broker would give the predicate; the test adds the candidate's path per attempt.
    const { environment } = buildChildEnvironment({
      inherit: inheritedEnvironment(policy),
      environment: this.intent.predicate.environment,
    });
    const config: ShrinkrayTestConfig = {
      argv: this.intent.predicate.argv,
      cwd: this.intent.predicate.cwd,
      environment,
      candidate_variable: reductionCandidateVariable,
      predicate_timeout_seconds: limits.predicate_timeout_seconds,
      repetitions: limits.predicate_repetitions,
      wall_deadline_ms: this.wallDeadline,
      max_attempts: limits.max_attempts,
      partitioner: this.intent.request.partitioner,
      original_units: this.intent.unit_count,
      original_bytes: this.original.length,
      output_budget_bytes: predicateOutputBytes,
      log: this.paths.log,
      state: join(this.scratch, "test-state.json"),
      lock: join(this.scratch, "test.lock"),
      best: this.paths.best,
      limit_marker: this.paths.limit,
      stdout: this.paths.stdout,
      stderr: this.paths.stderr,
    };
    writeFileSync(join(this.scratch, shrinkrayFiles.config), JSON.stringify(config), { mode: 0o600 });
  }

  private async runShrinkray(): Promise<ProcessResult> {
    const limits = this.intent.request.limits;
    const stop = new AbortController();
    const signal = this.options.signal ? AbortSignal.any([this.options.signal, stop.signal]) : stop.signal;
    const poll = setInterval(() => {
      this.ingest();
      if (this.limitHit || this.failure) stop.abort();
    }, pollIntervalMs);
    try {
      const result = await this.broker(
        shrinkrayArgv({
          python: this.intent.engine_provider!.python,
          launcher: join(this.scratch, shrinkrayFiles.launcher),
          test: join(this.scratch, shrinkrayFiles.test),
          candidate: this.paths.candidate,
          // ShrinkRay's own per-test limit stays above the test's, which enforces the predicate timeout itself.
          timeoutSeconds: limits.predicate_timeout_seconds * limits.predicate_repetitions + 10,
        }),
        this.paths.work,
        this.wallDeadline,
        signal,
        "shrinkray",
      );
      if (result.cancelled && this.options.signal?.aborted) this.cancelled = true;
      return result;
    } finally {
      clearInterval(poll);
    }
  }

  /** The final candidate judged once more by the same test, outside the attempt budget. */
  private async revalidate(bytes: Uint8Array): Promise<void> {
    writeFileSync(this.paths.final, bytes, { mode: 0o600 });
    const limits = this.intent.request.limits;
    const deadline =
      Math.min(this.wallDeadline, Date.now() + limits.predicate_timeout_seconds * limits.predicate_repetitions * 1000) + 10_000;
    const test = join(this.scratch, shrinkrayFiles.test);
    const result = await this.broker(
      [this.intent.engine_provider!.python, "-I", "-S", test, "--revalidate", this.paths.final],
      this.scratch,
      deadline,
      this.options.signal,
      "revalidation",
    );
    if (result.cancelled && this.options.signal?.aborted) this.cancelled = true;
    this.ingest();
  }

  private async broker(argv: string[], cwd: string, deadline: number, signal: AbortSignal | undefined, name: string) {
    const policy = loadWorkspacePolicy(this.workspace.root);
    return runProcess(
      {
        argv,
        cwd,
        deadline,
        stdoutPath: join(this.scratch, `${name}-stdout.txt`),
        stderrPath: join(this.scratch, `${name}-stderr.txt`),
        outputBudgetBytes: 1024 * 1024,
        trustedEnvironment: {
          TMPDIR: join(this.scratch, "tmp"),
          XDG_CACHE_HOME: join(this.scratch, "cache"),
          PYTHONDONTWRITEBYTECODE: "1",
        },
      },
      { signal, gracePeriodMs: policy.limits.cleanup_grace_seconds * 1000, sampling: false },
    );
  }

  /** Records the attempts the test logged since the last read, in order. */
  private ingest(): void {
    if (!existsSync(this.paths.log)) return;
    const descriptor = openSync(this.paths.log, "r");
    try {
      // The test writes JSON with ASCII escapes only, so a chunk never splits a character.
      const buffer = Buffer.alloc(1024 * 1024);
      for (;;) {
        const read = readSync(descriptor, buffer, 0, buffer.length, this.logOffset);
        if (read <= 0) break;
        this.logOffset += read;
        this.pending += buffer.subarray(0, read).toString("utf8");
      }
    } finally {
      closeSync(descriptor);
    }
    const { attempts, consumed } = parseAttemptLines(this.pending);
    this.pending = this.pending.slice(consumed);
    for (const attempt of attempts) this.recordAttempt(attempt);
    if (existsSync(this.paths.limit) || this.judged() >= this.intent.request.limits.max_attempts) this.limitHit = true;
  }

  private recordAttempt(attempt: ShrinkrayAttempt): void {
    const { revalidation, failure, ...row } = attempt;
    this.attempts = Math.max(this.attempts, row.attempt);
    this.reductions.appendAttempt(this.intent.reduction_id, row);
    this.counts.predicate_runs += row.exit_codes.length;
    if (row.classification === "failed_to_run") this.failure = failure ?? "the predicate could not be started";
    else this.counts[row.classification] += 1;
    if (revalidation) {
      this.lastRevalidation = attempt;
      return;
    }
    this.counts.candidates += 1;
    this.first ??= attempt;
    void this.report(Math.min(this.judged(), this.intent.request.limits.max_attempts), `Attempt ${row.attempt}: ${row.byte_length} bytes`);
  }

  private judged(): number {
    return this.counts.candidates;
  }

  private bestBytes(): Uint8Array {
    return existsSync(this.paths.best) ? new Uint8Array(readFileSync(this.paths.best)) : this.original;
  }

  /** How ShrinkRay ended, for a limitation: its exit and the last lines of its stderr, with scratch paths named, not shown. */
  private describe(result: ProcessResult): string {
    const how = result.timed_out ? "it ran past the wall time" : `exit ${result.exit_code ?? result.terminating_signal}`;
    const lines = result.stderr.tail
      .replaceAll(this.scratch, "<scratch>")
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "");
    return `${how}${lines.length > 0 ? ` (${lines.slice(-2).join(" | ").slice(-300)})` : ""}`;
  }

  /** Stores a reduced candidate (if there is one) and writes the final record, like the native reducer's finish. */
  private finish(disposition: ReductionRecord["disposition"], limitations: string[], reduced: Uint8Array | null): void {
    const record = this.record;
    record.disposition = disposition;
    record.limitations = [...record.limitations, ...limitations];
    if (record.budget_exhausted)
      record.limitations.push(
        `The ${record.budget_exhausted.replaceAll("_", " ")} budget ran out; ShrinkRay was stopped and its best candidate kept.`,
      );
    if (reduced && !sameBytes(reduced, this.original) && !this.published) {
      this.published = true;
      publishIntoRecord(this.workspace, this.intent, record, {
        bytes: reduced,
        scratch: this.scratch,
        predicateOutputs: [this.paths.stdout, this.paths.stderr],
        attempts: this.attempts,
        units: () => this.unitsOf(reduced),
      });
    }
    record.finished_at = new Date().toISOString();
    this.reductions.update(record);
  }

  private unitsOf(bytes: Uint8Array): number {
    try {
      return partitionArtifact(this.intent.request.partitioner, bytes).unitCount;
    } catch {
      this.record.limitations.push(
        `The result is not a ${this.intent.request.partitioner} input any more; ShrinkRay cuts bytes, not units.`,
      );
      return 0;
    }
  }
}
