/**
 * The MCP clients setup can connect, where each keeps its user-level configuration on every platform,
 * how we detect it, and the exact entry it should hold. Only user scope is ever written.
 */
import { existsSync } from "node:fs";
import { joinFor, nonEmpty, userConfigDirectory, xdgConfigDirectory, type SetupEnvironment } from "./environment.ts";

export const clientIds = ["claude", "cursor", "opencode", "codex", "gemini", "antigravity", "vscode", "claude-desktop"] as const;
export type ClientId = (typeof clientIds)[number];

export type ConfigFormat = "json" | "jsonc" | "toml";

/** The fixed arguments every launcher carries; the client's launch directory is the project root. */
export const launcherArguments = ["mcp", "serve", "--project-root", "."] as const;

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
  format(path: string): ConfigFormat;
  /** Informational only: preselects in the wizard and feeds --refresh when nothing is configured. */
  detect(environment: SetupEnvironment): boolean;
  entry(launcher: string): Record<string, unknown>;
};

const stdioEntry = (launcher: string): Record<string, unknown> => ({ command: launcher, args: [...launcherArguments] });

function claudeDirectory(environment: SetupEnvironment): string | undefined {
  return nonEmpty(environment.env.CLAUDE_CONFIG_DIR);
}

function codexHome(environment: SetupEnvironment): string {
  return nonEmpty(environment.env.CODEX_HOME) ?? joinFor(environment.platform, environment.home, ".codex");
}

function opencodeDirectory(environment: SetupEnvironment): string {
  return joinFor(environment.platform, xdgConfigDirectory(environment), "opencode");
}

const opencodeNames = ["opencode.jsonc", "opencode.json", ".opencode.jsonc", ".opencode.json"];

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
    format: () => "json",
    detect(environment) {
      const directory = claudeDirectory(environment);
      if (directory) return existsSync(directory);
      return existsSync(joinFor(environment.platform, environment.home, ".claude")) || existsSync(this.configPath(environment));
    },
    entry: stdioEntry,
  },
  {
    id: "cursor",
    displayName: "Cursor",
    section: ["mcpServers"],
    configPath: (environment) => joinFor(environment.platform, environment.home, ".cursor", "mcp.json"),
    candidatePaths(environment) {
      return [this.configPath(environment)];
    },
    format: () => "json",
    detect: (environment) => existsSync(joinFor(environment.platform, environment.home, ".cursor")),
    entry: stdioEntry,
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
    // OpenCode reads every one of its config names through a JSONC parser.
    format: () => "jsonc",
    detect: (environment) => existsSync(opencodeDirectory(environment)),
    entry: (launcher) => ({ type: "local", command: [launcher, ...launcherArguments], enabled: true }),
  },
  {
    id: "codex",
    displayName: "Codex",
    section: ["mcp_servers"],
    configPath: (environment) => joinFor(environment.platform, codexHome(environment), "config.toml"),
    candidatePaths(environment) {
      return [this.configPath(environment)];
    },
    format: () => "toml",
    detect: (environment) => existsSync(codexHome(environment)),
    entry: stdioEntry,
  },
  {
    id: "gemini",
    displayName: "Gemini CLI",
    section: ["mcpServers"],
    configPath: (environment) => joinFor(environment.platform, environment.home, ".gemini", "settings.json"),
    candidatePaths(environment) {
      return [this.configPath(environment)];
    },
    // Gemini CLI strips comments from settings.json before parsing.
    format: () => "jsonc",
    detect: (environment) =>
      existsSync(joinFor(environment.platform, environment.home, ".gemini", "settings.json")) ||
      (existsSync(joinFor(environment.platform, environment.home, ".gemini")) &&
        !existsSync(joinFor(environment.platform, environment.home, ".gemini", "antigravity"))),
    entry: stdioEntry,
  },
  {
    id: "antigravity",
    displayName: "Antigravity",
    section: ["mcpServers"],
    configPath: (environment) => joinFor(environment.platform, environment.home, ".gemini", "config", "mcp_config.json"),
    candidatePaths(environment) {
      return [this.configPath(environment)];
    },
    format: () => "json",
    detect: (environment) =>
      existsSync(joinFor(environment.platform, environment.home, ".gemini", "antigravity")) ||
      existsSync(joinFor(environment.platform, environment.home, ".gemini", "config")) ||
      existsSync(joinFor(environment.platform, environment.home, ".agent")),
    entry: stdioEntry,
  },
  {
    id: "vscode",
    displayName: "VS Code",
    section: ["servers"],
    configPath: (environment) => joinFor(environment.platform, vscodeUserDirectory(environment), "mcp.json"),
    candidatePaths(environment) {
      return [this.configPath(environment)];
    },
    format: () => "jsonc",
    detect: (environment) => existsSync(vscodeUserDirectory(environment)),
    entry: (launcher) => ({ type: "stdio", command: launcher, args: [...launcherArguments] }),
  },
  {
    id: "claude-desktop",
    displayName: "Claude Desktop",
    section: ["mcpServers"],
    configPath: (environment) => joinFor(environment.platform, claudeDesktopDirectory(environment), "claude_desktop_config.json"),
    candidatePaths(environment) {
      return [this.configPath(environment)];
    },
    format: () => "json",
    detect: (environment) => existsSync(claudeDesktopDirectory(environment)),
    entry: stdioEntry,
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

/** Every config path any client may use: the journal refuses to restore anything else. */
export function allowedConfigPaths(environment: SetupEnvironment): string[] {
  return definitions.flatMap((definition) => definition.candidatePaths(environment));
}
