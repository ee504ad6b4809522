import type { WorkloadConfig } from "../config/project-config-schema.ts";
import { toFlameoxError } from "../domain/errors.ts";
import type { TrialOutcome } from "../domain/experiment.ts";
import type { Trial } from "../store/experiment-store.ts";
import { readRun } from "../store/run-store.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";
import type { CaptureService } from "./capture-service.ts";
import type { OracleRunner } from "./oracle-runner.ts";

/** How one trial is captured: the experiment's adapter and options, and the oracle to validate with (if any). */
export type TrialProtocol = {
  workload_name: string;
  adapter: string;
  adapter_options: Record<string, unknown>;
  oracle_strength: string | null;
};

/** First match wins; see the trial outcome documentation in get_experiment. */
function classify(trial: Trial): void {
  const execution = trial.execution_status;
  const validation = trial.validation_status;
  const set = (outcome: TrialOutcome, failureClass: string | null) => {
    trial.outcome = outcome;
    trial.failure_class = failureClass;
  };
  if (execution === "timed_out") set("timed_out", "timeout");
  else if (execution === "cancelled") set("cancelled", "cancellation");
  else if (execution !== "succeeded") set("failed", "process_failure");
  else if (validation === "failed") set("failed", "oracle_failed");
  else if (trial.oracle?.receipt_error) set("invalid", "oracle_receipt_error");
  else if (validation === "inconclusive") set("invalid", "oracle_inconclusive");
  else if (validation === "unsupported") set("unsupported", "oracle_unsupported");
  else set("succeeded", null);
}

/**
 * One trial = one capture plan and execution with the trial's parameters, then the oracle on a
 * successful run. A failure that leaves a finished run is classified from that run; one that never
 * produced a run is an infrastructure failure (or unsupported, when a capability is missing).
 */
export class TrialRunner {
  constructor(
    private readonly workspace: WorkspaceHandle,
    private readonly captures: CaptureService,
    private readonly oracle: OracleRunner,
  ) {}

  async run(trial: Trial, protocol: TrialProtocol, workload: WorkloadConfig, signal?: AbortSignal): Promise<void> {
    trial.started_at = new Date().toISOString();
    try {
      const plan = await this.captures.plan({
        workload_name: protocol.workload_name,
        adapter: protocol.adapter,
        parameters: trial.parameters,
        adapter_options: protocol.adapter_options,
        preflight_mode: "passive",
        capture_mode: "auto",
      });
      trial.run_id = plan.run_id;
      const receipt = await this.captures.execute(plan.plan_id, { signal });
      trial.execution_status = receipt.execution_status;
      trial.validation_status = receipt.validation_status;
      if (receipt.execution_status === "succeeded" && protocol.oracle_strength !== null && receipt.capture_status !== "failed") {
        await this.oracle.validate(trial, protocol.oracle_strength, workload, signal);
      }
    } catch (error) {
      const typed = toFlameoxError(error);
      const run = trial.run_id ? readRun(this.workspace.state().database, trial.run_id) : null;
      if (run && run.execution_status !== "planned" && run.execution_status !== "running") {
        trial.execution_status = run.execution_status;
        trial.validation_status = run.validation_status;
      } else if (typed.code !== "PROCESS_CANCELLED") {
        trial.run_id = run ? trial.run_id : null;
        trial.outcome = typed.code === "CAPABILITY_UNAVAILABLE" ? "unsupported" : "infrastructure_failed";
        trial.failure_class = typed.code.toLowerCase();
        trial.failure_message = typed.message.slice(0, 500);
        trial.finished_at = new Date().toISOString();
        return;
      }
      trial.failure_message = typed.message.slice(0, 500);
      if (typed.code === "PROCESS_CANCELLED") trial.execution_status = "cancelled";
    }
    trial.finished_at = new Date().toISOString();
    classify(trial);
  }
}
