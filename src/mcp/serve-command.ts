import { resolve } from "node:path";
import { Services } from "../services/services.ts";
import { refuseNul } from "../services/workspace-location.ts";
import { log } from "./log.ts";
import { serveStdio } from "./server.ts";
import type { ToolFamily } from "./tool-families.ts";

/**
 * Binds the project root for the server's lifetime: never walks to an ancestor workspace and
 * never initializes implicitly (only with --init).
 */
export async function runMcpServe(
  options: { projectRoot: string | null; workspace: string | null },
  initialize: boolean,
  families: readonly ToolFamily[] | null = null,
): Promise<void> {
  const projectRoot = resolve(options.projectRoot ?? ".");
  if (options.workspace) refuseNul(options.workspace, "workspace");
  refuseNul(projectRoot, "project root");
  const services = new Services({ projectRoot, ...(options.workspace ? { workspaceRoot: resolve(options.workspace) } : {}) });
  if (initialize) await services.workspaces.initialize();
  else if (options.workspace && services.hasWorkspace()) {
    // An explicit workspace bound to a different project is a startup error, not a silent rebind.
    services.workspace();
  }
  await recoverAtStartup(services);
  await serveStdio(services, families);
}

/**
 * A server that died mid-capture left a run leased to a dead process: close it the way flameox
 * recover does (its workload group terminated, its partial outputs quarantined) before serving, so
 * no client ever sees a run "running" forever. A failure here is reported, never fatal.
 */
async function recoverAtStartup(services: Services): Promise<void> {
  if (!services.hasWorkspace()) return;
  try {
    const outcome = await services.recovery.startupRecovery();
    for (const warning of outcome.warnings) process.stderr.write(`flameox: ${warning}\n`);
  } catch (error) {
    log.error("startup recovery failed", error);
  }
}
