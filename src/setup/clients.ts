/**
 * The MCP clients setup can connect, where each keeps its user-level configuration on every platform,
 * how we detect it, and the exact entry it should hold. Only user scope is ever written.
 */
import { existsSync } from "node:fs";
import { joinFor, nonEmpty, userConfigDirectory, xdgConfigDirectory, type SetupEnvironment } from "./environment.ts";

export const clientIds = [
  "claude",
  "cursor",
  "windsurf",
  "opencode",
  "codex",
  "gemini",
  "antigravity",
  "vscode",
  "claude-desktop",
] as const;
export type ClientId = (typeof clientIds)[number];

/** json: strict; jsonc: comments and trailing commas; json-comments: comments only (Gemini CLI). */
export type ConfigFormat = "json" | "jsonc" | "json-comments" | "toml";

/** The fixed arguments every launcher carries; the client's launch directory is the project root. */
export const launcherArguments = ["mcp", "serve", "--project-root", "."] as const;

/** The launcher arguments, plus `--tools a,b` when only some tool families are exposed. */
export function launcherArgumentsFor(tools: readonly string[] | null): string[] {
  return tools === null ? [...launcherArguments] : [...launcherArguments, "--tools", tools.join(",")];
}

/** The `--tools` families an entry's launcher arguments select; null for all (or no such argument). */
export function toolsOfArguments(args: unknown): string[] | null {
  if (!Array.isArray(args)) return null;
  const index = args.indexOf("--tools");
  const value = index >= 0 ? args[index + 1] : undefined;
  return typeof value === "string" && value !== "" ? value.split(",") : null;
}

/** The key of our entry inside the client's server section. */
export const serverKey = "flameox";

export type ClientDefinition = {
  id: ClientId;
  displayName: string;
  /** Path of keys to the object holding servers (`mcpServers`, `mcp`, `servers`, `mcp_servers`). */
  section: string[];
  /** The file we read and write; for clients with several accepted names, the first existing one. */
  configPath(environment: SetupEnvironment): string;
  /** Every path this client may be configured at (the journal's allow-list). */
  candidatePaths(environment: SetupEnvironment): string[];
  /** Every basename this client's config may have, whatever the environment: the journal's allow-list. */
  fileNames: string[];
  format(path: string): ConfigFormat;
  /** Informational only: preselects in the wizard and feeds --refresh when nothing is configured. */
  detect(environment: SetupEnvironment): boolean;
  /** The keys of our entry that setup manages; any other key a user adds to the entry is kept. */
  entry(launcher: string, tools: readonly string[] | null): Record<string, unknown>;
  /** The tool families an existing entry selects (null: all). */
  toolsOf(entry: Record<string, unknown>): string[] | null;
  /** How many tools the client takes before it refuses or warns; absent when it has no limit. */
  toolLimit?: number;
  /** The lock the client itself takes while rewriting `path`, if it takes one. */
  lockPath?(path: string): string;
};

const stdioEntry = (launcher: string, tools: readonly string[] | null): Record<string, unknown> => ({
  command: launcher,
  args: launcherArgumentsFor(tools),
});
const stdioTools = (entry: Record<string, unknown>): string[] | null => toolsOfArguments(entry.args);

function claudeDirectory(environment: SetupEnvironment): string | undefined {
  return nonEmpty(environment.env.CLAUDE_CONFIG_DIR);
}

function codexHome(environment: SetupEnvironment): string {
  return nonEmpty(environment.env.CODEX_HOME) ?? joinFor(environment.platform, environment.home, ".codex");
}

function opencodeDirectory(environment: SetupEnvironment): string {
  return joinFor(environment.platform, xdgConfigDirectory(environment), "opencode");
}

/**
 * OpenCode merges its global config from `config.json` (the legacy name), then `opencode.json`, then
 * `opencode.jsonc`, later files winning. We write the highest-precedence one that exists.
 */
const opencodeNames = ["opencode.jsonc", "opencode.json", "config.json"];

function vscodeUserDirectory(environment: SetupEnvironment): string {
  return joinFor(environment.platform, userConfigDirectory(environment), "Code", "User");
}

function claudeDesktopDirectory(environment: SetupEnvironment): string {
  return joinFor(environment.platform, userConfigDirectory(environment), "Claude");
}

