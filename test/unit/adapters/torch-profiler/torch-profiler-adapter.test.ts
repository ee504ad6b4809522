import { describe, expect, test, setDefaultTimeout } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import * as v from "valibot";
import { join } from "node:path";
import { FlameoxError } from "../../../../src/domain/errors.ts";
import {
  probeTorch,
  readTorchDiagnostics,
  torchSdkCommand,
  torchWholeEntrypointCommand,
  writeTorchCollectors,
} from "../../../../src/adapters/torch-profiler/index.ts";
import { TorchProfilerOptionsSchema } from "../../../../src/adapters/torch-profiler/torch-profiler-capture.ts";
import { barePython, pythonFixtures, runCommand, temporaryDirectory, venvPython } from "../../../fixtures/python/tools.ts";

// torch imports in seconds even on a quiet machine. The suite's default per-test deadline is 30 s (scripts/test-deadline.ts).
setDefaultTimeout(120_000);

type ChromeEvent = { ph?: string; cat?: string; name?: string; dur?: number };

/** Minimal on purpose: the full Chrome-trace extractor lives in src/adapters/formats. */
function topCpuOperator(path: string): string {
  const trace = JSON.parse(readFileSync(path, "utf8")) as { traceEvents: ChromeEvent[] };
  const totals = new Map<string, number>();
  for (const event of trace.traceEvents) {
    if (event.ph === "X" && event.cat === "cpu_op" && event.name) totals.set(event.name, (totals.get(event.name) ?? 0) + (event.dur ?? 0));
  }
  return [...totals.entries()].sort((left, right) => right[1] - left[1])[0]![0];
}

