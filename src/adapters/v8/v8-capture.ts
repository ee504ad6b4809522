import { basename } from "node:path";
import * as v from "valibot";
import { planRefused } from "../../domain/errors.ts";
import type { CaptureAdapter, ProbeContext, ProbeResult } from "../capture-adapter.ts";
import { extractV8CpuProfile } from "../formats/v8-cpuprofile.ts";
import { adapterDescriptor } from "../registry.ts";
import { resolveExecutable } from "../../exec/executable.ts";

export const v8ProfileFileName = "profile.cpuprofile";

export const V8OptionsSchema = v.strictObject({
  interval_us: v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(10), v.maxValue(100_000))), null),
});

function runtimeOf(executable: string): "node" | "bun" | null {
  const name = basename(executable);
  if (/^node(js)?(\d+)?$/.test(name)) return "node";
  if (/^bun$/.test(name)) return "bun";
  return null;
}

/** node/bun `--cpu-prof`: V8's own sampling profiler writes a .cpuprofile when the script exits. */
export function v8CaptureArgv(workloadArgv: readonly string[], artifactDirectory: string, intervalUs: number | null): string[] {
  const runtime = runtimeOf(workloadArgv[0] ?? "");
  if (!runtime) {
    throw planRefused("capture", `The v8 adapter profiles node or bun workloads; this one starts with '${workloadArgv[0] ?? ""}'.`, {
      remediation: ["Declare the workload as `node <script> …` or `bun <script> …`, or choose another adapter."],
    });
  }
  const flags = ["--cpu-prof", "--cpu-prof-dir", artifactDirectory, "--cpu-prof-name", v8ProfileFileName];
  if (intervalUs !== null) flags.push("--cpu-prof-interval", String(intervalUs));
  return [workloadArgv[0]!, ...flags, ...workloadArgv.slice(1)];
}

export const v8Adapter: CaptureAdapter & { probe(context: ProbeContext): Promise<ProbeResult> } = {
  descriptor: adapterDescriptor("v8")!,
  optionsSchema: V8OptionsSchema as unknown as CaptureAdapter["optionsSchema"],
  extractor: { name: "v8-cpuprofile", version: "1" },
  async probe(context) {
    let runtime = context.workloadArgv[0] ?? null;
    if (!runtime) {
      for (const name of ["node", "bun"]) {
        try {
          runtime = resolveExecutable(name, context.pathValue);
          break;
        } catch {
          // Try the next runtime.
        }
      }
    }
    if (!runtime || !runtimeOf(runtime)) {
      return {
        status: "unavailable",
        version: null,
        remediation: ["Install Node.js (node ≥ 12) or Bun and declare the workload as `node <script>` or `bun <script>`."],
        limitations: [],
        details: {},
      };
    }
    const result = await context.run([runtime, "--version"], { timeoutMs: 10_000 }).catch(() => null);
    if (result?.exitCode !== 0) {
      return {
        status: "unavailable",
        version: null,
        remediation: [`${runtime} --version failed; reinstall Node.js or Bun.`],
        limitations: [],
        details: { runtime },
      };
    }
    return {
      status: "available",
      version: `${runtimeOf(runtime)} ${result.stdout.trim()}`,
      remediation: [],
      limitations: [],
      details: { runtime },
    };
  },
  planCollector(context) {
    const options = v.parse(V8OptionsSchema, context.options);
    const runtime = runtimeOf(context.workloadArgv[0] ?? "");
    return {
      argv: v8CaptureArgv(context.workloadArgv, context.artifactDirectory, options.interval_us),
      trustedEnvironment: {},
      outputs: [
        {
          file: v8ProfileFileName,
          kind: "sample_profile",
          role: "cpu_profile",
          mediaType: "application/json",
          format: "v8_cpuprofile",
          producer: runtime,
          required: true,
          extract: true,
        },
      ],
      expectedOverhead: `V8 sampling every ${options.interval_us ?? 1000} µs; low overhead`,
    };
  },
  async extract(_output, path, sink, context) {
    const result = await extractV8CpuProfile(path, sink, { projectRoot: context.projectRoot, language: "javascript" });
    return { limitations: result.limitations };
  },
};
