import * as v from "valibot";
import { readOnly } from "../annotations.ts";
import { defineTool } from "../define-tool.ts";

const workflowKind = v.picklist(["workload", "experiment"]);

export const discoveryTools = [
  defineTool({
    name: "list_declared_workflows",
    description:
      "List the named workloads declared in flameox.toml (no arguments), or experiments with kind='experiment': name, definition_id, parameter names, timeout. Bounded: limit (1..100, default 50) and an opaque cursor for the next page. Call get_declared_workflow next for one entry's parameters and adapter choices.",
    input: v.strictObject({
      kind: v.optional(workflowKind, "workload"),
      limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100)), 50),
      cursor: v.optional(v.nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(2000))), null),
    }),
    annotations: readOnly,
    async handler(input, { services }) {
      const result = await services.workloads.listDeclared({ kind: input.kind, limit: input.limit, cursor: input.cursor ?? null });
      return { result, text: `Returned ${result.returned} declared ${input.kind} definitions.` };
    },
  }),
  defineTool({
    name: "get_declared_workflow",
    description:
      "Show one declared workload (or experiment): its definition, allowed parameter values, requirements, and up to 64 adapter options with capability status, planning disposition (ready, active_probe_required, unavailable), permissions, features, options and remedies. Call plan_capture next with the workload name and a ready adapter.",
    input: v.strictObject({
      kind: v.optional(workflowKind, "workload"),
      name: v.pipe(v.string(), v.minLength(1), v.maxLength(100)),
    }),
    annotations: readOnly,
    async handler(input, { services }) {
      const result = await services.workloads.getDeclared({ kind: input.kind, name: input.name });
      return { result, text: `Loaded declared ${input.kind} ${input.name}.` };
    },
  }),
];
