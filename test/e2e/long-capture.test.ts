/**
 * A 75-second capture against a client whose requests time out after 60 seconds, over real stdio against
 * the compiled binary. The plan's execution_guidance recommends start_detached_capture and says that
 * execute_capture_plan also works for a client that resets its timeout on progress; the test takes both
 * ways at once (two captures side by side) and both end with hotspots.
 */
import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { callTool, connectMcp, temporaryFolder, type McpSession } from "../support/binary.ts";
import { python } from "../support/project.ts";
import { waitFor } from "../support/wait.ts";

// Two real 75-second workloads run side by side, then hotspots of each.
setDefaultTimeout(300_000);

let session: McpSession | undefined;
afterEach(async () => {
  await session?.close();
  session = undefined;
});

// Mostly asleep (light on a shared machine), awake often enough for py-spy to sample `pulse`.
const workload = `import sys, time

def pulse(until):
    while time.perf_counter() < until:
        x = 0
        for i in range(20000):
            x += i * i

def run(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pulse(time.perf_counter() + 0.05)
        time.sleep(0.2)

run(float(sys.argv[1]))
`;

test("a 75 s capture completes for a 60 s-timeout client: executed with progress resetting the timeout, and detached", async () => {
  const project = temporaryFolder("long-capture");
  writeFileSync(join(project, "pulse.py"), workload);
  session = await connectMcp(project, ["--init"]);
  const configured = await callTool(session, "configure_workload", {
    name: "pulse",
    operation: "create",
    argv: [python(), "pulse.py", "75"],
    timeout_seconds: 150,
  });
  expect(configured.envelope.ok).toBe(true);
  const plan = async () => {
    const planned = await callTool(session!, "plan_capture", { workload_name: "pulse", adapter: "py-spy" });
    expect(planned.envelope.ok).toBe(true);
    return planned.envelope.result;
  };

  const executed = await plan();
  expect(executed.execution_guidance.recommended_tool).toBe("start_detached_capture");
  expect(executed.execution_guidance.reason).toContain("timeout_seconds is 150");
  expect(executed.execution_guidance.progress_interval_seconds).toBeLessThanOrEqual(10);
  const detached = await plan();

  const messages: string[] = [];
  const progress: number[] = [];
  const execution = session.client.callTool({ name: "execute_capture_plan", arguments: { plan_id: executed.plan_id } }, undefined, {
    timeout: 60_000,
    resetTimeoutOnProgress: true,
    onprogress: (notification) => {
      progress.push(notification.progress);
      messages.push(notification.message ?? "");
    },
  });
  const started = await callTool(session, "start_detached_capture", { plan_id: detached.plan_id, idempotency_key: "long-capture-1" });
  expect(started.envelope.ok).toBe(true);

  const receipt = (await execution).structuredContent as any;
  expect(receipt.ok).toBe(true);
  expect(receipt.result.execution_status).toBe("succeeded");
  // The request outlived the client's 60 s timeout because the progress it received kept resetting it.
  const elapsed = messages.map((message) => Number(/([\d.]+) s elapsed/.exec(message)?.[1] ?? 0));
  expect(Math.max(...elapsed)).toBeGreaterThan(60);
  expect(messages.filter((message) => message.startsWith("capturing: workload running (still running")).length).toBeGreaterThan(0);
  expect(progress).toEqual([...progress].sort((left, right) => left - right));

  const current = session;
  const finished = await waitFor(
    "the detached capture's end",
    async () => {
      const status = (await callTool(current, "get_detached_capture", { run_id: started.envelope.result.run_id })).envelope.result;
      return status.state === "terminal" && status;
    },
    { deadlineMs: 200_000, intervalMs: 1_000 },
  );
  expect(finished.execution_status).toBe("succeeded");

  for (const runId of [receipt.result.run_id, started.envelope.result.run_id]) {
    const hotspots = await callTool(session, "analyze_hotspots", { run_or_artifact: runId, limit: 5 });
    expect(hotspots.envelope.ok).toBe(true);
    expect(hotspots.envelope.result.hotspots.map((row: any) => row.function)).toContain("pulse");
  }
});
