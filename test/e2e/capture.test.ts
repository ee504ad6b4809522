import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { callTool, connectMcp, runCli, temporaryFolder, testEnvironment, type McpSession } from "../support/binary.ts";
import { declare, planAndExecute, python, workloadProject } from "../support/project.ts";
import { waitFor } from "../support/wait.ts";

setDefaultTimeout(120_000);

let session: McpSession | undefined;
afterEach(async () => {
  await session?.close();
  session = undefined;
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/\) [ZX] /.test(stat);
  } catch {
    return false;
  }
}

describe("py-spy capture and hotspots over stdio", () => {
  test("the known hot function ranks first by self time, callers and callees are right, and the imported profile ranks the same", async () => {
    const project = workloadProject("hot");
    session = await connectMcp(project, ["--init"]);
    await declare(session, "hot", [python(), "hot.py", "{seconds}"], { parameters: { seconds: ["1.5"] } });
    const { plan, executed } = await planAndExecute(session, "hot", "py-spy", {}, { rate: 200 });
    expect(plan.limitation_details[0].code).toBe("trusted_local_execution");
    expect(plan.warnings[0]).toStartWith("Trusted-local execution selected");
    // Said once: the warning carries the sentence, the limitation its code and a pointer to it.
    expect(plan.limitation_details[0].message).not.toContain(plan.warnings[0]);
    expect(JSON.stringify(plan).split("no enforced containment")).toHaveLength(2);
    expect(executed.isError).toBe(false);
    const receipt = executed.envelope.result;
    expect(receipt.execution_status).toBe("succeeded");
    expect(receipt.validation_status).toBe("passed");
    expect(executed.raw.content.some((item: any) => item.type === "resource_link" && item.uri === `flameox://runs/${receipt.run_id}`)).toBe(
      true,
    );

    const hotspots = await callTool(session, "analyze_hotspots", { run_or_artifact: receipt.run_id, limit: 3 });
    expect(hotspots.envelope.ok).toBe(true);
    const top = hotspots.envelope.result.hotspots[0];
    expect(top.function).toBe("burn_cpu");
    expect(top.file).toBe("hot.py");
    // burn_cpu does ~8x the CPU work of light_work per round (measured with process_time), so its share is
    // ≈ 0.89 of ~300 samples (sd ≈ 0.018); falling below 0.5 would take over 20 binomial standard deviations,
    // and descheduling on a loaded machine freezes whichever function was running, in proportion to the time
    // each one runs. light_work's ≈ 0.11 (≈ 33 samples) makes it a callee in every run: none at all has
    // probability below e^-30.
    expect(top.self_share).toBeGreaterThan(0.5);
    expect(hotspots.envelope.result.total).toBeGreaterThanOrEqual(3);
    expect(hotspots.envelope.result.returned).toBe(3);
    // The self time the page leaves out: every function's self share sums to 1 over the whole profile.
    const shownSelfShare = hotspots.envelope.result.hotspots.reduce((sum: number, hotspot: any) => sum + hotspot.self_share, 0);
    expect(hotspots.envelope.result.hidden_self_share).toBeCloseTo(1 - shownSelfShare, 9);
    expect(hotspots.envelope.result.units_available.map((unit: any) => unit.unit)).toEqual([hotspots.envelope.result.unit]);

    const callers = await callTool(session, "get_frame_callers", { run_or_artifact: receipt.run_id, frame_id: top.frame_id });
    expect(callers.envelope.result.edges[0].function).toBe("run_job");
    expect(callers.envelope.result.edges[0].share_of_frame).toBeCloseTo(1, 5);
    const callees = await callTool(session, "get_frame_callees", {
      run_or_artifact: receipt.run_id,
      frame_id: callers.envelope.result.edges[0].frame_id,
    });
    const calleeNames = callees.envelope.result.edges.map((edge: any) => edge.function);
    expect(calleeNames[0]).toBe("burn_cpu");
    expect(calleeNames).toContain("light_work");
    const examples = await callTool(session, "get_stack_examples", { run_or_artifact: receipt.run_id, frame_id: top.frame_id, limit: 1 });
    expect(examples.envelope.result.examples[0].frames.map((frame: any) => frame.function).slice(-2)).toEqual(["run_job", "burn_cpu"]);

    // The same workload profiled by hand and imported from a file ranks the same.
    const profile = join(project, "by-hand.speedscope.json");
    const byHand = Bun.spawnSync(
      ["py-spy", "record", "--rate", "200", "--format", "speedscope", "--output", profile, "--", python(), "hot.py", "1.5"],
      { cwd: project, env: testEnvironment() },
    );
    expect(byHand.exitCode).toBe(0);
    const imported = await callTool(session, "import_artifact", { path: "by-hand.speedscope.json" });
    expect(imported.envelope.ok).toBe(true);
    expect(imported.envelope.result.kind).toBe("sample_profile");
    expect(imported.envelope.result.format).toBe("speedscope");
    const importedHotspots = await callTool(session, "analyze_hotspots", {
      run_or_artifact: imported.envelope.result.artifact_id,
      limit: 3,
    });
    expect(importedHotspots.envelope.result.hotspots[0].function).toBe("burn_cpu");
    // Frame keys are stable across runs: the function id is the same in both.
    expect(importedHotspots.envelope.result.hotspots[0].frame_id).toBe(top.frame_id);

    const run = await callTool(session, "get_run", { run_id: receipt.run_id });
    const names = run.envelope.result.measurements.map((measurement: any) => measurement.name);
    expect(names).toContain("runtime.wall_time_ns");
    expect(names).toContain("runtime.peak_rss_bytes");
    const resource = await session.client.readResource({ uri: `flameox://runs/${receipt.run_id}` });
    expect((resource.contents[0] as { text: string }).text).toContain(receipt.run_id);
  });
});

