/** The inputs the evidence tool families (memory, execution, traces, failures, measurements, evidence) share. */
import * as v from "valibot";

export const runOrArtifact = v.pipe(v.string(), v.minLength(1), v.maxLength(200));
export const optionalRunOrArtifact = v.optional(v.nullable(runOrArtifact), null);
export const limitDefaulting = (fallback: number) => v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000)), fallback);
export const strictLimit = v.pipe(v.number("Input should be a valid integer"), v.integer(), v.minValue(1), v.maxValue(1000));
export const cursor = v.optional(v.nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(4096))), null);
export const identifier = v.pipe(v.string(), v.minLength(1), v.maxLength(200));
export const executionStatus = v.picklist(["not_applicable", "planned", "running", "succeeded", "failed", "timed_out", "cancelled"]);

export const runFilter = v.optional(
  v.nullable(
    v.strictObject({
      workload_name: v.optional(v.nullable(identifier)),
      adapter: v.optional(v.nullable(identifier)),
      run_type: v.optional(v.nullable(v.picklist(["execution", "import"]))),
      execution_status: v.optional(v.nullable(v.pipe(v.array(executionStatus), v.maxLength(8)))),
      workload_definition_id: v.optional(v.nullable(identifier)),
      source_state_id: v.optional(v.nullable(identifier)),
      environment_id: v.optional(v.nullable(identifier)),
      created_after: v.optional(v.nullable(v.pipe(v.string(), v.isoTimestamp()))),
      created_before: v.optional(v.nullable(v.pipe(v.string(), v.isoTimestamp()))),
    }),
  ),
  null,
);

export const evidenceRefTypes = ["analysis", "artifact", "comparison", "generation", "observation", "run", "run_set", "trial"] as const;
