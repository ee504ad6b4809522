import { expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "../support/binary.ts";
import { python, workloadProject } from "../support/project.ts";

setDefaultTimeout(120_000);

test("a person's CLI flow: workload run, capture run with progress, hotspots, drill-down, import --json with its run", () => {
  const project = workloadProject("cli-flow");
  writeFileSync(
    join(project, "flameox.toml"),
    `# declared by hand\n[workloads.hot]\nargv = ["${python()}", "hot.py", "1.0"]\ntimeout_seconds = 60\n`,
  );
  expect(runCli(["init", project]).exitCode).toBe(0);
  const listed = runCli(["--project-root", project, "workload", "list", "--json"]);
  expect(listed.json.workflows.map((workflow: any) => workflow.name)).toEqual(["hot"]);

  const plain = runCli(["--project-root", project, "workload", "run", "hot", "--json"]);
  expect(plain.exitCode).toBe(0);
  expect(plain.json.plan.adapter).toBe("command");
  expect(plain.json.receipt.execution_status).toBe("succeeded");

  const captured = runCli([
    "--project-root",
    project,
    "capture",
    "run",
    "py-spy",
    "--workload",
    "hot",
    "--adapter-options",
    '{"rate": 200}',
  ]);
  expect(captured.exitCode).toBe(0);
  expect(captured.stderr).toContain("[8/8] completed: evidence publication complete");
  const runs = runCli(["--project-root", project, "runs", "list", "--json"]).json;
  expect(runs.total).toBe(2);
  const profiled = runs.runs.find((run: any) => run.adapter === "py-spy");
  const hotspots = runCli(["--project-root", project, "analyze", "hotspots", profiled.run_id, "--limit", "3", "--json"]).json;
  expect(hotspots.hotspots[0].function).toBe("burn_cpu");
  const human = runCli(["--project-root", project, "analyze", "hotspots", profiled.run_id, "--limit", "3"]);
  expect(human.stdout).toContain("burn_cpu");
  const callers = runCli(["--project-root", project, "stacks", "callers", profiled.run_id, hotspots.hotspots[0].frame_id, "--json"]).json;
  expect(callers.edges[0].function).toBe("run_job");

  writeFileSync(join(project, "stacks.collapsed"), "main;work 7\nmain;idle 3\n");
  const imported = runCli(["--project-root", project, "import", join(project, "stacks.collapsed"), "--json"]);
  expect(imported.exitCode).toBe(0);
  expect(imported.json.run.run_id).toBe(imported.json.run_id);
  expect(runCli(["--project-root", project, "runs", "list", "--json"]).json.runs[0].run_id).toBe(imported.json.run_id);

  const refused = runCli(["--project-root", project, "capture", "plan", "py-spy", "--workload", "missing", "--json"]);
  expect(refused.exitCode).toBe(5);
  expect(refused.json.error.code).toBe("WORKSPACE_INVALID");
  expect(refused.json.error.recovery.next_tool).toBe("list_declared_workflows");
});
