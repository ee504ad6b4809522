import { existsSync, mkdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import type { WorkloadConfig } from "../config/project-config-schema.ts";
import { resolveWorkloadInvocation } from "../config/workload-template.ts";
import { inheritedEnvironment, loadWorkspacePolicy } from "../config/workspace-policy.ts";
import { toFlameoxError } from "../domain/errors.ts";
import type { OracleReceipt } from "../domain/experiment.ts";
import { parseOracleReceipt } from "../analysis/oracle-receipt.ts";
import { runProcess, type ProcessResult } from "../exec/broker.ts";
import { publishArtifact, reclaimUnpublished } from "../store/artifact-placement.ts";
import { type StagedArtifact, stageArtifactFile } from "../store/artifact-store.ts";
import { processStagingPath } from "../store/process-staging.ts";
import { advanceCorpus } from "../store/corpus.ts";
import type { Trial } from "../store/experiment-store.ts";
import { readRun, reviseRun, type ValidationStatus } from "../store/run-store.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";
import type { Workspace } from "../store/workspace.ts";

/** The variable naming the private path an oracle may write its receipt to. */
export const oracleReceiptVariable = "FLAMEOX_ORACLE_RECEIPT";

type OracleOutput = { path: string; role: string; name: string; mediaType: string };

type OracleVerdict = {
  exitCode: number | null;
  validation: ValidationStatus;
  receipt: OracleReceipt | null;
  receiptError: string | null;
  limitations: string[];
};

/**
 * Validation precedence: a timeout or non-zero exit fails (even when the receipt says pass), an
 * invalid receipt is inconclusive, a receipt's status decides, and exit 0 without a receipt passes.
 */
function judge(result: ProcessResult, receipt: OracleReceipt | null, receiptError: string | null): OracleVerdict {
  const verdict: OracleVerdict = {
    exitCode: result.timed_out ? null : result.exit_code,
    validation: "passed",
    receipt,
    receiptError,
    limitations: [],
  };
  if (result.timed_out) {
    verdict.validation = "failed";
    verdict.limitations.push("The oracle timed out.");
  } else if (result.exit_code !== 0) {
    verdict.validation = "failed";
    if (receipt?.status === "pass")
      verdict.limitations.push("The oracle exited non-zero although its receipt says pass; the exit status wins.");
  } else if (receiptError) verdict.validation = "inconclusive";
  else if (receipt) verdict.validation = receipt.status === "pass" ? "passed" : receipt.status === "fail" ? "failed" : receipt.status;
  return verdict;
}

/**
 * The oracle runs after a successful measured run, without the collector, under the same limits.
 * It may write a receipt to the private path in FLAMEOX_ORACLE_RECEIPT; the receipt is authoritative
 * (typed status, case, expected/observed), which is stronger than comparing output bytes. Without one,
 * exit 0 passes and anything else fails. Its outputs become validation artifacts of the trial's run.
 */
export class OracleRunner {
  constructor(private readonly workspace: WorkspaceHandle) {}

  async validate(trial: Trial, strength: string, workload: WorkloadConfig, signal?: AbortSignal): Promise<void> {
    const invocation = resolveWorkloadInvocation(workload, trial.parameters);
    if (!invocation.oracleArgv || !trial.run_id) return;
    const workspace = this.workspace.open();
    const policy = loadWorkspacePolicy(workspace.root);
    const folder = processStagingPath(workspace, `oracle-${trial.run_id}`);
    mkdirSync(join(folder, "private"), { recursive: true, mode: 0o700 });
    const receiptPath = join(folder, "private", "receipt.json");
    let verdict: OracleVerdict = { exitCode: null, validation: "failed", receipt: null, receiptError: null, limitations: [] };
    try {
      const result = await runProcess(
        {
          argv: invocation.oracleArgv,
          cwd: resolve(this.workspace.projectRoot, invocation.cwd),
          deadline: Date.now() + workload.timeout_seconds * 1000,
          stdoutPath: join(folder, "oracle-stdout.txt"),
          stderrPath: join(folder, "oracle-stderr.txt"),
          outputBudgetBytes: policy.limits.max_output_bytes,
          environment: invocation.environment,
          trustedEnvironment: { [oracleReceiptVariable]: receiptPath },
        },
        { signal, gracePeriodMs: policy.limits.cleanup_grace_seconds * 1000, inheritEnvironment: inheritedEnvironment(policy) },
      );
      const outputs = oracleOutputs(folder, strength);
      let receipt: OracleReceipt | null = null;
      let receiptError: string | null = null;
      if (existsSync(receiptPath)) {
        const parsed = parseOracleReceipt(readFileSync(receiptPath));
        outputs.push({ path: receiptPath, role: "validation_receipt", name: "oracle-receipt.json", mediaType: "application/json" });
        if ("error" in parsed) receiptError = parsed.error;
        else receipt = { ...parsed.receipt, raw_artifact_id: null };
      }
      verdict = judge(result, receipt, receiptError);
      await this.publish(workspace, trial.run_id, strength, outputs, verdict, policy.limits.max_artifact_bytes);
    } catch (error) {
      verdict = {
        ...verdict,
        validation: "inconclusive",
        receiptError: `the oracle could not run: ${toFlameoxError(error).message.slice(0, 200)}`,
      };
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
    trial.validation_status = verdict.validation;
    trial.oracle = {
      strength,
      exit_code: verdict.exitCode,
      validation_status: verdict.validation,
      receipt: verdict.receipt,
      receipt_error: verdict.receiptError,
    };
  }

  /** Stores the oracle's outputs as validation artifacts and records the verdict as the run's next revision. */
  private async publish(
    workspace: Workspace,
    runId: string,
    strength: string,
    outputs: OracleOutput[],
    verdict: OracleVerdict,
    maxBytes: number,
  ): Promise<void> {
    const artifacts: { entry: OracleOutput; artifact: StagedArtifact }[] = [];
    try {
      for (const entry of outputs) artifacts.push({ entry, artifact: await stageArtifactFile(workspace, entry.path, { maxBytes }) });
    } catch (error) {
      reclaimUnpublished(
        workspace,
        artifacts.map((item) => item.artifact),
      );
      throw error;
    }
    if (verdict.receipt)
      verdict.receipt.raw_artifact_id = artifacts.find((item) => item.entry.role === "validation_receipt")?.artifact.artifact_id ?? null;
    try {
      this.record(workspace, runId, strength, artifacts, verdict);
    } catch (error) {
      reclaimUnpublished(
        workspace,
        artifacts.map((item) => item.artifact),
      );
      throw error;
    }
  }

  /** One transaction: the outputs placed and registered, the verdict as the run's next revision. */
  private record(
    workspace: Workspace,
    runId: string,
    strength: string,
    artifacts: { entry: OracleOutput; artifact: StagedArtifact }[],
    verdict: OracleVerdict,
  ): void {
    workspace.state.write(() => {
      const database = workspace.state.database;
      const references = artifacts.map(
        ({ entry, artifact }) =>
          publishArtifact(workspace, {
            runId,
            artifact,
            displayName: entry.name,
            kind: "validation_output",
            role: entry.role,
            mediaType: entry.mediaType,
            sensitivity: "internal",
            producer: "oracle",
            producerVersion: null,
            format: entry.mediaType === "application/json" ? "json" : "text",
          }).reference,
      );
      const current = readRun(database, runId)!;
      reviseRun(
        database,
        runId,
        current.revision,
        (manifest) => ({
          ...manifest,
          validation_status: verdict.validation,
          artifacts: [...manifest.artifacts, ...references],
          limitations: [
            ...manifest.limitations,
            ...verdict.limitations,
            ...(verdict.receiptError ? [`The oracle receipt is invalid: ${verdict.receiptError}.`] : []),
          ],
          oracle: { strength, exit_code: verdict.exitCode, receipt: verdict.receipt, receipt_error: verdict.receiptError },
        }),
        "oracle validation",
      );
      advanceCorpus(database, workspace.id, `oracle ${runId}`);
    });
  }
}

/** The oracle's stdout (always) and stderr (when it wrote any), as validation artifacts. */
function oracleOutputs(folder: string, strength: string): OracleOutput[] {
  const outputs: OracleOutput[] = [];
  const stdout = join(folder, "oracle-stdout.txt");
  const stderr = join(folder, "oracle-stderr.txt");
  if (existsSync(stdout))
    outputs.push({ path: stdout, role: `validation_${strength}`, name: "oracle-stdout.txt", mediaType: "text/plain" });
  if (existsSync(stderr) && statSync(stderr).size > 0)
    outputs.push({ path: stderr, role: "validation_stderr", name: "oracle-stderr.txt", mediaType: "text/plain" });
  return outputs;
}