describe("capture plans are single-use, expire, and are bound to their inputs", () => {
  test("once, not twice, not after expiry, not after the definition changed; a rejected plan never starts a process", async () => {
    const project = workloadProject("plans");
    session = await connectMcp(project, ["--init"]);
    const marker = join(project, "ran.txt");
    await declare(session, "marker", [python(), "outcome.py", "marker", marker]);

    const first = await callTool(session, "plan_capture", { workload_name: "marker", adapter: "command", parameters: {} });
    expect(first.envelope.result.plan_id).toMatch(/^[0-9a-f]{64}$/);
    const executed = await callTool(session, "execute_capture_plan", { plan_id: first.envelope.result.plan_id });
    expect(executed.envelope.result.execution_status).toBe("succeeded");
    expect(existsSync(marker)).toBe(true);
    Bun.spawnSync(["rm", marker]);

    const twice = await callTool(session, "execute_capture_plan", { plan_id: first.envelope.result.plan_id });
    expect(twice.envelope.error.code).toBe("INVALID_CAPTURE_PLAN");
    expect(twice.envelope.error.recovery.next_tool).toBe("plan_capture");
    expect(existsSync(marker)).toBe(false);

    const unknown = await callTool(session, "execute_capture_plan", { plan_id: "f".repeat(64) });
    expect(unknown.envelope.error.code).toBe("INVALID_CAPTURE_PLAN");

    const stale = await callTool(session, "plan_capture", { workload_name: "marker", adapter: "command", parameters: {} });
    const status = await callTool(session, "workload_configuration_status");
    await callTool(session, "configure_workload", {
      name: "marker",
      operation: "replace",
      argv: [python(), "outcome.py", "marker", marker, "changed"],
      expected_configuration_id: status.envelope.result.configuration_id,
    });
    const changed = await callTool(session, "execute_capture_plan", { plan_id: stale.envelope.result.plan_id });
    expect(changed.envelope.error.code).toBe("INVALID_CAPTURE_PLAN");
    expect(changed.envelope.error.message).toContain("workload definition changed");
    expect(existsSync(marker)).toBe(false);

    const policyPath = join(project, ".diagnostics", "config.toml");
    writeFileSync(policyPath, readFileSync(policyPath, "utf8").replace(/plan_ttl_seconds = \d+/, "plan_ttl_seconds = 1"));
    const requestedAt = Date.now();
    const expiring = await callTool(session, "plan_capture", { workload_name: "marker", adapter: "command", parameters: {} });
    const expiresAt = Date.parse(expiring.envelope.result.expires_at);
    // The plan's expiry is its creation (inside the call) plus the 1 s policy TTL; same clock as ours.
    expect(expiresAt).toBeGreaterThanOrEqual(requestedAt + 1000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 1000);
    // The server takes no injected clock yet, so the test waits for the plan's own expiry instant to pass
    // (whatever the machine's speed), rather than a guessed duration.
    while (Date.now() <= expiresAt) await Bun.sleep(expiresAt - Date.now() + 1);
    const expired = await callTool(session, "execute_capture_plan", { plan_id: expiring.envelope.result.plan_id });
    expect(expired.envelope.error.code).toBe("INVALID_CAPTURE_PLAN");
    expect(expired.envelope.error.message).toContain("expired");
    expect(existsSync(marker)).toBe(false);

    const runs = await callTool(session, "list_runs", {});
    expect(runs.envelope.result.total).toBe(1);
  });

  test("plan_capture refuses argv and cwd, unknown parameters and managed containment", async () => {
    const project = workloadProject("plan-refusals");
    session = await connectMcp(project, ["--init"]);
    await declare(session, "sized", [python(), "hot.py", "{seconds}"], { parameters: { seconds: ["0.1", "0.2"] } });
    const withArgv = await callTool(session, "plan_capture", {
      workload_name: "sized",
      adapter: "command",
      parameters: {},
      argv: ["rm", "-rf", "/"],
      cwd: "/",
    });
    expect(withArgv.envelope.error.code).toBe("INVALID_ARGUMENTS");
    expect(withArgv.envelope.error.details.fields.map((field: any) => field.field).sort()).toEqual(["argv", "cwd"]);
    const badParameter = await callTool(session, "plan_capture", {
      workload_name: "sized",
      adapter: "command",
      parameters: { seconds: "9" },
    });
    expect(badParameter.envelope.error.code).toBe("INVALID_CAPTURE_PLAN");
    expect(badParameter.envelope.error.details.allowed).toEqual(["0.1", "0.2"]);
    const torchOptions = await callTool(session, "plan_capture", {
      workload_name: "sized",
      adapter: "command",
      parameters: {},
      torch_profiler_options: { record_shapes: true },
    });
    expect(torchOptions.envelope.error.code).toBe("INVALID_CAPTURE_PLAN");
    expect(torchOptions.envelope.error.details.field).toBe("torch_profiler_options");
    const badOption = await callTool(session, "plan_capture", {
      workload_name: "sized",
      adapter: "py-spy",
      parameters: {},
      adapter_options: { rate: 0 },
    });
    expect(badOption.envelope.error.code).toBe("INVALID_CAPTURE_PLAN");
    const managed = await callTool(session, "plan_capture", {
      workload_name: "sized",
      adapter: "command",
      parameters: {},
      capture_mode: "managed",
    });
    expect(managed.envelope.error.code).toBe("CAPABILITY_UNAVAILABLE");
    expect(managed.envelope.error.details.capture_mode).toBe("auto");
  });
});

