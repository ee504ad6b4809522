/**
 * Managed provider setup over real stdio against the compiled binary, installing from the package
 * registry for real. The server's PATH has no py-spy (the pinned tools venv and every folder holding a
 * py-spy are left out) and its data folder is a temporary XDG_DATA_HOME, so the user's own providers are
 * never touched. Cancellation and restart use a loopback package index that accepts connections and
 * never answers: pip is then provably mid-install (the index saw it connect) for as long as the test needs.
 */
import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Socket } from "bun";
import { callTool, connectMcp, type McpSession, repositoryRoot, temporaryFolder } from "../support/binary.ts";
import { declare, python, workloadProject } from "../support/project.ts";
import { waitFor } from "../support/wait.ts";

setDefaultTimeout(240_000);

/** The py-spy the adapters are tested with, pinned in tools/python-requirements.txt: the one setup must install. */
const pinnedPySpy = /^py-spy==(\S+)$/m.exec(readFileSync(join(repositoryRoot, "tools", "python-requirements.txt"), "utf8"))![1]!;

/** PATH without the pinned tools and without any folder that holds a py-spy. */
function pathWithoutPySpy(): string {
  const tools = join(repositoryRoot, ".tools");
  return (process.env.PATH ?? "")
    .split(":")
    .filter((entry) => entry !== "" && !entry.startsWith(tools) && !existsSync(join(entry, "py-spy")))
    .join(":");
}

const sessions: McpSession[] = [];
const listeners: { stop(): void }[] = [];
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.close().catch(() => undefined);
  for (const listener of listeners.splice(0)) listener.stop();
});

async function serve(project: string, dataHome: string, extra: Record<string, string> = {}): Promise<McpSession> {
  const session = await connectMcp(project, ["--init"], { PATH: pathWithoutPySpy(), XDG_DATA_HOME: dataHome, ...extra });
  sessions.push(session);
  return session;
}

function pollUntilEnded(session: McpSession, operationId: string): Promise<any> {
  return waitFor(
    "the setup operation to end",
    async () => {
      const status = (await callTool(session, "get_capability_setup", { operation_id: operationId })).envelope.result;
      return status.state !== "starting" && status.state !== "running" && status;
    },
    { deadlineMs: 180_000, intervalMs: 250 },
  );
}

/** A package index on loopback that accepts every connection and never answers; `connected` resolves on the first. */
function stalledIndex(): { url: string; connected: Promise<void>; sockets: Socket[] } {
  let connected!: () => void;
  const first = new Promise<void>((resolve) => {
    connected = resolve;
  });
  const sockets: Socket[] = [];
  const listener = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(socket) {
        sockets.push(socket);
        connected();
      },
      data() {
        // Never answer: pip waits on this request until it is killed.
      },
    },
  });
  listeners.push({ stop: () => listener.stop(true) });
  return { url: `http://127.0.0.1:${listener.port}/simple`, connected: first, sockets };
}

function stagingEntries(dataHome: string): string[] {
  const staging = join(dataHome, "flameox", "providers", ".staging");
  return existsSync(staging) ? readdirSync(staging) : [];
}

