import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { FlameoxError } from "../../../../src/domain/errors.ts";
import { probeTorch, readTorchDiagnostics, torchSdkCommand, torchWholeEntrypointCommand, writeTorchCollectors } from "../../../../src/adapters/torch-profiler/index.ts";
import { barePython, pythonFixtures, runCommand, temporaryDirectory, venvPython } from "../../../fixtures/python/tools.ts";

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

  test("SDK mode: one trace per scheduled cycle, manifest, phase markers", async () => {
    const directory = temporaryDirectory("torch-sdk");
    const collectors = writeTorchCollectors(join(directory, "collectors"));
    const command = torchSdkCommand({
      workload: { argv: [venvPython, join(pythonFixtures, "torch", "sdk_steps.py")], cwd: directory, env: {}, python: venvPython },
      artifactDirectory: directory,
      collectors,
      schedule: { wait: 1, warmup: 1, active: 1, repeat: 2, skip_first: 0 },
      options: { with_stack: false },
    });
    const result = await runCommand(command.argv, { cwd: command.cwd, env: { ...command.environment, PYTHONPATH: command.environment.FLAMEOX_TORCH_SDK_PATH! }, timeoutMs: 110_000 });
    expect(result.exitCode).toBe(0);
    const manifest = JSON.parse(readFileSync(join(directory, "torch-profiler-cycles.json"), "utf8"));
    expect(manifest.files).toEqual(["torch-trace-cycle-0000.json", "torch-trace-cycle-0001.json"]);
    const cycle = JSON.parse(readFileSync(command.artifacts[0]!.path, "utf8")) as { traceEvents: ChromeEvent[] };
    expect(cycle.traceEvents.some((event) => event.name === "flameox.phase:decode")).toBe(true);
    expect(readTorchDiagnostics(join(directory, "torch-profiler-diagnostics.json")).status).toBe("succeeded");
  }, 120_000);

  test("probe and refusals", async () => {
    const available = await probeTorch(venvPython, runCommand);
    expect(available.version).toBe("torch 2.13.0+cpu");
    const python = barePython();
    const missing = await probeTorch(python, runCommand);
    expect(missing.status).toBe("unavailable");
    expect(missing.remediation[0]).toContain(`${python} -m pip install torch==2.13.0`);
    const collectors = { directory: "/x", launcher: "/x/l.py", sdk: "/x/s.py" };
    expect(() => torchWholeEntrypointCommand({ workload: { argv: ["node", "x.js"], cwd: "/", env: {}, python: venvPython }, artifactDirectory: "/tmp", collectors })).toThrow(FlameoxError);
    expect(() => torchSdkCommand({ workload: { argv: [venvPython, "x.py"], cwd: "/", env: {}, python: venvPython }, artifactDirectory: "/tmp", collectors, schedule: { wait: 0, warmup: 0, active: 0, repeat: 1, skip_first: 0 } })).toThrow(FlameoxError);
  }, 120_000);
});