const definitions: ClientDefinition[] = [
  {
    id: "claude",
    displayName: "Claude Code",
    section: ["mcpServers"],
    configPath(environment) {
      const directory = claudeDirectory(environment);
      return directory
        ? joinFor(environment.platform, directory, ".claude.json")
        : joinFor(environment.platform, environment.home, ".claude.json");
    },
    candidatePaths(environment) {
      return [this.configPath(environment)];
    },
    fileNames: [".claude.json"],
    format: () => "json",
    detect(environment) {
      const directory = claudeDirectory(environment);
      if (directory) return existsSync(directory);
      return existsSync(joinFor(environment.platform, environment.home, ".claude")) || existsSync(this.configPath(environment));
    },
    entry: stdioEntry,
    toolsOf: stdioTools,
    // Claude Code rewrites ~/.claude.json under this lock (a proper-lockfile folder).
    lockPath: (path) => `${path}.lock`,
  },
  {
    id: "cursor",
    displayName: "Cursor",
    section: ["mcpServers"],
    configPath: (environment) => joinFor(environment.platform, environment.home, ".cursor", "mcp.json"),
    candidatePaths(environment) {
      return [this.configPath(environment)];
    },
    fileNames: ["mcp.json"],
    format: () => "json",
    detect: (environment) => existsSync(joinFor(environment.platform, environment.home, ".cursor")),
    entry: stdioEntry,
    toolsOf: stdioTools,
    toolLimit: 40,
  },
  {
    id: "windsurf",
    displayName: "Windsurf",
    section: ["mcpServers"],
    configPath: (environment) => joinFor(environment.platform, environment.home, ".codeium", "windsurf", "mcp_config.json"),
    candidatePaths(environment) {
      return [this.configPath(environment)];
    },
    fileNames: ["mcp_config.json"],
    format: () => "json",
    detect: (environment) => existsSync(joinFor(environment.platform, environment.home, ".codeium", "windsurf")),
    entry: stdioEntry,
    toolsOf: stdioTools,
    toolLimit: 50,
  },
  {
    id: "opencode",
    displayName: "OpenCode",
    section: ["mcp"],
    configPath(environment) {
      const candidates = this.candidatePaths(environment);
      return candidates.find((path) => existsSync(path)) ?? joinFor(environment.platform, opencodeDirectory(environment), "opencode.json");
    },
    candidatePaths: (environment) => opencodeNames.map((name) => joinFor(environment.platform, opencodeDirectory(environment), name)),
    fileNames: opencodeNames,
    // OpenCode reads every one of its config names through a JSONC parser.
    format: () => "jsonc",
    detect: (environment) => existsSync(opencodeDirectory(environment)),
    entry: (launcher, tools) => ({ type: "local", command: [launcher, ...launcherArgumentsFor(tools)], enabled: true }),
    toolsOf: (entry) => toolsOfArguments(entry.command),
  },
  {
    id: "codex",
    displayName: "Codex",
    section: ["mcp_servers"],
    configPath: (environment) => joinFor(environment.platform, codexHome(environment), "config.toml"),
    candidatePaths(environment) {
      return [this.configPath(environment)];
    },
    fileNames: ["config.toml"],
    format: () => "toml",
    detect: (environment) => existsSync(codexHome(environment)),
    entry: stdioEntry,
    toolsOf: stdioTools,
  },
  {
    id: "gemini",
    displayName: "Gemini CLI",
    section: ["mcpServers"],
    configPath: (environment) => joinFor(environment.platform, environment.home, ".gemini", "settings.json"),
    candidatePaths(environment) {
      return [this.configPath(environment)];
    },
    fileNames: ["settings.json"],
    // Gemini CLI strips comments from settings.json, then JSON.parse()s it: trailing commas break it.
    format: () => "json-comments",
    detect: (environment) =>
      existsSync(joinFor(environment.platform, environment.home, ".gemini", "settings.json")) ||
      (existsSync(joinFor(environment.platform, environment.home, ".gemini")) &&
        !existsSync(joinFor(environment.platform, environment.home, ".gemini", "antigravity"))),
    entry: stdioEntry,
    toolsOf: stdioTools,
  },
  {
    id: "antigravity",
    displayName: "Antigravity",
    section: ["mcpServers"],
    configPath: (environment) => joinFor(environment.platform, environment.home, ".gemini", "config", "mcp_config.json"),
    candidatePaths(environment) {
      return [this.configPath(environment)];
    },
    fileNames: ["mcp_config.json"],
    format: () => "json",
    detect: (environment) =>
      existsSync(joinFor(environment.platform, environment.home, ".gemini", "antigravity")) ||
      existsSync(joinFor(environment.platform, environment.home, ".gemini", "config")) ||
      existsSync(joinFor(environment.platform, environment.home, ".agent")),
    entry: stdioEntry,
    toolsOf: stdioTools,
  },
  {
    id: "vscode",
    displayName: "VS Code",
    section: ["servers"],
    configPath: (environment) => joinFor(environment.platform, vscodeUserDirectory(environment), "mcp.json"),
    candidatePaths(environment) {
      return [this.configPath(environment)];
    },
    fileNames: ["mcp.json"],
    format: () => "jsonc",
    detect: (environment) => existsSync(vscodeUserDirectory(environment)),
    entry: (launcher, tools) => ({ type: "stdio", command: launcher, args: launcherArgumentsFor(tools) }),
    toolsOf: stdioTools,
  },
  {
    id: "claude-desktop",
    displayName: "Claude Desktop",
    section: ["mcpServers"],
    configPath: (environment) => joinFor(environment.platform, claudeDesktopDirectory(environment), "claude_desktop_config.json"),
    candidatePaths(environment) {
      return [this.configPath(environment)];
    },
    fileNames: ["claude_desktop_config.json"],
    format: () => "json",
    detect: (environment) => existsSync(claudeDesktopDirectory(environment)),
    entry: stdioEntry,
    toolsOf: stdioTools,
  },
];

export const clients: ReadonlyMap<ClientId, ClientDefinition> = new Map(definitions.map((definition) => [definition.id, definition]));

export function clientDefinition(id: ClientId): ClientDefinition {
  return clients.get(id)!;
}

export function isClientId(value: string): value is ClientId {
  return (clientIds as readonly string[]).includes(value);
}

/** Canonical order, duplicates removed. */
export function canonicalClients(ids: Iterable<ClientId>): ClientId[] {
  const wanted = new Set(ids);
  return clientIds.filter((id) => wanted.has(id));
}

export function detectedClients(environment: SetupEnvironment): ClientId[] {
  return clientIds.filter((id) => clientDefinition(id).detect(environment));
}

/**
 * Every basename a client config may have. The journal accepts a path by its name, not by the current
 * environment, so a crash under one CODEX_HOME never blocks a run under another.
 */
export const configFileNames: ReadonlySet<string> = new Set(definitions.flatMap((definition) => definition.fileNames));