test("without py-spy on PATH: setup names it, installs and verifies it, and a capture with the managed copy finds the hot function", async () => {
  const project = workloadProject("managed-py-spy");
  const dataHome = temporaryFolder("managed-data");
  const session = await serve(project, dataHome);
  await declare(session, "hot", [python(), "hot.py", "1.0"]);

  const before = (await callTool(session, "list_capabilities", { adapter: "py-spy" })).envelope.result;
  expect(before.capabilities[0].status).toBe("unavailable");
  expect(before.capabilities[0].provisioning).toBe("managed_runtime");
  expect(before.setup_adapters).toEqual(["py-spy"]);
  expect(before.next_tool).toBe("start_capability_setup");
  const action = before.capabilities[0].setup;
  expect(action.requirement).toBe(`py-spy==${pinnedPySpy}`);
  // A plan before setup is refused with the same setup action as its recovery.
  const refused = await callTool(session, "plan_capture", { workload_name: "hot", adapter: "py-spy", parameters: {} });
  expect(refused.envelope.error.code).toBe("CAPABILITY_UNAVAILABLE");
  expect(refused.envelope.error.recovery.next_tool).toBe("start_capability_setup");
  expect(refused.envelope.error.recovery.context.arguments).toEqual(action.arguments);

  const started = (await callTool(session, "start_capability_setup", action.arguments)).envelope.result;
  expect(started.operation_id).toMatch(/^op-[0-9a-f]{64}$/);
  expect(started.request).toEqual({ adapters: ["py-spy"] });
  // The same key and request reconnect to the same operation; the same key with another request is a conflict.
  const again = (await callTool(session, "start_capability_setup", action.arguments)).envelope.result;
  expect(again.operation_id).toBe(started.operation_id);
  const conflict = await callTool(session, "start_capability_setup", { ...action.arguments, adapters: ["py-spy", "pyperf"] });
  expect(conflict.envelope.error.code).toBe("REVISION_CONFLICT");
  expect(conflict.envelope.error.recovery.context.arguments).toEqual({ operation_id: started.operation_id });

  const done = await pollUntilEnded(session, started.operation_id);
  expect(done.state).toBe("terminal");
  const phases = [...new Set(done.progress.map((entry: { phase: string }) => entry.phase))];
  expect(phases).toEqual(["validating_request", "installing_packages", "staging_providers", "verifying", "completed"]);
  expect(done.item_outcomes).toEqual([
    expect.objectContaining({ item: "py-spy", status: "complete", provider: `providers/py-spy/${pinnedPySpy}`, version: pinnedPySpy }),
  ]);
  expect(done.terminal_receipt.setup_verification.status).toBe("verified");
  expect(done.recovery).toEqual({ action: "inspect_capabilities", tool: "list_capabilities", arguments: { adapter: "py-spy" } });
  expect(existsSync(join(dataHome, "flameox", "providers", "py-spy", pinnedPySpy, "bin", "py-spy"))).toBe(true);
  expect(stagingEntries(dataHome)).toEqual([]);

  const after = (await callTool(session, "list_capabilities", { adapter: "py-spy" })).envelope.result;
  expect(after.capabilities[0]).toMatchObject({
    status: "available",
    provisioning: "managed_runtime",
    managed_provider: `providers/py-spy/${pinnedPySpy}`,
    version: pinnedPySpy,
    setup: null,
    setup_verification: "active",
  });
  expect(after.setup_adapters).toEqual([]);
  expect(after.latest_setup).toMatchObject({ operation_id: started.operation_id, state: "terminal", outcomes: { "py-spy": "complete" } });

  const plan = (await callTool(session, "plan_capture", { workload_name: "hot", adapter: "py-spy", parameters: {} })).envelope.result;
  // Agents see executables by name, never a host path: the preflight check says the managed copy is the one.
  expect(plan.collector_argv[0]).toBe("py-spy");
  expect(plan.preflight.checks.map((check: { detail: string }) => check.detail).join(" ")).toContain("(managed provider providers/py-spy/");
  const executed = (await callTool(session, "execute_capture_plan", { plan_id: plan.plan_id })).envelope.result;
  expect(executed.execution_status).toBe("succeeded");
  const hotspots = (await callTool(session, "analyze_hotspots", { run_or_artifact: executed.run_id, limit: 1 })).envelope.result;
  expect(hotspots.hotspots[0].function).toBe("burn_cpu");

  // Setup of what is installed records it as already available and installs nothing.
  const repeat = (await callTool(session, "start_capability_setup", { adapters: ["py-spy"], idempotency_key: "again-1" })).envelope.result;
  const repeated = await pollUntilEnded(session, repeat.operation_id);
  expect(repeated.terminal_receipt).toMatchObject({ installed: [], already_available: ["py-spy"] });
});

test("cancel mid-install stops pip, leaves no provider folder and no staging, and offers a retry under a fresh key", async () => {
  const project = workloadProject("managed-cancel");
  const dataHome = temporaryFolder("managed-cancel-data");
  const index = stalledIndex();
  const session = await serve(project, dataHome, { PIP_INDEX_URL: index.url });
  const started = (await callTool(session, "start_capability_setup", { adapters: ["py-spy"], idempotency_key: "cancel-1" })).envelope
    .result;
  await index.connected;
  const running = (await callTool(session, "get_capability_setup", { operation_id: started.operation_id })).envelope.result;
  expect(running.state).toBe("running");
  expect(running.phase).toBe("installing_packages");
  expect(running.poll_after_ms).toBe(1000);
  expect(running.recovery).toEqual({ action: "poll", tool: "get_capability_setup", arguments: { operation_id: started.operation_id } });

  const cancelled = (await callTool(session, "cancel_capability_setup", { operation_id: started.operation_id })).envelope.result;
  expect(cancelled).toMatchObject({
    state: "cancelled",
    phase: "cancelling",
    cancellation_requested: true,
    cleanup_status: "complete",
    failure_code: "PROCESS_CANCELLED",
  });
  expect(cancelled.item_outcomes[0]).toMatchObject({ item: "py-spy", status: "retryable" });
  expect(cancelled.recovery).toEqual({
    action: "retry_new_operation",
    tool: "start_capability_setup",
    arguments: { adapters: ["py-spy"], idempotency_key: `${started.operation_id}:retry:${cancelled.revision + 1}` },
  });
  expect(existsSync(join(dataHome, "flameox", "providers", "py-spy"))).toBe(false);
  expect(stagingEntries(dataHome)).toEqual([]);
  // A terminal operation is returned as it is.
  const repeat = (await callTool(session, "cancel_capability_setup", { operation_id: started.operation_id })).envelope.result;
  expect(repeat.revision).toBe(cancelled.revision);
});

