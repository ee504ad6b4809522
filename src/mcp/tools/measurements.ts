import * as v from "valibot";
import { readOnly } from "../annotations.ts";
import { defineTool } from "../define-tool.ts";
import { limitDefaulting, cursor } from "./evidence-inputs.ts";

/** query_measurements: measurement rows, keyset-paged (services.measurements). */
export const measurementTools = [
  defineTool({
    name: "query_measurements",
    description:
      "Measurements (benchmark values, pytest durations and counts, startup and import times, memory, runtime resources) filtered by run_id, artifact_id and name_prefix; warm-ups are excluded unless include_warmups. Each row has value, unit, aggregation, is_warmup, worker, run/value index, phase and dimensions (test nodeid, benchmark, package …). Bounded: limit (1..1000, default 100), total, truncated and a keyset next_cursor.",
    input: v.strictObject({
      run_id: v.optional(v.nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(200))), null),
      artifact_id: v.optional(v.nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(200))), null),
      name_prefix: v.optional(v.nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(200))), null),
      include_warmups: v.optional(v.boolean(), false),
      limit: limitDefaulting(100),
      cursor,
    }),
    annotations: readOnly,
    async handler(input, { services }) {
      const result = await services.measurements.query({
        run_id: input.run_id ?? null,
        artifact_id: input.artifact_id ?? null,
        name_prefix: input.name_prefix ?? null,
        include_warmups: input.include_warmups,
        limit: input.limit,
        cursor: input.cursor ?? null,
      });
      return { result, text: `Returned ${result.returned} of ${result.total} measurements.` };
    },
  }),
];
