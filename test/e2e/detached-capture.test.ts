import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { callTool, connectMcp, type McpSession } from "../support/binary.ts";
import { declare, python, workloadProject } from "../support/project.ts";
import { waitFor } from "../support/wait.ts";

setDefaultTimeout(120_000);

let session: McpSession | undefined;
afterEach(async () => {
  await session?.close();
  session = undefined;
});

function waitForState(current: McpSession, runId: string, wanted: string): Promise<any> {
  return waitFor(`the detached capture to become ${wanted}`, async () => {
    const status = (await callTool(current, "get_detached_capture", { run_id: runId })).envelope.result;
    return status.state === wanted && status;
  });
}

test("a detached capture runs to completion; the same key and plan reconnect, another plan is refused", async () => {
  const project = workloadProject("detached");
  session = await connectMcp(project, ["--init"]);
  await declare(session, "hot", [python(), "hot.py", "0.5"]);
  const plan = (await callTool(session, "plan_capture", { workload_name: "hot", adapter: "py-spy", parameters: {} })).envelope.result;
  const started = await callTool(session, "start_detached_capture", { plan_id: plan.plan_id, idempotency_key: "key-one-12345" });
  expect(started.isError).toBe(false);
  expect(["starting", "running", "terminal"]).toContain(started.envelope.result.state);
  const runId = started.envelope.result.run_id;
  expect(runId).toBe(plan.run_id);

  const again = await callTool(session, "start_detached_capture", { plan_id: plan.plan_id, idempotency_key: "key-one-12345" });
  expect(again.envelope.result.run_id).toBe(runId);

  const other = (await callTool(session, "plan_capture", { workload_name: "hot", adapter: "command", parameters: {} })).envelope.result;
  const conflict = await callTool(session, "start_detached_capture", { plan_id: other.plan_id, idempotency_key: "key-one-12345" });
  expect(conflict.envelope.error.code).toBe("INVALID_CAPTURE_PLAN");

  const finished = await waitForState(session, runId, "terminal");
  expect(finished.execution_status).toBe("succeeded");
  expect(finished.progress.map((entry: any) => entry.completed)).toContain(8);
  const hotspots = await callTool(session, "analyze_hotspots", { run_or_artifact: runId, limit: 1 });
  expect(hotspots.envelope.result.hotspots[0].function).toBe("burn_cpu");
  const runs = await callTool(session, "list_runs", {});
  expect(runs.envelope.result.total).toBe(1);
});

test("cancel_detached_capture kills the tree and records the cancelled run", async () => {
  const project = workloadProject("detached-cancel");
  session = await connectMcp(project, ["--init"]);
  const pidFile = join(project, "pids.txt");
  await declare(session, "spawner", [python(), "spawner.py", pidFile], { timeout_seconds: 120 });
  const plan = (await callTool(session, "plan_capture", { workload_name: "spawner", adapter: "command", parameters: {} })).envelope.result;
  const started = (await callTool(session, "start_detached_capture", { plan_id: plan.plan_id, idempotency_key: "cancel-me-123" })).envelope
    .result;
  const pids = (await waitFor("the workload's pid file", () => existsSync(pidFile) && readFileSync(pidFile, "utf8")))
    .trim()
    .split(" ")
    .map(Number);
  expect(pids).toHaveLength(4);
  expect((await callTool(session, "get_detached_capture", { run_id: started.run_id })).envelope.result.state).toBe("running");
  const cancelled = await callTool(session, "cancel_detached_capture", { run_id: started.run_id });
  expect(cancelled.envelope.result.state).toBe("terminal");
  expect(cancelled.envelope.result.execution_status).toBe("cancelled");
  const run = (await callTool(session, "get_run", { run_id: started.run_id })).envelope.result;
  expect(run.process.cleanup_complete).toBe(true);
  for (const pid of pids) {
    let alive = true;
    try {
      process.kill(pid, 0);
      alive = !/\) [ZX] /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
    } catch {
      alive = false;
    }
    expect(alive).toBe(false);
  }
  const repeat = await callTool(session, "cancel_detached_capture", { run_id: started.run_id });
  expect(repeat.envelope.result.execution_status).toBe("cancelled");
});
