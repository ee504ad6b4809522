import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { defineCommand } from "citty";
import { capabilityUnavailable, executionRefused, processFailed } from "../domain/errors.ts";
import type { ViewerEntry, ViewerPlan } from "../services/report-service.ts";
import { cliOptions, cliServices } from "./context.ts";
import { emit } from "./output.ts";

function renderPlan(plan: ViewerPlan): string {
  const lines = [`Viewers for ${plan.run_or_artifact}:`];
  for (const viewer of plan.viewers) {
    lines.push(`  ${viewer.name}${viewer.installed ? " (installed)" : ""}`);
    lines.push(`    ${viewer.prepare_command.map(quote).join(" ")}`);
    lines.push(viewer.open_command ? `    ${viewer.open_command.map(quote).join(" ")}` : `    ${viewer.how_to_open}`);
  }
  for (const note of plan.notes) lines.push(note);
  return lines.join("\n");
}

function quote(word: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

export const openCommand = defineCommand({
  meta: {
    name: "open",
    description:
      "Print which viewers open a run's or artifact's evidence and the exact commands; --launch prepares the file and starts the chosen installed viewer (never with --json).",
  },
  args: {
    target: { type: "positional", required: true, description: "Run id or artifact id (sha256:…)." },
    viewer: {
      type: "string",
      description: "report | speedscope | pprof | perfetto | firefox_profiler (with --launch; default: the first installed).",
    },
    launch: { type: "boolean", description: "Write the viewer's file and start the viewer." },
    output: {
      type: "string",
      description: "With --launch: where to write the file (default: the plan's file name in the current folder).",
    },
  },
  async run({ args }) {
    const options = cliOptions();
    if (args.launch && options.json) {
      throw executionRefused("flameox open never launches a viewer with --json.", {
        remediation: ["Drop --json to launch, or drop --launch to get the plan as JSON."],
      });
    }
    const services = cliServices();
    const plan = await services.reports.viewerPlan(String(args.target));
    if (!args.launch) {
      emit(options, plan, () => renderPlan(plan));
      return;
    }
    const wanted = args.viewer as string | undefined;
    const viewer: ViewerEntry | undefined = wanted
      ? plan.viewers.find((entry) => entry.viewer === wanted)
      : plan.viewers.find((entry) => entry.open_command !== null);
    if (!viewer?.open_command) {
      throw capabilityUnavailable(
        wanted
          ? `No launchable viewer '${wanted}' for ${plan.run_or_artifact}.`
          : `No installed viewer can be launched for ${plan.run_or_artifact}.`,
        {
          details: { viewers: plan.viewers.map((entry) => entry.viewer) },
          remediation: viewer
            ? [viewer.how_to_open, `Prepare the file with: ${viewer.prepare_command.join(" ")}`]
            : ["Run flameox open without --launch to see the viewers and their commands."],
        },
      );
    }
    const output = resolve(String(args.output ?? viewer.output));
    if (viewer.format === "html") {
      await services.reports.writeReport({ targets: [plan.run_or_artifact], baseline: null, unit: null, title: null }, output);
    } else {
      await services.reports.export({ target: plan.run_or_artifact, format: viewer.format, unit: null }, output);
    }
    const argv = viewer.open_command.map((word) => (word === viewer.output ? output : word));
    const child = spawn(argv[0]!, argv.slice(1), { detached: true, stdio: "ignore" });
    await new Promise<void>((done, fail) => {
      child.once("spawn", () => done());
      child.once("error", (error) =>
        fail(processFailed(`Could not start ${argv[0]}: ${error.message}`, { remediation: [viewer.how_to_open] })),
      );
    });
    child.unref();
    emit(options, { viewer: viewer.viewer, output, argv }, () => `${output}\nlaunched: ${argv.map(quote).join(" ")}`);
  },
});
