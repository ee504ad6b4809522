// torch.profiler SDK mode as an agent drives it, over real stdio against the compiled binary:
// configure → plan_capture(torch.profiler, mode 'sdk', schedule with 2 cycles) → execute → analyze_pytorch,
// get_trace_window (the phase marker); and the options the contract refuses.
import { afterEach, expect, test, setDefaultTimeout } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { callTool, connectMcp, temporaryFolder, type McpSession } from "../support/binary.ts";
import { declare, python } from "../support/project.ts";

// torch imports in seconds even on a quiet machine. The suite's default per-test deadline is 30 s (scripts/test-deadline.ts).
setDefaultTimeout(120_000);

let session: McpSession | undefined;
afterEach(async () => {
  await session?.close();
  session = undefined;
});

const workload = [
  "import torch",
  "import flameox_torch",
  "",
  "a = torch.randn(256, 256)",
  "b = torch.randn(256, 256)",
  "with flameox_torch.profile():",
  "    for _ in range(4):",
  '        with flameox_torch.phase("decode"):',
  "            for _ in range(5):",
  "                c = torch.mm(a, b)",
  "        flameox_torch.step()",
  "print(float(c.sum()) != 0.0)",
  "",
].join("\n");

test("torch.profiler SDK mode over MCP: two cycles, each extracted, matmul on top, phase kept; bad options refused", async () => {
  const project = temporaryFolder("torch-sdk");
  writeFileSync(join(project, "decode.py"), workload);
  session = await connectMcp(project, [], { PYTHONDONTWRITEBYTECODE: "1" });
  await callTool(session, "initialize_workspace");
  await declare(session, "decode", [python(), "decode.py"]);

  const refusals: [Record<string, unknown>, string][] = [
    [{ mode: "sdk" }, "adapter_options.schedule"],
    [{ schedule: { repeat: 2 } }, "adapter_options.schedule"],
    [{ mode: "sdk", schedule: { repeat: 2.5 } }, "adapter_options.schedule.repeat"],
    [{ mode: "sdk", schedule: { repeat: 101 } }, "adapter_options.schedule.repeat"],
    [{ mode: "sdk", schedule: { repeat: 2, every: 3 } }, "adapter_options.schedule.every"],
    [{ activities: ["cuda", "cuda_if_available"] }, "adapter_options.activities"],
    [{ activities: [] }, "adapter_options.activities"],
    [{ activities: ["cpu", "cpu"] }, "adapter_options.activities"],
    [{ with_stack: "false" }, "adapter_options.with_stack"],
    [{ mode: "sampling" }, "adapter_options.mode"],
  ];
  for (const [options, field] of refusals) {
    const refused = await callTool(session, "plan_capture", {
      workload_name: "decode",
      adapter: "torch.profiler",
      parameters: {},
      adapter_options: options,
    });
    expect(refused.envelope.ok).toBe(false);
    expect(refused.envelope.error.code).toBe("INVALID_CAPTURE_PLAN");
    expect(refused.envelope.error.details.fields.map((entry: { field: string }) => entry.field)).toContain(field);
  }

  const options = {
    mode: "sdk",
    activities: ["cpu"],
    with_stack: false,
    schedule: { wait: 0, warmup: 1, active: 1, repeat: 2, skip_first: 0 },
  };
  const plan = await callTool(session, "plan_capture", {
    workload_name: "decode",
    adapter: "torch.profiler",
    parameters: {},
    adapter_options: options,
  });
  expect(plan.envelope.ok).toBe(true);
  expect(plan.envelope.result.adapter_options).toEqual({
    ...options,
    record_shapes: true,
    profile_memory: true,
    with_flops: false,
    with_modules: false,
  });
  expect(plan.envelope.result.collector_argv).toContain("sdk");
  const executed = await callTool(session, "execute_capture_plan", { plan_id: plan.envelope.result.plan_id });
  expect(executed.envelope.ok).toBe(true);
  const receipt = executed.envelope.result;
  expect(receipt.execution_status).toBe("succeeded");
  expect(receipt.validation_status).toBe("passed");
  expect(receipt.evidence_tables.trace_events).toBeGreaterThan(0);

  const run = await callTool(session, "get_run", { run_id: receipt.run_id });
  expect(run.envelope.ok).toBe(true);
  const artifacts = run.envelope.result.artifacts as { artifact_id: string; role: string; kind: string }[];
  const cycles = artifacts
    .filter((artifact) => artifact.role.startsWith("cycle_"))
    .sort((left, right) => left.role.localeCompare(right.role));
  expect(cycles.map((artifact) => artifact.role)).toEqual(["cycle_0000", "cycle_0001"]);
  expect(artifacts.map((artifact) => artifact.role)).toEqual(
    expect.arrayContaining(["torch_profiler_cycle_manifest", "torch_profiler_diagnostics"]),
  );

  const pytorch = await callTool(session, "analyze_pytorch", { run_or_artifact: receipt.run_id, limit: 5 });
  expect(pytorch.envelope.ok).toBe(true);
  expect(["aten::mm", "aten::matmul"]).toContain(pytorch.envelope.result.operators[0].name);
  // Five matmuls per active step, one active step per cycle, two cycles.
  expect(pytorch.envelope.result.operators.find((operator: { name: string }) => operator.name === "aten::mm").calls).toBe(10);

  for (const cycle of cycles) {
    const perCycle = await callTool(session, "analyze_pytorch", { run_or_artifact: cycle.artifact_id, limit: 5 });
    expect(perCycle.envelope.result.operators.find((operator: { name: string }) => operator.name === "aten::mm").calls).toBe(5);
    const window = await callTool(session, "get_trace_window", {
      artifact_id: cycle.artifact_id,
      start_ns: 0,
      end_ns: Number.MAX_SAFE_INTEGER,
      limit: 1000,
    });
    expect(window.envelope.ok).toBe(true);
    const phases = window.envelope.result.events.filter((event: { name: string }) => event.name === "flameox.phase:decode");
    expect(phases).toHaveLength(1);
    expect(phases[0].category).toBe("user_annotation");
  }
}, 180_000);