describe("cancellation and truthful outcomes", () => {
  test("cancelling execute_capture_plan mid-run leaves one cancelled run with its whole tree gone, grandchildren included", async () => {
    const project = workloadProject("cancel");
    session = await connectMcp(project, ["--init"]);
    const pidFile = join(project, "pids.txt");
    await declare(session, "spawner", [python(), "spawner.py", pidFile], { timeout_seconds: 120 });
    const plan = await callTool(session, "plan_capture", { workload_name: "spawner", adapter: "command", parameters: {} });
    const controller = new AbortController();
    const progress: number[] = [];
    const call = session.client
      .callTool({ name: "execute_capture_plan", arguments: { plan_id: plan.envelope.result.plan_id } }, undefined, {
        signal: controller.signal,
        onprogress: (update) => {
          progress.push(update.progress);
        },
        timeout: 60_000,
      })
      .then(
        () => "completed",
        () => "aborted",
      );
    const pids = (await waitFor("the workload's pid file", () => existsSync(pidFile) && readFileSync(pidFile, "utf8")))
      .trim()
      .split(" ")
      .map(Number);
    expect(pids).toHaveLength(4);
    expect(pids.every(alive)).toBe(true);
    controller.abort();
    expect(await call).toBe("aborted");
    expect(progress).toContain(4);
    // The server finishes cleanup after the client gave up; wait for the terminal run state.
    const current = session;
    const run = await waitFor("the cancelled run's terminal state", async () => {
      const listed = (await callTool(current, "list_runs", {})).envelope.result.runs[0];
      return listed && listed.execution_status !== "running" && listed;
    });
    const runs = await callTool(session, "list_runs", {});
    expect(runs.envelope.result.total).toBe(1);
    const manifest = (await callTool(session, "get_run", { run_id: run.run_id })).envelope.result;
    expect(manifest.execution_status).toBe("cancelled");
    expect(manifest.process.cleanup_complete).toBe(true);
    for (const pid of pids) expect(alive(pid)).toBe(false);
  });

  test("a non-zero exit, a timeout and a stdout flood are each recorded truthfully with their artifacts", async () => {
    const project = workloadProject("outcomes");
    session = await connectMcp(project, ["--init"]);
    const policyPath = join(project, ".diagnostics", "config.toml");
    writeFileSync(
      policyPath,
      readFileSync(policyPath, "utf8")
        .replace(/max_output_bytes = \d+/, "max_output_bytes = 65536")
        .replace(/cleanup_grace_seconds = \d+/, "cleanup_grace_seconds = 1"),
    );
    await declare(session, "fails", [python(), "outcome.py", "fail"]);
    // outcome.py prints "sleeping" within ~50 ms of starting, then sleeps 60 s; the 5 s deadline leaves the
    // print a 100x margin on a loaded machine and costs idle time only.
    await declare(session, "sleeps", [python(), "outcome.py", "sleep"], { timeout_seconds: 5 });
    await declare(session, "floods", [python(), "outcome.py", "flood"]);

    const failed = (await planAndExecute(session, "fails", "command")).executed;
    expect(failed.isError).toBe(false);
    expect(failed.envelope.result.execution_status).toBe("failed");
    expect(failed.envelope.result.exit_code).toBe(3);
    const failedRun = (await callTool(session, "get_run", { run_id: failed.envelope.result.run_id })).envelope.result;
    expect(failedRun.process.exit_code).toBe(3);
    expect(failedRun.artifacts.map((artifact: any) => artifact.role).sort()).toEqual(["stderr", "stdout"]);
    const stderrArtifact = failedRun.artifacts.find((artifact: any) => artifact.role === "stderr");
    expect(stderrArtifact.byte_length).toBe("something went wrong\n".length);

    const timedOut = (await planAndExecute(session, "sleeps", "command")).executed;
    expect(timedOut.isError).toBe(true);
    expect(timedOut.envelope.error.code).toBe("PROCESS_TIMEOUT");
    const timedOutRunId = timedOut.envelope.error.run_id;
    expect(timedOutRunId).toBeString();
    const timedOutRun = (await callTool(session, "get_run", { run_id: timedOutRunId })).envelope.result;
    expect(timedOutRun.execution_status).toBe("timed_out");
    expect(timedOutRun.process.timed_out).toBe(true);
    expect(timedOutRun.process.cleanup_complete).toBe(true);
    expect(timedOutRun.artifacts.find((artifact: any) => artifact.role === "stdout").byte_length).toBe("sleeping\n".length);

    const flooded = (await planAndExecute(session, "floods", "command")).executed;
    expect(flooded.envelope.result.execution_status).toBe("succeeded");
    const floodRun = (await callTool(session, "get_run", { run_id: flooded.envelope.result.run_id })).envelope.result;
    expect(floodRun.process.stdout.truncated).toBe(true);
    expect(floodRun.process.stdout.bytes_written).toBe(65536);
    expect(floodRun.process.stdout.bytes_dropped).toBe(20_000 * 1024 - 65536);
    expect(floodRun.artifacts.find((artifact: any) => artifact.role === "stdout").byte_length).toBe(65536);
  });
});

