/**
 * `npm run demo`: flameox's main job on the bundled sample project, end to end, the way an agent
 * drives it — over MCP stdio against the compiled binary: initialize the workspace, declare the
 * workload, plan and execute a py-spy capture, rank hotspots and drill into the top one — then
 * write the HTML report. The sample is copied to a temporary folder first.
 */
import { cpSync, existsSync, mkdtempSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const root = resolve(import.meta.dir, "..");
const binary = join(root, "dist", "flameox");
const venvBin = join(root, ".tools", "venv", "bin");
const python = join(venvBin, "python");

function say(line = ""): void {
  process.stdout.write(`${line}\n`);
}

async function main(): Promise<void> {
  if (!existsSync(binary)) throw new Error("dist/flameox is missing; run `npm run build`.");
  const project = realpathSync(mkdtempSync(join(tmpdir(), "flameox-demo-")));
  cpSync(join(root, "examples", "sample-project"), project, { recursive: true });
  say(`flameox demo — sample project copied to ${project}`);

  const environment: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) environment[key] = value;
  environment.PATH = `${venvBin}:${environment.PATH ?? ""}`;
  const transport = new StdioClientTransport({
    command: binary,
    args: ["mcp", "serve", "--project-root", project],
    env: environment,
    stderr: "inherit",
    cwd: project,
  });
  const client = new Client({ name: "flameox-demo", version: "1.0.0" });
  await client.connect(transport);
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const result = await client.callTool({ name, arguments: args });
    const envelope = result.structuredContent as { ok: boolean; result: any; error: any };
    if (!envelope.ok) throw new Error(`${name} failed: ${envelope.error.code}: ${envelope.error.message}`);
    return envelope.result;
  };

  try {
    const status = await client.callTool({ name: "workspace_status", arguments: {} });
    say(`\n1. workspace_status → ${(status.structuredContent as any).error?.code ?? "ok"}`);
    const workspace = await call("initialize_workspace");
    say(`2. initialize_workspace → workspace ${workspace.workspace_id}`);
    const configuration = await call("workload_configuration_status");
    say(`3. workload_configuration_status → ${configuration.status}; next ${configuration.next_tool}`);
    const configured = await call("configure_workload", {
      name: "analyse-logs",
      operation: "create",
      argv: [python, "app.py", "{lines}"],
      parameters: { lines: [200000, 50000] },
      timeout_seconds: 120,
    });
    say(`4. configure_workload → ${configured.action} (${configured.workload_definition_id.slice(0, 19)}…)`);
    const listed = await call("list_declared_workflows");
    say(`5. list_declared_workflows → ${listed.workflows.map((workflow: any) => workflow.name).join(", ")}`);
    const detail = await call("get_declared_workflow", { kind: "workload", name: "analyse-logs" });
    const ready = detail.adapter_options
      .filter((option: any) => option.planning_disposition !== "unavailable")
      .map((option: any) => option.adapter);
    say(`6. get_declared_workflow → adapters usable here: ${ready.join(", ")}`);
    const capabilities = await call("list_capabilities", { mode: "active_refresh", adapter: "py-spy" });
    const pySpy = capabilities.capabilities[0];
    say(`7. list_capabilities(py-spy) → ${pySpy.status} ${pySpy.version ?? ""} (ptrace ${pySpy.permission_status})`);
    const plan = await call("plan_capture", {
      workload_name: "analyse-logs",
      adapter: "py-spy",
      parameters: { lines: 200000 },
      adapter_options: { rate: 250 },
    });
    say(`8. plan_capture → ${plan.collector_argv.slice(0, 6).join(" ")} … (expires ${plan.expires_at})`);
    const receipt = await call("execute_capture_plan", { plan_id: plan.plan_id });
    say(`9. execute_capture_plan → run ${receipt.run_id} ${receipt.execution_status}, evidence ${JSON.stringify(receipt.evidence_tables)}`);
    const hotspots = await call("analyze_hotspots", { run_or_artifact: receipt.run_id, limit: 5 });
    say(`10. analyze_hotspots (${hotspots.unit}, ${hotspots.total} functions):`);
    for (const hotspot of hotspots.hotspots) {
      say(
        `    ${String(hotspot.rank).padStart(2)}. self ${(hotspot.self_share * 100).toFixed(1).padStart(5)}%  total ${(hotspot.total_share * 100).toFixed(1).padStart(5)}%  ${hotspot.function} (${hotspot.file}:${hotspot.line})`,
      );
    }
    const hottestProjectFrame = hotspots.hotspots.find((hotspot: any) => hotspot.file === "app.py") ?? hotspots.hotspots[0];
    const callers = await call("get_frame_callers", { run_or_artifact: receipt.run_id, frame_id: hottestProjectFrame.frame_id, limit: 3 });
    say(
      `11. get_frame_callers(${hottestProjectFrame.function}) → ${callers.edges.map((edge: any) => `${edge.function} ${(edge.share_of_frame * 100).toFixed(0)}%`).join(", ")}`,
    );
    const run = await call("get_run", { run_id: receipt.run_id });
    const wall = run.measurements.find((measurement: any) => measurement.name === "runtime.wall_time_ns");
    const rss = run.measurements.find((measurement: any) => measurement.name === "runtime.peak_rss_bytes");
    say(`12. get_run → wall ${(wall.value / 1e9).toFixed(2)} s, peak RSS ${rss ? (rss.value / 2 ** 20).toFixed(0) : "?"} MiB`);
    const { writeDemoReport } = await import("./demo-report.ts");
    const report = await writeDemoReport(binary, project, receipt.run_id);
    say(`\nReport: ${report}`);
  } finally {
    await client.close();
  }
}

await main();
