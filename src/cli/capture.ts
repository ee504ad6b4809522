import { defineCommand } from "citty";
import { cliOptions, cliServices } from "./context.ts";
import { emit, renderKeyValues } from "./output.ts";
import { parseStructuredInput } from "./structured-input.ts";
import { cliLog } from "./log.ts";
import { withInterrupt } from "./interrupt.ts";
import { captureAdapterNames, type CaptureReceipt, type PlanCaptureRequest } from "../services/capture-service.ts";
import { ImportXctraceRequest } from "../domain/requests/captures.ts";
import { checkedRequest } from "./arguments.ts";
import { executionRefused } from "../domain/errors.ts";

const planArguments = {
  adapter: {
    type: "positional",
    required: true,
    description: `Adapter: ${captureAdapterNames.join(", ")} (see flameox capabilities for what is ready here).`,
  },
  workload: { type: "string", required: true, description: "Name of a workload declared in flameox.toml." },
  parameters: { type: "string", description: "Workload parameter overrides as a JSON object or @file.json." },
  "adapter-options": { type: "string", description: "Adapter options as a JSON object, e.g. '{\"rate\": 200}'." },
  preflight: { type: "string", default: "auto", description: "auto | passive | active" },
} as const;

function planRequest(args: Record<string, unknown>): PlanCaptureRequest {
  const preflight = String(args.preflight ?? "auto");
  return {
    workload_name: String(args.workload),
    adapter: String(args.adapter),
    parameters: parseStructuredInput(args.parameters as string | undefined, "--parameters") as PlanCaptureRequest["parameters"],
    adapter_options: parseStructuredInput(args["adapter-options"] as string | undefined, "--adapter-options"),
    preflight_mode: preflight === "passive" || preflight === "active" ? preflight : "auto",
    capture_mode: "auto",
  };
}

export const captureCommand = defineCommand({
  meta: { name: "capture", description: "Plan and run captures of declared workloads (never ad-hoc commands)." },
  subCommands: {
    plan: defineCommand({
      meta: { name: "plan", description: "Resolve and preflight a capture of a named workload; runs nothing." },
      args: planArguments,
      async run({ args }) {
        const plan = await cliServices().captures.plan(planRequest(args));
        emit(cliOptions(), plan, () => renderPlan(plan));
      },
    }),
    run: defineCommand({
      meta: { name: "run", description: "Plan, then execute one capture of a named workload, with progress on stderr." },
      args: planArguments,
      async run({ args }) {
        await planAndRun(planRequest(args));
      },
    }),
  },
});

/** Plans then executes in this process, cancelling the tree on Ctrl-C; the plan is part of the JSON result. */
export async function planAndRun(request: PlanCaptureRequest): Promise<void> {
  const services = cliServices();
  const options = cliOptions();
  const plan = await services.captures.plan(request);
  const log = cliLog(options);
  if (!options.json) log.info(renderPlan(plan));
  await withInterrupt(async (signal) => {
    const receipt = await services.captures.execute(plan.plan_id, {
      signal,
      progress: (step, total, message) => {
        // Heartbeats between steps carry fractional progress; people read the step they are in.
        log.info(`[${Math.floor(step)}/${total}] ${message}`);
      },
    });
    emit(options, { plan, receipt }, () =>
      [
        renderKeyValues(receipt, [
          "run_id",
          "execution_status",
          "capture_status",
          "validation_status",
          "exit_code",
          "artifact_ids",
          "evidence_tables",
        ]),
        ...renderOutcome(receipt),
      ].join("\n"),
    );
  });
}

/** What the run said and the adapter's first answer, for people; --json carries the same in full. */
function renderOutcome(receipt: CaptureReceipt): string[] {
  const lines: string[] = [];
  if (receipt.exception) lines.push(`exception: ${receipt.exception.exception_type}: ${receipt.exception.message}`);
  const stderr = receipt.output_tail?.stderr.tail.trimEnd();
  if (stderr && !receipt.exception) lines.push("stderr (end):", ...stderr.split("\n").map((line) => `  ${line}`));
  if (receipt.analysis?.summary) lines.push(`${receipt.analysis.kind}: ${JSON.stringify(receipt.analysis.summary)}`);
  else if (receipt.analysis) lines.push(`${receipt.analysis.kind}: ${receipt.analysis.reason}`);
  lines.push(`next: ${receipt.next_tool} ${JSON.stringify(receipt.next_arguments)}`);
  return lines;
}

