import { appendFileSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { digestOf, sha256Hex } from "../domain/canonical-json.ts";
import { FlameoxError, storageQuotaExceeded, workspaceInvalid, workspaceNotFound } from "../domain/errors.ts";
import { writeFileAtomically } from "./atomic-file.ts";
import { StateDatabase } from "./sqlite.ts";

export const workspaceDirectoryName = ".diagnostics";
export const workspaceFormatVersion = 1;

export const workspaceSubdirectories = ["artifacts", "evidence", "staging", "quarantine", "trash", "tools", "logs"] as const;

export type WorkspaceIdentity = {
  workspace_id: string;
  created_at: string;
  /** The project root relative to the workspace folder, so a moved checkout keeps working. */
  project_root: string;
  format_version: number;
};

export type WorkspaceLocation = { projectRoot: string; workspaceRoot: string };

/** An opened workspace: its identity, paths and the control-plane database. */
export class Workspace {
  readonly identity: WorkspaceIdentity;
  readonly projectRoot: string;
  readonly root: string;
  private stateDatabase: StateDatabase | undefined;
  private readonly attachments = new Map<string, { close(): void }>();

  constructor(location: WorkspaceLocation, identity: WorkspaceIdentity) {
    this.projectRoot = location.projectRoot;
    this.root = location.workspaceRoot;
    this.identity = identity;
  }

  get id(): string {
    return this.identity.workspace_id;
  }

  get state(): StateDatabase {
    this.stateDatabase ??= StateDatabase.open(join(this.root, "state.sqlite"), { create: false });
    return this.stateDatabase;
  }

  /** The per-workspace secret that signs cursors. */
  cursorSecret(): string {
    const row = this.state.database.query<{ value: string }, []>("SELECT value FROM workspace_meta WHERE key = 'cursor_secret'").get();
    if (!row)
      throw workspaceInvalid("The workspace has no cursor secret.", {
        remediation: ["Run flameox validate; initialize a new workspace if it is damaged."],
      });
    return row.value;
  }

  path(...parts: string[]): string {
    return join(this.root, ...parts);
  }

  /**
   * A resource that lives as long as the workspace stays open (the evidence engine), made on first
   * use and closed with the workspace; the store module that owns it names it.
   */
  attachment<T extends { close(): void }>(name: string, create: () => T): T {
    let attached = this.attachments.get(name);
    if (!attached) {
      attached = create();
      this.attachments.set(name, attached);
    }
    return attached as T;
  }

  close(): void {
    for (const attached of this.attachments.values()) attached.close();
    this.attachments.clear();
    this.stateDatabase?.close();
    this.stateDatabase = undefined;
  }

  /** close(), leaving the control plane's log for the next process (StateDatabase.closeKeepingLog): what a CLI command does as it ends. */
  closeKeepingLog(): void {
    for (const attached of this.attachments.values()) attached.close();
    this.attachments.clear();
    this.stateDatabase?.closeKeepingLog();
    this.stateDatabase = undefined;
  }
}

export function defaultWorkspaceRoot(projectRoot: string): string {
  return join(projectRoot, workspaceDirectoryName);
}

function readIdentity(workspaceRoot: string): WorkspaceIdentity {
  const path = join(workspaceRoot, "workspace.json");
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw workspaceInvalid(`The workspace identity file ${workspaceDirectoryName}/workspace.json cannot be read.`, {
      remediation: ["Restore workspace.json from a backup, or move the damaged .diagnostics folder aside and initialize again."],
      cause: error,
    });
  }
  const identity = parsed as Partial<WorkspaceIdentity>;
  if (
    typeof identity.workspace_id !== "string" ||
    typeof identity.created_at !== "string" ||
    typeof identity.project_root !== "string" ||
    identity.format_version !== workspaceFormatVersion
  ) {
    throw workspaceInvalid("workspace.json is missing fields or has an unsupported format version.", {
      details: { format_version: identity.format_version ?? null, supported_format_version: workspaceFormatVersion },
      remediation: ["Use the flameox version that created this workspace, or initialize a new one."],
    });
  }
  return identity as WorkspaceIdentity;
}

export function refuseNul(value: string, name: string): void {
  if (value.includes("\u0000")) {
    throw workspaceInvalid(`The ${name} path contains a NUL byte.`, { remediation: [`Pass a ${name} path without NUL bytes.`] });
  }
}

/** Opens an existing workspace, refusing one that belongs to another project. */
export function openWorkspace(location: WorkspaceLocation): Workspace {
  refuseNul(location.workspaceRoot, "workspace");
  if (!existsSync(join(location.workspaceRoot, "workspace.json"))) throw workspaceNotFound(location.projectRoot);
  const identity = readIdentity(location.workspaceRoot);
  const boundRoot = resolve(location.workspaceRoot, identity.project_root);
  if (boundRoot !== resolve(location.projectRoot)) {
    throw workspaceInvalid("The workspace belongs to a different project root.", {
      details: { bound_project_root: boundRoot },
      remediation: ["Start flameox with the project root the workspace was created for, or use another workspace."],
    });
  }
  return new Workspace(location, identity);
}

/**
 * Additive and idempotent: creates what is missing and never replaces an existing identity,
 * policy or database. Writes only beneath the workspace folder (plus the git exclude entry).
 */