test("a setup whose server died reads as unmanaged_after_restart in the next server, with its staging removed", async () => {
  const project = workloadProject("managed-restart");
  const dataHome = temporaryFolder("managed-restart-data");
  const index = stalledIndex();
  const first = await serve(project, dataHome, { PIP_INDEX_URL: index.url });
  const request = { adapters: ["py-spy"], idempotency_key: "restart-1" };
  const started = (await callTool(first, "start_capability_setup", request)).envelope.result;
  await index.connected;
  expect(stagingEntries(dataHome).length).toBeGreaterThan(0);
  const pid = (first.client.transport as unknown as { pid: number | null }).pid!;
  process.kill(pid, "SIGKILL");
  await waitFor("the killed server to be gone", () => {
    try {
      process.kill(pid, 0);
      return false;
    } catch {
      return true;
    }
  });

  const second = await serve(project, dataHome, { PIP_INDEX_URL: index.url });
  const orphan = (await callTool(second, "get_capability_setup", { operation_id: started.operation_id })).envelope.result;
  expect(orphan).toMatchObject({ state: "unmanaged_after_restart", cleanup_status: "complete", failure_code: "PROCESS_CANCELLED" });
  expect(orphan.recovery).toEqual({
    action: "retry_new_operation",
    tool: "start_capability_setup",
    arguments: { adapters: ["py-spy"], idempotency_key: `${started.operation_id}:retry:${orphan.revision + 1}` },
  });
  expect(stagingEntries(dataHome)).toEqual([]);
  expect(existsSync(join(dataHome, "flameox", "providers", "py-spy"))).toBe(false);
  // The same key still names that operation; cancelling it from here is refused (another process ran it).
  expect((await callTool(second, "start_capability_setup", request)).envelope.result.state).toBe("unmanaged_after_restart");
  const cancel = await callTool(second, "cancel_capability_setup", { operation_id: started.operation_id });
  expect(cancel.envelope.result.state).toBe("unmanaged_after_restart");
});

test("pyperf from its managed environment benchmarks a workload whose own interpreter has no pyperf", async () => {
  const project = workloadProject("managed-pyperf");
  const dataHome = temporaryFolder("managed-pyperf-data");
  // A fresh venv is an interpreter that surely has no pyperf.
  const made = Bun.spawnSync(["python3", "-m", "venv", "--without-pip", join(project, ".venv")], { stdout: "pipe", stderr: "pipe" });
  expect(made.exitCode).toBe(0);
  const session = await serve(project, dataHome);
  await declare(session, "hot", [join(project, ".venv", "bin", "python"), "hot.py", "0.02"]);
  const before = (await callTool(session, "list_capabilities", { adapter: "pyperf" })).envelope.result;
  expect(before.setup_adapters).toEqual(["pyperf"]);
  const started = (await callTool(session, "start_capability_setup", before.capabilities[0].setup.arguments)).envelope.result;
  expect((await pollUntilEnded(session, started.operation_id)).state).toBe("terminal");
  const after = (await callTool(session, "list_capabilities", { adapter: "pyperf" })).envelope.result;
  expect(after.capabilities[0]).toMatchObject({ status: "available", provisioning: "managed_runtime", setup: null });

  const plan = await callTool(session, "plan_capture", {
    workload_name: "hot",
    adapter: "pyperf",
    parameters: {},
    adapter_options: { processes: 1, values: 2, warmups: 0, loops: 1 },
  });
  // The interpreter is shown by name (no host path); the run succeeding although the workload's own
  // interpreter has no pyperf is what shows the managed environment ran it.
  expect(plan.envelope.result.collector_argv.slice(0, 3)).toEqual(["python", "-m", "pyperf"]);
  const executed = (await callTool(session, "execute_capture_plan", { plan_id: plan.envelope.result.plan_id })).envelope.result;
  expect(executed.execution_status).toBe("succeeded");
  const measured = (await callTool(session, "query_measurements", { run_id: executed.run_id })).envelope.result;
  expect(measured.total).toBeGreaterThanOrEqual(2);
});
