import * as v from "valibot";
import type { CaptureAdapter } from "../capture-adapter.ts";
import { extractSpeedscope } from "../formats/speedscope.ts";
import { adapterDescriptor } from "../registry.ts";

/** Typed py-spy options an agent may set; anything else is refused at planning. */
export const PySpyOptionsSchema = v.strictObject({
  rate: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(10_000)), 100),
  native: v.optional(v.boolean(), false),
  subprocesses: v.optional(v.boolean(), false),
  idle: v.optional(v.boolean(), false),
  gil: v.optional(v.boolean(), false),
});

export type PySpyOptions = v.InferOutput<typeof PySpyOptionsSchema>;

export const pySpyProfileFileName = "profile.speedscope.json";

/** py-spy launches the workload itself, so the workload's own argv follows `--` unchanged. */
export function pySpyCollectorArgv(
  executable: string,
  options: PySpyOptions,
  profilePath: string,
  workloadArgv: readonly string[],
): string[] {
  const argv = [executable, "record", "--format", "speedscope", "--output", profilePath, "--rate", String(options.rate)];
  if (options.native) argv.push("--native");
  if (options.subprocesses) argv.push("--subprocesses");
  if (options.idle) argv.push("--idle");
  if (options.gil) argv.push("--gil");
  argv.push("--", ...workloadArgv);
  return argv;
}

export const pySpyAdapter: CaptureAdapter = {
  descriptor: adapterDescriptor("py-spy")!,
  optionsSchema: PySpyOptionsSchema as unknown as CaptureAdapter["optionsSchema"],
  extractor: { name: "py-spy", version: "1" },
  planCollector(context) {
    const options = v.parse(PySpyOptionsSchema, context.options);
    return {
      argv: pySpyCollectorArgv(
        context.adapterExecutable!,
        options,
        `${context.artifactDirectory}/${pySpyProfileFileName}`,
        context.workloadArgv,
      ),
      trustedEnvironment: {},
      outputs: [
        {
          file: pySpyProfileFileName,
          kind: "sample_profile",
          role: "profile",
          mediaType: "application/json",
          format: "speedscope",
          producer: "py-spy",
          required: true,
          extract: true,
        },
      ],
      expectedOverhead: `sampling at ${options.rate} Hz; the workload is paused briefly for each sample`,
    };
  },
  async extract(_output, path, sink, context) {
    const result = await extractSpeedscope(path, sink, { projectRoot: context.projectRoot, language: "python" });
    return { limitations: result.limitations };
  },
};