describe("torch.profiler adapter", () => {
  test("whole entrypoint: matmul is the top CPU operator; diagnostics say completed", async () => {
    const directory = temporaryDirectory("torch");
    const collectors = writeTorchCollectors(join(directory, "collectors"));
    const command = torchWholeEntrypointCommand({
      workload: { argv: [venvPython, join(pythonFixtures, "torch", "matmul.py")], cwd: directory, env: {}, python: venvPython },
      artifactDirectory: directory,
      collectors,
      options: { with_stack: false },
    });
    const result = await runCommand(command.argv, { cwd: command.cwd, env: command.environment, timeoutMs: 110_000 });
    expect(result.exitCode).toBe(0);
    expect(["aten::mm", "aten::matmul"]).toContain(topCpuOperator(command.artifacts[0]!.path));
    expect(readTorchDiagnostics(command.artifacts[1]!.path)).toMatchObject({ phase: "completed", status: "succeeded" });
  }, 120_000);

  test("SDK mode through the launcher (no PYTHONPATH): one trace per scheduled cycle, manifest, phase markers", async () => {
    const directory = temporaryDirectory("torch-sdk");
    const collectors = writeTorchCollectors(join(directory, "collectors"));
    const command = torchSdkCommand({
      workload: { argv: [venvPython, join(pythonFixtures, "torch", "sdk_steps.py")], cwd: directory, env: {}, python: venvPython },
      artifactDirectory: directory,
      collectors,
      schedule: { wait: 1, warmup: 1, active: 1, repeat: 2, skip_first: 0 },
      options: { with_stack: false },
    });
    expect(command.argv.slice(0, 4)).toEqual([venvPython, collectors.launcher, "--mode", "sdk"]);
    expect(Object.keys(command.environment).sort()).toEqual(["FLAMEOX_TORCH_PROFILER_CONFIG", "FLAMEOX_TORCH_PROFILER_OUTPUT_ROOT"]);
    const result = await runCommand(command.argv, {
      cwd: command.cwd,
      env: { ...command.environment, PYTHONPATH: "" },
      timeoutMs: 110_000,
    });
    expect(result.exitCode).toBe(0);
    const manifest = JSON.parse(readFileSync(join(directory, "torch-profiler-cycles.json"), "utf8"));
    expect(manifest.files).toEqual(["torch-trace-cycle-0000.json", "torch-trace-cycle-0001.json"]);
    const cycle = JSON.parse(readFileSync(command.artifacts[0]!.path, "utf8")) as { traceEvents: ChromeEvent[] };
    expect(cycle.traceEvents.some((event) => event.name === "flameox.phase:decode")).toBe(true);
    expect(readTorchDiagnostics(join(directory, "torch-profiler-diagnostics.json")).status).toBe("succeeded");
  }, 120_000);

  test("SDK mode: module-level profile()/phase()/step(); a workload that never opens the profiler fails with a diagnosis", async () => {
    const directory = temporaryDirectory("torch-sdk-profile");
    const collectors = writeTorchCollectors(join(directory, "collectors"));
    writeFileSync(
      join(directory, "decode.py"),
      [
        "import torch",
        "import flameox_torch",
        "with flameox_torch.profile():",
        "    for _ in range(4):",
        '        with flameox_torch.phase("decode"):',
        "            torch.mm(torch.ones(32, 32), torch.ones(32, 32))",
        "        flameox_torch.step()",
        "",
      ].join("\n"),
    );
    writeFileSync(join(directory, "plain.py"), "print('no profiler')\n");
    const schedule = { wait: 0, warmup: 1, active: 1, repeat: 2, skip_first: 0 };
    const command = torchSdkCommand({
      workload: { argv: [venvPython, join(directory, "decode.py")], cwd: directory, env: {}, python: venvPython },
      artifactDirectory: directory,
      collectors,
      schedule,
      options: { with_stack: false, activities: ["cpu"] },
    });
    const result = await runCommand(command.argv, { cwd: command.cwd, env: command.environment, timeoutMs: 110_000 });
    expect(result.exitCode).toBe(0);
    for (const artifact of command.artifacts.slice(0, 2)) {
      const trace = JSON.parse(readFileSync(artifact.path, "utf8")) as { traceEvents: ChromeEvent[] };
      expect(trace.traceEvents.some((event) => event.name === "flameox.phase:decode")).toBe(true);
      expect(trace.traceEvents.some((event) => event.cat === "cpu_op" && event.name === "aten::mm")).toBe(true);
    }
    const plainRoot = temporaryDirectory("torch-sdk-plain");
    const plain = torchSdkCommand({
      workload: { argv: [venvPython, join(directory, "plain.py")], cwd: directory, env: {}, python: venvPython },
      artifactDirectory: plainRoot,
      collectors,
      schedule,
    });
    const refused = await runCommand(plain.argv, { cwd: plain.cwd, env: plain.environment, timeoutMs: 60_000 });
    expect(refused.exitCode).toBe(4);
    expect(existsSync(join(plainRoot, "torch-trace-cycle-0000.json"))).toBe(false);
    expect(readTorchDiagnostics(join(plainRoot, "torch-profiler-diagnostics.json"))).toMatchObject({
      phase: "completed",
      status: "failed",
    });
  }, 120_000);

  test("options: contract defaults, sdk needs a schedule, whole_entrypoint refuses one, strict types", () => {
    const fields = (options: unknown) => {
      const parsed = v.safeParse(TorchProfilerOptionsSchema, options);
      return parsed.success ? [] : parsed.issues.map((issue) => (issue.path ?? []).map((item) => String(item.key)).join("."));
    };
    expect(v.parse(TorchProfilerOptionsSchema, {})).toEqual({
      mode: "whole_entrypoint",
      activities: ["cpu", "cuda_if_available"],
      record_shapes: true,
      profile_memory: true,
      with_stack: true,
      with_flops: false,
      with_modules: false,
    });
    expect(v.parse(TorchProfilerOptionsSchema, { mode: "sdk", schedule: { repeat: 2 } })).toMatchObject({
      schedule: { wait: 1, warmup: 1, active: 1, repeat: 2, skip_first: 0 },
    });
    expect(fields({ mode: "sdk" })).toEqual(["schedule"]);
    expect(fields({ schedule: { repeat: 2 } })).toEqual(["schedule"]);
    expect(fields({ activities: [] })).toEqual(["activities"]);
    expect(fields({ activities: ["cpu", "cpu"] })).toEqual(["activities"]);
    expect(fields({ activities: ["cuda", "cuda_if_available"] })).toEqual(["activities"]);
    expect(fields({ activities: ["tpu"] })).toEqual(["activities.0"]);
    expect(fields({ with_stack: "true" })).toEqual(["with_stack"]);
    expect(fields({ record_shapes: 1 })).toEqual(["record_shapes"]);
    expect(fields({ mode: "sdk", schedule: { repeat: 1.5 } })).toEqual(["schedule.repeat"]);
    expect(fields({ mode: "sdk", schedule: { repeat: 101 } })).toEqual(["schedule.repeat"]);
    expect(fields({ mode: "sdk", schedule: { active: 0 } })).toEqual(["schedule.active"]);
    expect(fields({ mode: "sdk", schedule: { wait: true } })).toEqual(["schedule.wait"]);
    expect(fields({ mode: "sdk", schedule: { cycles: 2 } })).toEqual(["schedule.cycles"]);
    expect(fields({ rate: 3 })).toEqual(["rate"]);
  });

  test("probe and refusals", async () => {
    const available = await probeTorch(venvPython, runCommand);
    expect(available.version).toBe("torch 2.13.0+cpu");
    const python = barePython();
    const missing = await probeTorch(python, runCommand);
    expect(missing.status).toBe("unavailable");
    expect(missing.remediation[0]).toContain(`${python} -m pip install torch==2.13.0`);
    const collectors = { directory: "/x", launcher: "/x/l.py", sdk: "/x/s.py" };
    expect(() =>
      torchWholeEntrypointCommand({
        workload: { argv: ["node", "x.js"], cwd: "/", env: {}, python: venvPython },
        artifactDirectory: "/tmp",
        collectors,
      }),
    ).toThrow(FlameoxError);
    expect(() =>
      torchSdkCommand({
        workload: { argv: [venvPython, "x.py"], cwd: "/", env: {}, python: venvPython },
        artifactDirectory: "/tmp",
        collectors,
        schedule: { wait: 0, warmup: 0, active: 0, repeat: 1, skip_first: 0 },
      }),
    ).toThrow(FlameoxError);
  }, 120_000);
});
