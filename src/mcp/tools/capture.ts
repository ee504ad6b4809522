import * as v from "valibot";
import { artifactKinds } from "../../services/import-service.ts";
import { additive, execute, idempotentExecute, readOnly } from "../annotations.ts";
import { defineTool } from "../define-tool.ts";

const scalar = v.union([v.pipe(v.string(), v.maxLength(4096)), v.number(), v.boolean()]);

export const captureTools = [
  defineTool({
    name: "plan_capture",
    description:
      "Plan a capture of a declared workload with one adapter (command, py-spy, perf, pyperf, pytest, coverage, memray, torch.profiler, python-startup, v8; see get_declared_workflow for what is ready here). adapter_options are the adapter's typed options (list_capabilities shows them); torch_profiler_options is another name for torch.profiler's adapter_options and is only accepted with that adapter. Read-only: resolves parameters, checks the executables and the adapter's permission (preflight_mode='auto' runs the bounded probes), and returns the exact command, collector argv, limits, warnings and a single-use plan_id that expires (default 300 s). It never runs the workload and takes no argv or cwd. capture_mode='auto' runs uncontained and records that limitation. Call execute_capture_plan with the plan_id next.",
    input: v.strictObject({
      workload_name: v.pipe(v.string(), v.minLength(1), v.maxLength(100)),
      adapter: v.pipe(v.string(), v.minLength(1), v.maxLength(100)),
      parameters: v.optional(v.record(v.pipe(v.string(), v.minLength(1), v.maxLength(100)), scalar), {}),
      // Values are scalars, short scalar lists (torch.profiler activities) or flat scalar objects (its schedule);
      // each adapter's own strict schema decides what it accepts.
      adapter_options: v.optional(
        v.record(
          v.pipe(v.string(), v.minLength(1), v.maxLength(100)),
          v.union([
            scalar,
            v.null(),
            v.pipe(v.array(scalar), v.maxLength(16)),
            v.record(v.pipe(v.string(), v.minLength(1), v.maxLength(100)), scalar),
          ]),
        ),
        {},
      ),
      torch_profiler_options: v.optional(
        v.nullable(
          v.record(
            v.pipe(v.string(), v.minLength(1), v.maxLength(100)),
            v.union([
              scalar,
              v.pipe(v.array(scalar), v.maxLength(16)),
              v.record(v.pipe(v.string(), v.minLength(1), v.maxLength(100)), scalar),
            ]),
          ),
        ),
        null,
      ),
      preflight_mode: v.optional(v.picklist(["auto", "passive", "active"]), "auto"),
      capture_mode: v.optional(v.picklist(["auto", "managed", "trusted_local"]), "auto"),
    }),
    annotations: readOnly,
    async handler(input, { services }) {
      const result = await services.captures.plan({
        workload_name: input.workload_name,
        adapter: input.adapter,
        parameters: input.parameters,
        adapter_options: Object.fromEntries(Object.entries(input.adapter_options).filter(([, value]) => value !== null)),
        torch_profiler_options: input.torch_profiler_options ?? null,
        preflight_mode: input.preflight_mode,
        capture_mode: input.capture_mode,
      });
      return {
        result,
        text: `Planned ${result.adapter} capture with ${result.containment} containment; call execute_capture_plan with plan_id next.`,
      };
    },
  }),
  defineTool({
    name: "execute_capture_plan",
    description:
      "Execute a plan from plan_capture: the plan_id is consumed atomically before any process starts (a consumed plan is never retryable; on a lost response inspect list_runs/get_run), every bound input is rechecked, progress is reported through 8 phases, and cancellation kills the whole process tree and records a cancelled run. Returns the run receipt; a non-zero exit is a recorded 'failed' run, a timeout is PROCESS_TIMEOUT with the run_id. Call analyze_hotspots (profiles) or get_run next.",
    input: v.strictObject({ plan_id: v.pipe(v.string(), v.minLength(1), v.maxLength(200)) }),
    annotations: execute,
    async handler(input, { services, signal, progress }) {
      const result = await services.captures.execute(input.plan_id, {
        signal,
        progress: (step, total, message) => progress(step, total, message),
      });
      return {
        result,
        text: `Capture run ${result.run_id} is ${result.execution_status}.`,
        links: [{ uri: result.resource_uri, name: `Run ${result.run_id}`, description: "The captured run's manifest." }],
      };
    },
  }),
  defineTool({
    name: "start_detached_capture",
    description:
      "Start a long capture from a plan_capture plan_id without holding this request open: the plan is consumed and rechecked now, the workload runs in this server process, and the result is the run_id with state 'starting'/'running'. Retry-safe: the same idempotency_key with the same plan reconnects to the same run; the same key with another plan is refused. Poll get_detached_capture; cancel with cancel_detached_capture.",
    input: v.strictObject({
      plan_id: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
      idempotency_key: v.pipe(v.string(), v.minLength(8), v.maxLength(200), v.regex(/^[A-Za-z0-9._:/-]+$/)),
    }),
    annotations: idempotentExecute,
    async handler(input, { services }) {
      const result = await services.detachedCaptures.start(input);
      return {
        result,
        text: `Detached capture ${result.run_id} is ${result.state}.`,
        links: [{ uri: result.resource_uri, name: `Run ${result.run_id}`, description: "The detached capture's run." }],
      };
    },
  }),
  defineTool({
    name: "get_detached_capture",
    description:
      "Status of a detached capture: state (starting, running, terminal, failed_to_start, unmanaged_after_restart), execution/capture/validation status, recent progress and failure. When terminal, call get_run or analyze_hotspots next.",
    input: v.strictObject({ run_id: v.pipe(v.string(), v.minLength(1), v.maxLength(200)) }),
    annotations: readOnly,
    async handler(input, { services }) {
      const result = services.detachedCaptures.status(input.run_id);
      return { result, text: `Detached capture ${result.run_id} is ${result.state}.` };
    },
  }),
  defineTool({
    name: "cancel_detached_capture",
    description:
      "Cancel a detached capture this server started: the whole process tree is killed, the run is recorded as cancelled with cleanup_complete, and the terminal status is returned. Cancelling a finished capture returns it unchanged.",
    input: v.strictObject({ run_id: v.pipe(v.string(), v.minLength(1), v.maxLength(200)) }),
    annotations: idempotentExecute,
    async handler(input, { services }) {
      const result = await services.detachedCaptures.cancel(input.run_id);
      return { result, text: `Detached capture ${result.run_id} is ${result.state} (${result.execution_status ?? "unknown"}).` };
    },
  }),
  defineTool({
    name: "import_artifact",
    description:
      "Import an existing file as a new import run: profiles (speedscope, Brendan Gregg collapsed stacks, py-spy raw, pprof, V8 .cpuprofile) and Chrome/Torch trace JSON are detected and normalized into evidence at once; other kinds are kept for the matching extract_* tool. path is relative to source_root ('project' = the fixed project root, 'temp' = the system temporary folder) or absolute inside it; symbolic links out of the root, non-regular files, NUL bytes and files over the size limit are refused. kind and producer are auto-detected when omitted (use kind='execution_trace' for Chrome and Torch traces).",
    input: v.strictObject({
      path: v.pipe(v.string(), v.minLength(1), v.maxLength(4096)),
      kind: v.optional(v.nullable(v.picklist(artifactKinds)), null),
      sensitivity: v.optional(v.picklist(["normal", "internal", "sensitive"]), "internal"),
      media_type: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(200))), null),
      source_root: v.optional(v.picklist(["project", "temp"]), "project"),
      producer: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(100)), "auto"),
      producer_version: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(100))), null),
    }),
    annotations: additive,
    async handler(input, { services }) {
      const result = await services.imports.importArtifact({
        path: input.path,
        kind: input.kind ?? null,
        sensitivity: input.sensitivity,
        media_type: input.media_type ?? null,
        source_root: input.source_root,
        producer: input.producer,
        producer_version: input.producer_version ?? null,
      });
      return {
        result,
        text: `Imported ${result.artifact_id} in run ${result.run_id}.`,
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
];
