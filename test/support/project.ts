import { copyFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { callTool, repositoryRoot, temporaryFolder, type McpSession } from "./binary.ts";

/** A temp project holding the workload fixtures (test/fixtures/workloads). */
export function workloadProject(prefix: string): string {
  const project = temporaryFolder(prefix);
  const fixtures = join(repositoryRoot, "test", "fixtures", "workloads");
  for (const name of readdirSync(fixtures)) copyFileSync(join(fixtures, name), join(project, name));
  return project;
}

export function python(): string {
  return join(repositoryRoot, ".tools", "venv", "bin", "python");
}

export async function declare(session: McpSession, name: string, argv: string[], extra: Record<string, unknown> = {}): Promise<void> {
  const configured = await callTool(session, "configure_workload", { name, operation: "create", argv, ...extra });
  if (!configured.envelope?.ok) throw new Error(`configure_workload failed: ${JSON.stringify(configured.envelope)}`);
}

export async function planAndExecute(
  session: McpSession,
  workload: string,
  adapter: string,
  parameters: Record<string, unknown> = {},
  adapterOptions: Record<string, unknown> = {},
) {
  const plan = await callTool(session, "plan_capture", { workload_name: workload, adapter, parameters, adapter_options: adapterOptions });
  if (!plan.envelope?.ok) throw new Error(`plan_capture failed: ${JSON.stringify(plan.envelope?.error)}`);
  const executed = await callTool(session, "execute_capture_plan", { plan_id: plan.envelope.result.plan_id });
  return { plan: plan.envelope.result, executed };
}
