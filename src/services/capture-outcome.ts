/**
 * What a capture's receipt says when the run did not simply succeed: the error a cancelled or timed-out
 * run is reported as (after it is published), and the output tails a failed run's receipt repeats.
 */
import { type FlameoxError, processCancelled, processTimeout } from "../domain/errors.ts";
import type { ProcessResult } from "../exec/broker.ts";
import type { RunManifest } from "../store/run-store.ts";
import type { CaptureReceipt, ConsumedPlan } from "./capture-plan.ts";

/** A cancelled or timed-out capture is kept, and reported as the error it is. */
export function terminalFailure(intent: ConsumedPlan, result: ProcessResult, receipt: CaptureReceipt): FlameoxError | null {
  if (receipt.execution_status === "cancelled") {
    return processCancelled(
      `Capture run ${intent.run_id} was cancelled; the process tree was ${result.cleanup_complete ? "fully cleaned up" : "not fully cleaned up"}.`,
      {
        runId: intent.run_id,
        details: { run_id: intent.run_id, cleanup_complete: result.cleanup_complete },
        remediation: ["Inspect the run with get_run; plan a new capture to try again."],
        next: { tool: "get_run", arguments: { run_id: intent.run_id } },
      },
    );
  }
  if (receipt.execution_status === "timed_out") {
    return processTimeout(
      `Capture run ${intent.run_id} exceeded the workload's timeout of ${intent.timeout_seconds} s and was stopped; its output is kept.`,
      {
        runId: intent.run_id,
        details: {
          run_id: intent.run_id,
          timeout_seconds: intent.timeout_seconds,
          cleanup_complete: result.cleanup_complete,
          artifact_ids: receipt.artifact_ids,
        },
        remediation: ["Raise the workload's timeout_seconds with configure_workload, or plan a smaller parameter choice."],
        next: {
          tool: "plan_capture",
          arguments: { workload_name: intent.workload_name, adapter: intent.adapter, parameters: intent.parameters },
        },
      },
    );
  }
  return null;
}

/** The tails get_run shows, as the receipt of a failed run repeats them. */
export function outputTail(run: RunManifest | null): NonNullable<CaptureReceipt["output_tail"]> {
  const process = (run?.process ?? {}) as Record<string, { tail?: string; tail_complete?: boolean } | undefined>;
  const tail = (stream: "stdout" | "stderr") => ({
    tail: process[stream]?.tail ?? "",
    tail_complete: process[stream]?.tail_complete ?? true,
  });
  return { stdout: tail("stdout"), stderr: tail("stderr") };
}
