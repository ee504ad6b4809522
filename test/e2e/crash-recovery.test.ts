import { Database } from "bun:sqlite";
import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { crashBoundaries, crashVariable } from "../../src/store/crash-points.ts";
import { binaryPath, callTool, connectMcp, type McpSession, runCli, testEnvironment } from "../support/binary.ts";
import { python, workloadProject } from "../support/project.ts";
import { waitFor } from "../support/wait.ts";

// Every step starts the compiled binary, several of them killed on purpose.
setDefaultTimeout(180_000);

let session: McpSession | undefined;
afterEach(async () => {
  await session?.close();
  session = undefined;
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/\) [ZX] /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

/** Runs the CLI with a crash point armed; it must die by SIGKILL at that boundary. */
function crashAt(project: string, boundary: string, argv: string[]): void {
  const result = Bun.spawnSync([binaryPath(), "--project-root", project, ...argv], {
    cwd: project,
    env: testEnvironment({ [crashVariable]: boundary }),
    stdout: "pipe",
    stderr: "pipe",
  });
  expect({ boundary, argv: argv.join(" "), signal: result.signalCode ?? `exit ${result.exitCode}` }).toEqual({
    boundary,
    argv: argv.join(" "),
    signal: "SIGKILL",
  });
}

/**
 * Leftovers worked out independently of flameox's own scan: with no flameox process alive, everything in
 * staging/ except an open run's folder, every evidence folder and artifact file no row names, and empty
 * artifact folders. Paths are relative to .diagnostics.
 */
function independentLeftovers(project: string): { paths: string[]; openRuns: string[] } {
  const root = join(project, ".diagnostics");
  const database = new Database(join(root, "state.sqlite"), { readonly: true });
  try {
    const objects = new Set(
      database
        .query<{ stored_path: string }, []>("SELECT stored_path FROM artifacts")
        .all()
        .map((row) => row.stored_path),
    );
    const bundles = new Set(
      database
        .query<{ bundle_id: string }, []>("SELECT bundle_id FROM evidence_bundles")
        .all()
        .map((row) => row.bundle_id),
    );
    const openRuns = database
      .query<{ run_id: string }, []>("SELECT run_id FROM runs WHERE execution_status IN ('planned', 'running')")
      .all()
      .map((row) => row.run_id);
    const paths: string[] = [];
    for (const name of readdirSync(join(root, "staging"))) if (!openRuns.includes(name.slice("run-".length))) paths.push(`staging/${name}`);
    for (const name of readdirSync(join(root, "evidence"))) if (!bundles.has(name)) paths.push(`evidence/${name}`);
    const sha256 = join(root, "artifacts", "sha256");
    for (const prefix of existsSync(sha256) ? readdirSync(sha256) : []) {
      const objectsHere = readdirSync(join(root, "artifacts", "sha256", prefix));
      if (objectsHere.length === 0) paths.push(`artifacts/sha256/${prefix}`);
      for (const object of objectsHere) {
        const files = readdirSync(join(root, "artifacts", "sha256", prefix, object));
        if (files.length === 0) paths.push(`artifacts/sha256/${prefix}/${object}`);
        for (const file of files)
          if (!objects.has(`artifacts/sha256/${prefix}/${object}/${file}`)) paths.push(`artifacts/sha256/${prefix}/${object}/${file}`);
      }
    }
    return { paths: paths.sort(), openRuns };
  } finally {
    database.close();
  }
}

test("kill -9 at each publication boundary: validate finds every leftover, recover removes it, validate is clean, the next capture works", async () => {
  const project = workloadProject("crash-boundaries");
  writeFileSync(join(project, "flameox.toml"), `[workloads.quick]\nargv = ["${python()}", "-c", "print('quick')"]\ntimeout_seconds = 60\n`);
  expect(runCli(["init", project, "--json"]).exitCode).toBe(0);
  // An import passes every boundary but the collector's.
  const importBoundaries = new Set<string>(crashBoundaries.filter((boundary) => boundary !== "capture_collected"));
  const seen: Record<string, string[]> = {};
  for (const boundary of crashBoundaries) {
    const runsBefore = runCli(["--project-root", project, "runs", "list", "--json"]).json.runs.length;
    if (importBoundaries.has(boundary)) {
      writeFileSync(join(project, `${boundary}.collapsed`), `main;crash_at_${boundary} 5\nmain;other 1\n`);
      crashAt(project, boundary, ["import", `${boundary}.collapsed`, "--json"]);
    }
    crashAt(project, boundary, ["capture", "run", "command", "--workload", "quick", "--json"]);

    const { paths, openRuns } = independentLeftovers(project);
    seen[boundary] = paths;
    expect({ boundary, something_left: paths.length + openRuns.length > 0 }).toEqual({ boundary, something_left: true });
    const validated = runCli(["--project-root", project, "validate", "--json"]).json;
    const reported = new Set(validated.issues.map((issue: { path: string | null }) => issue.path));
    expect({ boundary, unreported: paths.filter((path) => !reported.has(`.diagnostics/${path}`)) }).toEqual({ boundary, unreported: [] });
    expect(validated.issues.filter((issue: { code: string }) => issue.code === "stale_run")).toHaveLength(openRuns.length);
    expect(validated.repair_plan_id).toStartWith("sha256:");

    const recovered = runCli(["--project-root", project, "recover", "--json"]);
    expect(recovered.exitCode).toBe(0);
    expect(recovered.json.recovered.map((run: { run_id: string }) => run.run_id).sort()).toEqual([...openRuns].sort());
    expect(independentLeftovers(project)).toEqual({ paths: [], openRuns: [] });
    const clean = runCli(["--project-root", project, "validate", "--json"]);
    expect({ boundary, exit: clean.exitCode, issues: clean.json.issues }).toEqual({ boundary, exit: 0, issues: [] });
    // Only a boundary after the commit keeps what was published: the import's run and the capture's run are there, whole.
    const runs = runCli(["--project-root", project, "runs", "list", "--json"]).json.runs;
    if (boundary === "published") {
      expect(runs.length).toBe(runsBefore + 2);
      expect(runs.filter((run: { execution_status: string }) => run.execution_status === "succeeded")).not.toHaveLength(0);
    } else {
      // A capture's run is recorded when it starts, and crash recovery closes it; an import's run never appears.
      expect(runs.length).toBe(runsBefore + 1);
      expect(runs[0].execution_status).toBe("cancelled");
    }
  }
  // Each boundary left something different behind (staged copies, finished bundles, placed objects …).
  expect(seen.artifact_placed!.some((path) => path.startsWith("artifacts/"))).toBe(true);
  expect(seen.bundle_placed!.some((path) => path.startsWith("evidence/"))).toBe(true);
  // Killed after the folders were synced and before COMMIT: both kinds of placed entry are left over, and recovered.
  expect(seen.placements_synced!.some((path) => path.startsWith("artifacts/"))).toBe(true);
  expect(seen.placements_synced!.some((path) => path.startsWith("evidence/"))).toBe(true);

  const next = runCli(["--project-root", project, "capture", "run", "command", "--workload", "quick", "--json"]);
  expect(next.exitCode).toBe(0);
  expect(next.json.receipt.execution_status).toBe("succeeded");
  writeFileSync(join(project, "after.collapsed"), "main;after 3\n");
  expect(runCli(["--project-root", project, "import", "after.collapsed", "--json"], { cwd: project }).exitCode).toBe(0);
  expect(runCli(["--project-root", project, "validate", "--json"]).json.issues).toEqual([]);
});

test("a server killed mid-capture: the next server's startup closes the run, terminates the workload's group, and workspace_status shows no active capture", async () => {
  const project = workloadProject("startup-recovery");
  const pidFile = join(project, "pids.txt");
  writeFileSync(
    join(project, "flameox.toml"),
    `[workloads.spawner]\nargv = ["${python()}", "spawner.py", "${pidFile}"]\ntimeout_seconds = 120\n\n[workloads.quick]\nargv = ["${python()}", "-c", "print('quick')"]\n`,
  );
  session = await connectMcp(project, ["--init"]);
  const plan = await callTool(session, "plan_capture", { workload_name: "spawner", adapter: "command" });
  const started = await callTool(session, "start_detached_capture", {
    plan_id: plan.envelope.result.plan_id,
    idempotency_key: "startup-recovery-1",
  });
  const runId = started.envelope.result.run_id;
  const pids = (await waitFor("the workload's pid file", () => existsSync(pidFile) && readFileSync(pidFile, "utf8")))
    .trim()
    .split(" ")
    .map(Number);
  const serverPid = session.pid()!;
  process.kill(serverPid, "SIGKILL");
  await waitFor("the killed server to be gone", () => !alive(serverPid));
  await session.close().catch(() => undefined);
  session = undefined;
  expect(pids.some(alive)).toBe(true);

  session = await connectMcp(project);
  const status = (await callTool(session, "workspace_status")).envelope.result;
  expect({ active_captures: status.active_captures, stale_run_ids: status.stale_run_ids }).toEqual({
    active_captures: 0,
    stale_run_ids: [],
  });
  expect(session.stderr()).toContain(`Run ${runId} was still marked running`);
  const run = (await callTool(session, "get_run", { run_id: runId })).envelope.result;
  expect({ execution: run.execution_status, capture: run.capture_status, cause: run.process.cancellation_cause, lease: run.lease }).toEqual(
    {
      execution: "cancelled",
      capture: "quarantined",
      cause: "crash_recovery",
      lease: null,
    },
  );
  expect(run.limitations.join(" ")).toContain("closed by crash recovery");
  for (const pid of pids) expect({ pid, alive: alive(pid) }).toEqual({ pid, alive: false });

  const next = await callTool(session, "plan_capture", { workload_name: "quick", adapter: "command" });
  const executed = await callTool(session, "execute_capture_plan", { plan_id: next.envelope.result.plan_id });
  expect(executed.envelope.result.execution_status).toBe("succeeded");
  // The quarantined partial outputs can be registered with their run afterwards (CLI only).
  const restored = runCli(["--project-root", project, "recover", "--quarantine", `run-${runId}`, "--json"]);
  expect(restored.exitCode).toBe(0);
  expect(restored.json.restored_artifacts.map((artifact: { display_name: string }) => artifact.display_name)).toContain("stdout.txt");
  const after = (await callTool(session, "get_run", { run_id: runId })).envelope.result;
  expect(after.artifacts.map((artifact: { role: string }) => artifact.role)).toContain("stdout");
  expect(runCli(["--project-root", project, "validate", "--json"]).json.issues).toEqual([]);
});

test("workspace_status recovers a dead lease the way flameox recover does, and its warnings say so", () => {
  const project = workloadProject("status-recovery");
  writeFileSync(join(project, "flameox.toml"), `[workloads.quick]\nargv = ["${python()}", "-c", "print('quick')"]\n`);
  expect(runCli(["init", project, "--json"]).exitCode).toBe(0);
  crashAt(project, "capture_collected", ["capture", "run", "command", "--workload", "quick", "--json"]);
  const runId = runCli(["--project-root", project, "runs", "list", "--json"]).json.runs[0].run_id;
  const status = runCli(["--project-root", project, "status", "--json"]).json;
  expect({ active: status.active_captures, stale: status.stale_run_ids }).toEqual({ active: 0, stale: [] });
  expect(status.warnings.join(" ")).toContain(`Run ${runId} was still marked running`);
  const run = runCli(["--project-root", project, "runs", "show", runId, "--json"]).json;
  expect([run.execution_status, run.process.cancellation_cause]).toEqual(["cancelled", "crash_recovery"]);
  // The dead process's own staging went with it; its run's partial outputs are in quarantine.
  expect(readdirSync(join(project, ".diagnostics", "staging"))).toEqual([]);
  expect(readdirSync(join(project, ".diagnostics", "quarantine"))).toEqual([`run-${runId}`]);
  expect(runCli(["--project-root", project, "validate", "--json"]).json.issues).toEqual([]);
});

test("two concurrent imports of the same bytes, one failing, never lose the object the other registered", async () => {
  const project = workloadProject("same-bytes");
  expect(runCli(["init", project, "--json"]).exitCode).toBe(0);
  const events = (round: number) =>
    Array.from(
      { length: 300_000 },
      (_, index) => `{"name":"r${round}_${index % 50}","ph":"X","ts":${index * 2},"dur":1,"pid":1,"tid":1}`,
    ).join(",");
  const staged = () =>
    readdirSync(join(project, ".diagnostics", "staging"))
      .filter((name) => name.startsWith("proc-"))
      .some((name) => readdirSync(join(project, ".diagnostics", "staging", name)).some((entry) => entry.startsWith("artifact-")));
  for (let round = 0; round < 6; round++) {
    // A Chrome trace cut before its end: as an execution_trace it is extracted and fails at the end; kept as
    // collector_metadata the same bytes are stored without extraction and succeed.
    const file = join(project, `round-${round}.json`);
    writeFileSync(file, `{"traceEvents":[${events(round)}`);
    const failing = Bun.spawn([binaryPath(), "--project-root", project, "import", file, "--kind", "execution_trace", "--json"], {
      env: testEnvironment(),
      stdout: "pipe",
      stderr: "pipe",
    });
    // Rounds 0-2: the other import runs start to finish while the failing one is extracting; rounds 3-5: both start together.
    if (round < 3) await waitFor("the failing import's staged copy", staged);
    const succeeding = runCli(["--project-root", project, "import", file, "--kind", "collector_metadata", "--json"]);
    expect(await failing.exited).toBe(5);
    expect(JSON.parse(await new Response(failing.stdout).text()).error.code).toBe("ARTIFACT_PARSE_FAILED");
    expect(succeeding.exitCode).toBe(0);
    const artifactId: string = succeeding.json.artifact_id;
    expect(runCli(["--project-root", project, "artifacts", "show", artifactId, "--json"]).exitCode).toBe(0);
    const hex = artifactId.slice("sha256:".length);
    const folder = join(project, ".diagnostics", "artifacts", "sha256", hex.slice(0, 2), hex);
    const [payload] = readdirSync(folder);
    expect(
      createHash("sha256")
        .update(readFileSync(join(folder, payload!)))
        .digest("hex"),
    ).toBe(hex);
    expect(statSync(join(folder, payload!)).size).toBe(succeeding.json.byte_length);
    const validated = runCli(["--project-root", project, "validate", "--full", "--json"]);
    expect({ round, exit: validated.exitCode, issues: validated.json.issues }).toEqual({ round, exit: 0, issues: [] });
  }
});
