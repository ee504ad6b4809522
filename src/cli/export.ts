import { defineCommand } from "citty";
import { invalidRequest } from "../domain/errors.ts";
import { exportFormats, type ExportFormat } from "../services/report-service.ts";
import { cliOptions, cliServices } from "./context.ts";
import { emit } from "./output.ts";
import { requireOutput, unitArgument } from "./report.ts";

export const exportCommand = defineCommand({
  meta: {
    name: "export",
    description:
      "Write a run's or artifact's evidence as a standard file: speedscope (speedscope), pprof (gzip profile.proto), collapsed (folded stacks) or chrome (trace event JSON for Perfetto UI and the Firefox Profiler).",
  },
  args: {
    target: { type: "positional", required: true, description: "Run id or artifact id (sha256:…)." },
    format: { type: "string", description: "speedscope | pprof | collapsed | chrome" },
    output: { type: "string", description: "The file to write (a new file or a regular file to replace)." },
    unit: {
      type: "string",
      description: "ns | samples | bytes (pprof, collapsed and chrome hold one unit; default: time, then samples, then bytes).",
    },
  },
  async run({ args }) {
    const format = String(args.format ?? "");
    if (!(exportFormats as readonly string[]).includes(format)) {
      throw invalidRequest(`--format must be one of ${exportFormats.join(", ")}${format ? `, not '${format}'` : ""}.`, {
        remediation: ["Pass --format speedscope, pprof, collapsed or chrome."],
      });
    }
    const output = requireOutput(args.output, "export");
    const result = await cliServices().reports.export(
      { target: String(args.target), format: format as ExportFormat, unit: unitArgument(args.unit) },
      output,
    );
    emit(cliOptions(), result, () => result.path);
  },
});
