import {
  DetachedCaptureRequest,
  ExecutePlanRequest,
  ImportArtifactRequest,
  ImportXctraceRequest,
  PlanCaptureRequest,
  StartDetachedCaptureRequest,
} from "../../domain/requests/captures.ts";
import { additive, execute, idempotentExecute, readOnly } from "../annotations.ts";
import { defineTool } from "../define-tool.ts";

export const captureTools = [
  defineTool({
    name: "plan_capture",
    description: "Plan a capture of a workload with an adapter; runs nothing. Next: execute_capture_plan.",
    input: PlanCaptureRequest,
    annotations: readOnly,
    async handler(input, { services }) {
      const result = await services.captures.plan({
        ...input,
        adapter_options: Object.fromEntries(Object.entries(input.adapter_options).filter(([, value]) => value !== null)),
      });
      return { result };
    },
  }),
  defineTool({
    name: "execute_capture_plan",
    description:
      "Run a plan: run, analysis, failure output. plan_id is consumed: never retry (list_runs if lost). Over 45 s: start_detached_capture.",
    input: ExecutePlanRequest,
    annotations: execute,
    async handler(input, { services, signal, progress }) {
      const result = await services.captures.execute(input.plan_id, {
        signal,
        progress,
      });
      return {
        result,
        links: [{ uri: result.resource_uri, name: `Run ${result.run_id}`, description: "The captured run's manifest." }],
      };
    },
  }),
  defineTool({
    name: "start_detached_capture",
    description: "Start a plan in the background; returns run_id at once. Next: get_detached_capture.",
    input: StartDetachedCaptureRequest,
    annotations: idempotentExecute,
    async handler(input, { services }) {
      const result = await services.detachedCaptures.start(input);
      return {
        result,
        links: [{ uri: result.resource_uri, name: `Run ${result.run_id}`, description: "The detached capture's run." }],
      };
    },
  }),
  defineTool({
    name: "get_detached_capture",
    description: "A detached capture's state and progress; analysis once ended. Next: next_tool.",
    input: DetachedCaptureRequest,
    annotations: readOnly,
    async handler(input, { services }) {
      const result = await services.detachedCaptures.status(input.run_id);
      return { result };
    },
  }),
  defineTool({
    name: "cancel_detached_capture",
    description: "Cancel a detached capture: kills its process tree, records the run cancelled.",
    input: DetachedCaptureRequest,
    annotations: idempotentExecute,
    async handler(input, { services }) {
      const result = await services.detachedCaptures.cancel(input.run_id);
      return { result };
    },
  }),
  defineTool({
    name: "import_artifact",
    description: "Import a profile, trace, log or other file as a run and evidence. Next: evidence.next_tool.",
    input: ImportArtifactRequest,
    annotations: additive,
    async handler(input, { services }) {
      const result = await services.imports.importArtifact(input);
      return {
        result,
        links: [
          { uri: result.run_resource_uri, name: `Run ${result.run_id}`, description: "The import run." },
          {
            uri: result.artifact_resource_uri,
            name: `Artifact ${result.artifact_id}`,
            description: "The imported artifact's metadata (no bytes).",
          },
        ],
      };
    },
  }),
  defineTool({
    name: "import_xctrace",
    description: "Keep an Instruments .trace folder (macOS) as a sensitive artifact with its contents.",
    input: ImportXctraceRequest,
    annotations: additive,
    async handler(input, { services, signal }) {
      const result = await services.xctraceImports.importTrace(input, signal);
      return {
        result,
        links: [
          { uri: result.run_resource_uri, name: `Run ${result.run_id}`, description: "The import run." },
          { uri: result.artifact_resource_uri, name: "Package", description: "The package's metadata (no bytes)." },
        ],
      };
    },
  }),
];
