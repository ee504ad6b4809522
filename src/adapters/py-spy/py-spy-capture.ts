import * as v from "valibot";
import type { EvidenceSink } from "../../domain/evidence.ts";
import { extractSpeedscope } from "../formats/speedscope.ts";

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
export function pySpyCollectorArgv(executable: string, options: PySpyOptions, profilePath: string, workloadArgv: readonly string[]): string[] {
  const argv = [executable, "record", "--format", "speedscope", "--output", profilePath, "--rate", String(options.rate)];
  if (options.native) argv.push("--native");
  if (options.subprocesses) argv.push("--subprocesses");
  if (options.idle) argv.push("--idle");
  if (options.gil) argv.push("--gil");
  argv.push("--", ...workloadArgv);
  return argv;
}

export async function extractPySpyProfile(path: string, sink: EvidenceSink, projectRoot: string) {
  return extractSpeedscope(path, sink, { projectRoot, language: "python" });
}