export function initializeWorkspace(location: WorkspaceLocation, defaultPolicyText: string): { workspace: Workspace; created: boolean } {
  refuseNul(location.workspaceRoot, "workspace");
  refuseNul(location.projectRoot, "project root");
  if (!existsSync(location.projectRoot) || !statSync(location.projectRoot).isDirectory()) {
    throw workspaceInvalid("The project root is not an existing folder.", {
      remediation: ["Start flameox with --project-root naming an existing project folder."],
    });
  }
  const existed = existsSync(join(location.workspaceRoot, "workspace.json"));
  if (existed) {
    const workspace = openWorkspace(location);
    ensureLayout(workspace.root, defaultPolicyText);
    void workspace.state;
    return { workspace, created: false };
  }
  try {
    mkdirSync(location.workspaceRoot, { recursive: true, mode: 0o755 });
    ensureLayout(location.workspaceRoot, defaultPolicyText);
    const identity: WorkspaceIdentity = {
      workspace_id: crypto.randomUUID(),
      created_at: new Date().toISOString(),
      project_root: relative(location.workspaceRoot, location.projectRoot) || ".",
      format_version: workspaceFormatVersion,
    };
    const database = StateDatabase.open(join(location.workspaceRoot, "state.sqlite"), { create: true });
    database.write(() => {
      const insert = database.database.query("INSERT OR IGNORE INTO workspace_meta (key, value) VALUES (?, ?)");
      insert.run("workspace_id", identity.workspace_id);
      insert.run("cursor_secret", sha256Hex(crypto.getRandomValues(new Uint8Array(32))));
      database.database
        .query("INSERT INTO corpus_commits (commit_id, reason, created_at) VALUES (?, ?, ?)")
        .run(digestOf({ workspace_id: identity.workspace_id, sequence: 1, reason: "initialize" }), "initialize", identity.created_at);
    });
    database.close();
    // workspace.json last: its presence is what marks the workspace as initialized.
    writeFileAtomically(join(location.workspaceRoot, "workspace.json"), `${JSON.stringify(identity, null, 2)}\n`);
  } catch (error) {
    if (error instanceof FlameoxError) throw error;
    const code = (error as { code?: string }).code;
    if (code === "ENOSPC" || code === "EDQUOT") {
      throw storageQuotaExceeded("There is no space left to initialize the workspace.", {
        remediation: ["Free storage on the project's disk, then initialize again."],
        cause: error,
      });
    }
    if (code === "EACCES" || code === "EROFS" || code === "EPERM") {
      throw workspaceInvalid("The project root is not writable, so the workspace cannot be created.", {
        remediation: ["Make the project folder writable, or start flameox with --workspace naming a writable folder."],
        cause: error,
      });
    }
    throw error;
  }
  excludeFromGit(location);
  return { workspace: openWorkspace(location), created: true };
}

function ensureLayout(workspaceRoot: string, defaultPolicyText: string): void {
  for (const directory of workspaceSubdirectories) mkdirSync(join(workspaceRoot, directory), { recursive: true });
  const policy = join(workspaceRoot, "config.toml");
  if (!existsSync(policy)) writeFileAtomically(policy, defaultPolicyText);
}

/** Keeps evidence out of commits without touching the tracked .gitignore. */
function excludeFromGit(location: WorkspaceLocation): void {
  const gitDirectory = join(location.projectRoot, ".git");
  if (!existsSync(gitDirectory) || !statSync(gitDirectory).isDirectory()) return;
  const relativeWorkspace = relative(location.projectRoot, location.workspaceRoot);
  if (relativeWorkspace.startsWith("..") || isAbsolute(relativeWorkspace)) return;
  const entry = `/${relativeWorkspace.replaceAll("\\", "/")}/`;
  const excludePath = join(gitDirectory, "info", "exclude");
  try {
    mkdirSync(dirname(excludePath), { recursive: true });
    const current = existsSync(excludePath) ? readFileSync(excludePath, "utf8") : "";
    if (current.split(/\r?\n/).some((line) => line.trim() === entry || line.trim() === entry.slice(1))) return;
    if (!existsSync(excludePath)) writeFileSync(excludePath, "");
    appendFileSync(excludePath, `${current === "" || current.endsWith("\n") ? "" : "\n"}${entry}\n`);
  } catch {
    // A read-only .git is not a reason to fail initialization.
  }
}

/** CLI discovery walks up from a start folder to the nearest workspace; MCP never does. */
export function discoverWorkspace(start: string): WorkspaceLocation | null {
  let current = resolve(start);
  for (;;) {
    if (existsSync(join(current, workspaceDirectoryName, "workspace.json"))) {
      return { projectRoot: current, workspaceRoot: join(current, workspaceDirectoryName) };
    }
    const parent = dirname(current);
    if (parent === current) return null;
    current = parent;
  }
}

/** The project root recorded by an explicit workspace folder. */
export function projectRootOfWorkspace(workspaceRoot: string): string | null {
  if (!existsSync(join(workspaceRoot, "workspace.json"))) return null;
  return resolve(workspaceRoot, readIdentity(workspaceRoot).project_root);
}