describe("imports refuse unsafe paths and bad profiles leave nothing behind", () => {
  test("symlink escapes, outside paths, NUL bytes, oversize files; truncated and malformed profiles", async () => {
    const project = workloadProject("imports");
    session = await connectMcp(project, ["--init"]);
    const outside = join(temporaryFolder("outside"), "outside.txt");
    writeFileSync(outside, "a;b 1\n");
    Bun.spawnSync(["ln", "-s", outside, join(project, "escape.txt")]);
    const escaping = await callTool(session, "import_artifact", { path: "escape.txt" });
    expect(escaping.envelope.error.code).toBe("EXECUTION_REFUSED");
    expect(escaping.envelope.error.recovery.next_tool).toBe("import_artifact");
    const absoluteOutside = await callTool(session, "import_artifact", { path: "/etc/hostname" });
    expect(absoluteOutside.envelope.error.code).toBe("EXECUTION_REFUSED");
    const dotdot = await callTool(session, "import_artifact", { path: "../../etc/hostname" });
    expect(dotdot.envelope.error.code).toBe("EXECUTION_REFUSED");
    const nul = await callTool(session, "import_artifact", { path: "a\u0000b" });
    expect(nul.envelope.error.code).toBe("EXECUTION_REFUSED");

    const policyPath = join(project, ".diagnostics", "config.toml");
    writeFileSync(policyPath, readFileSync(policyPath, "utf8").replace(/max_artifact_bytes = \d+/, "max_artifact_bytes = 1000"));
    writeFileSync(join(project, "big.collapsed"), "main;work 1\n".repeat(200));
    const big = await callTool(session, "import_artifact", { path: "big.collapsed" });
    expect(big.envelope.error.code).toBe("ARTIFACT_TOO_LARGE");
    writeFileSync(policyPath, readFileSync(policyPath, "utf8").replace(/max_artifact_bytes = \d+/, "max_artifact_bytes = 1000000"));

    const complete = JSON.stringify({
      $schema: "https://www.speedscope.app/file-format-schema.json",
      shared: {
        frames: [
          { name: "main", file: "a.py", line: 1 },
          { name: "work", file: "a.py", line: 5 },
        ],
      },
      profiles: [
        {
          type: "sampled",
          name: "t",
          unit: "none",
          startValue: 0,
          endValue: 2,
          samples: [
            [0, 1],
            [0, 1],
          ],
          weights: [1, 1],
        },
      ],
    });
    writeFileSync(join(project, "truncated.speedscope.json"), complete.slice(0, Math.floor(complete.length / 2)));
    writeFileSync(join(project, "malformed.cpuprofile"), '{"nodes": [{"id": 1, "callFrame": 7}], "samples": "x"}');
    const before = (await callTool(session, "workspace_status")).envelope.result;
    for (const name of ["truncated.speedscope.json", "malformed.cpuprofile"]) {
      const failed = await callTool(session, "import_artifact", { path: name });
      expect(failed.envelope.error.code).toBe("ARTIFACT_PARSE_FAILED");
    }
    const after = (await callTool(session, "workspace_status")).envelope.result;
    expect(after.run_count).toBe(before.run_count);
    expect(after.corpus_commit_id).toBe(before.corpus_commit_id);
    expect((await callTool(session, "list_artifacts", {})).envelope.result.total).toBe(0);
    // Refusals leave no folder: nothing under artifacts/ but its empty sha256 root, nothing staged, validate clean.
    const stored = Bun.spawnSync(["find", join(project, ".diagnostics", "artifacts"), "-mindepth", "2"])
      .stdout.toString()
      .trim();
    expect(stored).toBe("");
    const validated = (await callTool(session, "validate_workspace", {})).envelope.result;
    expect(validated.issues).toEqual([]);

    writeFileSync(join(project, "good.speedscope.json"), complete);
    const good = await callTool(session, "import_artifact", { path: "good.speedscope.json" });
    expect(good.envelope.ok).toBe(true);
    const ranked = await callTool(session, "analyze_hotspots", { run_or_artifact: good.envelope.result.run_id });
    expect(ranked.envelope.result.hotspots[0].function).toBe("work");
    expect(ranked.envelope.result.unit).toBe("samples");
  });
});

