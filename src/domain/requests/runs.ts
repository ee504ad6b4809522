/** Requests of the run and artifact listings, and the run filter that failure analysis shares with them. */
import * as v from "valibot";
import { executionStatuses, runTypes, validationStatuses } from "../vocabulary.ts";
import { cursor, described, identifier, limit, name, optionalOrNull, timestamp } from "./fields.ts";
import { pageLimits } from "./limits.ts";

const statuses = <Options extends readonly string[]>(options: Options, description: string) =>
  optionalOrNull(described(v.pipe(v.array(v.picklist(options)), v.maxLength(8)), description));

export const RunFilter = optionalOrNull(
  described(
    v.strictObject({
      workload_name: optionalOrNull(name("Only this workload.")),
      adapter: optionalOrNull(name("Only this adapter.")),
      run_type: optionalOrNull(described(v.picklist(runTypes), "Captured or imported.")),
      execution_status: statuses(executionStatuses, "Any of these."),
      validation_status: statuses(validationStatuses, "Any of these."),
      workload_definition_id: optionalOrNull(identifier("Only this definition.")),
      source_state_id: optionalOrNull(identifier("Only this source state.")),
      environment_id: optionalOrNull(identifier("Only this environment.")),
      created_after: timestamp("Created after."),
      created_before: timestamp("Created before."),
    }),
    "All must match.",
  ),
);

export const ListRunsRequest = v.strictObject({ limit: limit(pageLimits.runs), cursor, filter: RunFilter });

export const GetRunRequest = v.strictObject({ run_id: identifier("Run id.") });

export const ListArtifactsRequest = v.strictObject({
  limit: limit(pageLimits.artifacts),
  cursor,
  run_id: optionalOrNull(identifier("Run id.")),
  kind: optionalOrNull(identifier("Only this kind.")),
});

export const GetArtifactRequest = v.strictObject({
  artifact_id: identifier("Artifact id."),
  run_id: optionalOrNull(identifier("Run id.")),
});
