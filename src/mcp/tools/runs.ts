import * as v from "valibot";
import { readOnly } from "../annotations.ts";
import { defineTool } from "../define-tool.ts";

const limit = (maximum: number, fallback: number) =>
  v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(maximum)), fallback);
const cursor = v.optional(v.nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(4000))), null);
const identifier = v.pipe(v.string(), v.minLength(1), v.maxLength(200));
const executionStatus = v.picklist(["planned", "running", "succeeded", "failed", "timed_out", "cancelled", "not_applicable"]);
const validationStatus = v.picklist(["not_requested", "pending", "passed", "failed", "inconclusive", "unsupported", "cancelled"]);

export const runTools = [
  defineTool({
    name: "list_runs",
    description:
      "List runs newest first (created_at desc, run_id asc) with status, workload, adapter and artifact kinds. Bounded: limit (1..1000, default 100), total, truncated and a keyset next_cursor; filters narrow by workload, adapter, run type, statuses, identities and creation time. Use get_run for one run's manifest.",
    input: v.strictObject({
      limit: limit(1000, 100),
      cursor,
      filter: v.optional(
        v.nullable(
          v.strictObject({
            workload_name: v.optional(v.nullable(identifier)),
            adapter: v.optional(v.nullable(identifier)),
            run_type: v.optional(v.nullable(v.picklist(["execution", "import"]))),
            execution_status: v.optional(v.nullable(v.pipe(v.array(executionStatus), v.maxLength(8)))),
            validation_status: v.optional(v.nullable(v.pipe(v.array(validationStatus), v.maxLength(8)))),
            workload_definition_id: v.optional(v.nullable(identifier)),
            source_state_id: v.optional(v.nullable(identifier)),
            environment_id: v.optional(v.nullable(identifier)),
            created_after: v.optional(v.nullable(v.pipe(v.string(), v.isoTimestamp()))),
            created_before: v.optional(v.nullable(v.pipe(v.string(), v.isoTimestamp()))),
          }),
        ),
        null,
      ),
    }),
    annotations: readOnly,
    async handler(input, { services }) {
      const result = services.runs.listRuns({ limit: input.limit, cursor: input.cursor ?? null, filter: input.filter ?? null });
      return { result, text: `Returned ${result.returned} run${result.returned === 1 ? "" : "s"} of ${result.total}.` };
    },
  }),
  defineTool({
    name: "get_run",
    description:
      "One run's manifest: statuses (execution, capture, validation), workload and parameters, command, process outcome (exit code, signal, timeout, cancellation, cleanup_complete), runtime measurements (wall, CPU, peak RSS) with unavailable ones listed, identities, artifacts and limitations. Never returns artifact bytes.",
    input: v.strictObject({ run_id: identifier }),
    annotations: readOnly,
    async handler(input, { services }) {
      const result = services.runs.getRun(input.run_id);
      return {
        result,
        text: `Run ${result.run_id} is ${result.execution_status} (capture ${result.capture_status}).`,
        links: [{ uri: result.resource_uri, name: `Run ${result.run_id}`, description: "This run's manifest." }],
      };
    },
  }),
  defineTool({
    name: "list_artifacts",
    description:
      "List stored artifacts (content-addressed by sha256) with size, kinds, registration count and effective sensitivity; optionally only one run's or one kind's. Bounded with limit, total, truncated and next_cursor. Metadata only.",
    input: v.strictObject({
      limit: limit(1000, 100),
      cursor,
      run_id: v.optional(v.nullable(identifier), null),
      kind: v.optional(v.nullable(identifier), null),
    }),
    annotations: readOnly,
    async handler(input, { services }) {
      const result = services.runs.listArtifacts({
        limit: input.limit,
        cursor: input.cursor ?? null,
        run_id: input.run_id ?? null,
        kind: input.kind ?? null,
      });
      return { result, text: `Returned ${result.returned} of ${result.total} artifacts.` };
    },
  }),
  defineTool({
    name: "get_artifact",
    description:
      "One artifact's metadata: sha256 identity, size, registrations (run, kind, role, producer, sensitivity), and the evidence extracted from it. Never returns the artifact's bytes; pass run_id to see only that run's registration.",
    input: v.strictObject({ artifact_id: identifier, run_id: v.optional(v.nullable(identifier), null) }),
    annotations: readOnly,
    async handler(input, { services }) {
      const result = services.runs.getArtifact(input.artifact_id, input.run_id ?? null);
      return {
        result,
        text: `Artifact ${result.artifact_id} is metadata-only; read ${result.resource_uri} for the canonical resource.`,
        links: [{ uri: result.resource_uri, name: `Artifact ${result.artifact_id}`, description: "Artifact metadata (no bytes)." }],
      };
    },
  }),
];
