import { resolve } from "node:path";
import { Services } from "../services/services.ts";
import { discoverWorkspace, projectRootOfWorkspace, refuseNul } from "../services/workspace-location.ts";
import type { GlobalOptions } from "./global-options.ts";

/** The CLI's one Services for this invocation, set by main before any command runs. */
let current: { options: GlobalOptions; services: Services | undefined } | undefined;

export function setCliOptions(options: GlobalOptions): void {
  current = { options, services: undefined };
}

export function cliOptions(): GlobalOptions {
  if (!current) throw new Error("CLI options are read before main set them.");
  return current.options;
}

/**
 * --workspace names .diagnostics directly; otherwise the CLI walks up from --project-root (or
 * the current folder) to the nearest workspace, as people expect from git-like tools.
 */
export function cliServices(): Services {
  if (!current) throw new Error("CLI services are requested before main set the options.");
  if (current.services) return current.services;
  const { workspace, projectRoot } = current.options;
  if (workspace) refuseNul(workspace, "workspace");
  if (projectRoot) refuseNul(projectRoot, "project root");
  let services: Services;
  if (workspace) {
    const workspaceRoot = resolve(workspace);
    const boundRoot = projectRootOfWorkspace(workspaceRoot);
    services = new Services({ projectRoot: projectRoot ? resolve(projectRoot) : (boundRoot ?? process.cwd()), workspaceRoot });
  } else {
    const start = resolve(projectRoot ?? process.cwd());
    const found = discoverWorkspace(start);
    services = found ? new Services(found) : new Services({ projectRoot: start });
  }
  current.services = services;
  return services;
}

/** Once a command has finished: its workspace closes without SQLite's closing checkpoint (Services.closeBeforeExit). */
export function closeCliServicesBeforeExit(): void {
  current?.services?.closeBeforeExit();
}

/** `init` never walks up: it creates the workspace exactly where it is told. */
export function cliServicesForInit(projectRootArgument: string | undefined): Services {
  if (!current) throw new Error("CLI services are requested before main set the options.");
  const projectRoot = resolve(projectRootArgument ?? current.options.projectRoot ?? process.cwd());
  refuseNul(projectRoot, "project root");
  const services = new Services({
    projectRoot,
    ...(current.options.workspace ? { workspaceRoot: resolve(current.options.workspace) } : {}),
  });
  current.services = services;
  return services;
}