function renderPlan(plan: Awaited<ReturnType<ReturnType<typeof cliServices>["captures"]["plan"]>>): string {
  return [
    `plan ${plan.adapter} capture of '${plan.workload_name}' (expires ${plan.expires_at})`,
    `  command: ${plan.command.argv.join(" ")}  (cwd ${plan.command.cwd}, timeout ${plan.command.timeout_seconds}s)`,
    `  collector: ${plan.collector_argv.join(" ")}`,
    ...plan.warnings.map((warning) => `  warning: ${warning}`),
  ].join("\n");
}

/**
 * A path typed on the command line is taken from the current folder, as in any shell (agents pass
 * root-relative paths over MCP). A relative one that is not there is refused with that rule, and
 * with the path that works when the name is a file of the project.
 */
async function typedPath(typed: string, what: "file" | "folder"): Promise<string> {
  const { existsSync } = await import("node:fs");
  const { isAbsolute, relative, resolve } = await import("node:path");
  const fromHere = resolve(process.cwd(), typed);
  if (isAbsolute(typed) || existsSync(fromHere)) return fromHere;
  const inProject = resolve(cliServices().projectRoot, typed);
  const elsewhere = existsSync(inProject) ? relative(process.cwd(), inProject) : null;
  const tool = what === "file" ? "import_artifact" : "import_xctrace";
  throw executionRefused(`The ${what} to import does not exist: ${typed} (a relative path is taken from the current folder).`, {
    details: { path: typed },
    // The MCP tool takes project-relative paths, so the same name is the call that works there.
    next:
      elsewhere !== null
        ? { tool, arguments: { path: relative(cliServices().projectRoot, inProject), source_root: "project" } }
        : undefined,
    remediation: [
      elsewhere !== null
        ? `It is in the project: pass ${elsewhere}, or run from the project folder.`
        : "Check the path: pass it relative to the current folder, or absolute.",
    ],
  });
}

export const importCommand = defineCommand({
  meta: { name: "import", description: "Import a profile, trace or other artifact as a new import run (format and kind auto-detected)." },
  args: {
    path: {
      type: "positional",
      required: true,
      description: "File to import (inside the project, or under the temp folder with --source-root temp).",
    },
    kind: { type: "string", description: "Artifact kind, e.g. sample_profile, execution_trace, benchmark_samples." },
    sensitivity: { type: "string", default: "internal", description: "normal | internal | sensitive" },
    "media-type": { type: "string", description: "Media type to record." },
    "source-root": { type: "string", default: "project", description: "project | temp" },
    producer: { type: "string", default: "auto", description: "Producer (auto-detected by default)." },
    "producer-version": { type: "string", description: "Producer version to record." },
  },
  async run({ args }) {
    const sourceRoot = args["source-root"] === "temp" ? "temp" : "project";
    const receipt = await cliServices().imports.importArtifact({
      path: await typedPath(String(args.path), "file"),
      kind: (args.kind as never) ?? null,
      sensitivity: (["normal", "internal", "sensitive"].includes(String(args.sensitivity)) ? args.sensitivity : "internal") as
        | "normal"
        | "internal"
        | "sensitive",
      media_type: (args["media-type"] as string | undefined) ?? null,
      source_root: sourceRoot,
      producer: String(args.producer ?? "auto"),
      producer_version: (args["producer-version"] as string | undefined) ?? null,
    });
    // The CLI result also carries the new import run's manifest, so scripts need no second call.
    const run = cliServices().runs.getRun(receipt.run_id);
    emit(cliOptions(), { ...receipt, run }, () =>
      renderKeyValues(receipt, ["run_id", "artifact_id", "kind", "format", "producer", "evidence"]),
    );
  },
});

export const importXctraceCommand = defineCommand({
  meta: {
    name: "import-xctrace",
    description: "Keep an Instruments .trace folder as one sensitive artifact with its xctrace table of contents (needs xctrace on PATH).",
  },
  args: {
    path: {
      type: "positional",
      required: true,
      description: "The .trace folder (inside the project, or under the temp folder with --source-root temp).",
    },
    "source-root": { type: "string", default: "project", description: "project | temp" },
  },
  async run({ args }) {
    const request = checkedRequest(
      ImportXctraceRequest,
      { path: await typedPath(String(args.path), "folder"), source_root: args["source-root"] },
      "import-xctrace",
    );
    const receipt = await cliServices().xctraceImports.importTrace(request);
    emit(cliOptions(), receipt, () =>
      [
        `Imported ${receipt.package.display_name} as ${receipt.artifact_id} in run ${receipt.run_id}`,
        ...receipt.toc.runs.map(
          (run) =>
            `  run ${run.number ?? "?"}: ${run.template_name ?? "unknown template"}, ${run.duration_seconds ?? "?"} s, ${run.table_count} tables`,
        ),
      ].join("\n"),
    );
  },
});
