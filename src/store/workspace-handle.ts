import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { workspaceNotFound } from "../domain/errors.ts";
import type { StateDatabase } from "./sqlite.ts";
import { defaultWorkspaceRoot, openWorkspace, type Workspace, type WorkspaceLocation } from "./workspace.ts";

/**
 * The workspace of one fixed project root, opened on first use: a server can start before the
 * project is initialized, and every call made before then is a typed WORKSPACE_NOT_FOUND.
 */
export class WorkspaceHandle {
  readonly projectRoot: string;
  readonly workspaceRoot: string;
  private opened: Workspace | undefined;

  constructor(options: { projectRoot: string; workspaceRoot?: string }) {
    this.projectRoot = resolve(options.projectRoot);
    this.workspaceRoot = resolve(options.workspaceRoot ?? defaultWorkspaceRoot(this.projectRoot));
  }

  get location(): WorkspaceLocation {
    return { projectRoot: this.projectRoot, workspaceRoot: this.workspaceRoot };
  }

  exists(): boolean {
    return this.opened !== undefined || existsSync(join(this.workspaceRoot, "workspace.json"));
  }

  open(): Workspace {
    if (this.opened) return this.opened;
    if (!existsSync(join(this.workspaceRoot, "workspace.json"))) throw workspaceNotFound(this.projectRoot);
    this.opened = openWorkspace(this.location);
    return this.opened;
  }

  /** The control plane of the open workspace; repositories take this as their `StateSource`. */
  state(): StateDatabase {
    return this.open().state;
  }

  /** Takes over a workspace opened elsewhere (initialization), closing a different one held before. */
  adopt(workspace: Workspace): void {
    if (this.opened && this.opened !== workspace) this.opened.close();
    this.opened = workspace;
  }

  close(): void {
    this.opened?.close();
    this.opened = undefined;
  }

  closeKeepingLog(): void {
    this.opened?.closeKeepingLog();
    this.opened = undefined;
  }
}
