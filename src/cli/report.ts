import { defineCommand } from "citty";
import { invalidRequest } from "../domain/errors.ts";
import { type StackUnit, stackUnitNames } from "../domain/evidence.ts";
import { splitTargets } from "../services/report-service.ts";
import { cliOptions, cliServices } from "./context.ts";
import { emit } from "./output.ts";

export function unitArgument(value: unknown): StackUnit | null {
  if (value === undefined || value === null || value === "") return null;
  if (stackUnitNames.includes(value as StackUnit)) return value as StackUnit;
  throw invalidRequest(`--unit must be ${stackUnitNames.join(", ")}, not '${String(value)}'.`, {
    remediation: [`Pass --unit ${stackUnitNames.join(", ")}, or leave it out.`],
  });
}

/** Repeated options arrive as arrays; single ones as strings. */
export function listArgument(value: unknown): string[] {
  if (value === undefined || value === null || value === "" || value === false) return [];
  return (Array.isArray(value) ? value : [value]).map(String);
}

export function requireOutput(value: unknown, command: string): string {
  const [output] = listArgument(value).slice(-1);
  if (!output)
    throw invalidRequest(`${command} needs --output FILE.`, {
      remediation: [
        `Pass --output FILE, e.g. flameox ${command} RUN_ID --output ${command === "report" ? "report.html" : "profile.speedscope.json"}.`,
      ],
    });
  return output;
}

function groupByArgument(value: unknown): "function" | "line" {
  if (value === undefined || value === null || value === "" || value === "function") return "function";
  if (value === "line") return "line";
  throw invalidRequest(`--group-by must be function or line, not '${String(value)}'.`, {
    remediation: ["Pass --group-by function or --group-by line."],
  });
}

export const reportCommand = defineCommand({
  meta: {
    name: "report",
    description:
      "Write one self-contained HTML report (no network): flame graph, differential flame graph with --baseline, trace timeline, slowest tests, top allocators. Several runs (comma-separated or repeated) are pooled.",
  },
  args: {
    target: {
      type: "positional",
      required: true,
      description: "Run id, artifact id (sha256:…) or run set id; several as a,b or repeated.",
    },
    baseline: { type: "string", description: "Baseline run(s), artifact or run set for the differential graph (a,b or repeated)." },
    output: { type: "string", description: "The HTML file to write (a new file or a regular file to replace)." },
    unit: { type: "string", description: "ns | samples | bytes (default: time, then samples, then bytes)." },
    title: { type: "string", description: "Report title." },
    "group-by": { type: "string", default: "function", description: "function (one frame per function) | line (one per source line)." },
  },
  async run({ args }) {
    const targets = splitTargets(((args._ as string[] | undefined) ?? [String(args.target)]).map(String));
    const baseline = splitTargets(listArgument(args.baseline));
    const output = requireOutput(args.output, "report");
    const summary = await cliServices().reports.writeReport(
      {
        targets,
        baseline: baseline.length > 0 ? baseline : null,
        unit: unitArgument(args.unit),
        title: (args.title as string | undefined) ?? null,
        group_by: groupByArgument(args["group-by"]),
      },
      output,
    );
    emit(cliOptions(), summary, () => summary.path);
  },
});
