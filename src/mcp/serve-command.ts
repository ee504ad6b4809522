import { resolve } from "node:path";
import { Services } from "../services/services.ts";
import { refuseNul } from "../services/workspace-location.ts";
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
  await serveStdio(services, families);
}