describe("crash recovery", () => {
  test("kill -9 of flameox mid-capture, then flameox recover closes the run as cancelled and no partial bundle is visible", async () => {
    const project = workloadProject("crash");
    const pidFile = join(project, "pids.txt");
    writeFileSync(
      join(project, "flameox.toml"),
      `[workloads.spawner]\nargv = ["${python()}", "spawner.py", "${pidFile}"]\ntimeout_seconds = 120\n`,
    );
    expect(runCli(["init", project, "--json"]).exitCode).toBe(0);
    const { binaryPath } = await import("../support/binary.ts");
    const capture = Bun.spawn([binaryPath(), "--project-root", project, "capture", "run", "command", "--workload", "spawner"], {
      env: testEnvironment(),
      stdout: "pipe",
      stderr: "pipe",
    });
    const pids = (await waitFor("the workload's pid file", () => existsSync(pidFile) && readFileSync(pidFile, "utf8")))
      .trim()
      .split(" ")
      .map(Number);
    expect(pids).toHaveLength(4);
    capture.kill("SIGKILL");
    await capture.exited;
    const during = runCli(["--project-root", project, "runs", "list", "--json"]).json;
    expect(during.runs[0].execution_status).toBe("running");
    // validate (read-only) reports the stale run; status would already recover it, as every server start does.
    const stale = runCli(["--project-root", project, "validate", "--json"]).json.issues;
    expect(stale.filter((issue: { code: string }) => issue.code === "stale_run")).toHaveLength(1);

    const recovered = runCli(["--project-root", project, "recover", "--json"]);
    expect(recovered.exitCode).toBe(0);
    expect(recovered.json.recovered).toHaveLength(1);
    expect(recovered.json.recovered[0].workload_killed).toBe(true);
    const run = runCli(["--project-root", project, "runs", "show", during.runs[0].run_id, "--json"]).json;
    expect(run.execution_status).toBe("cancelled");
    expect(run.process.cancellation_cause).toBe("crash_recovery");
    expect(run.artifacts).toEqual([]);
    for (const pid of pids) expect(alive(pid)).toBe(false);
    const status = runCli(["--project-root", project, "status", "--json"]).json;
    expect(status.stale_run_ids).toEqual([]);
    const evidence = Bun.spawnSync(["find", join(project, ".diagnostics", "evidence"), "-type", "f"])
      .stdout.toString()
      .trim();
    expect(evidence).toBe("");
    const again = runCli(["--project-root", project, "recover", "--json"]);
    expect(again.json.recovered).toEqual([]);
  });
});
