/**
 * `flameox setup`: connect local MCP clients to a verified, version-addressed flameox runtime.
 *
 * Non-interactive use needs an explicit target (a client flag, --all, --refresh, --rollback or
 * --verify) and --yes (or --dry-run to preview). With no target on a terminal the wizard runs.
 * With --json exactly one JSON document is printed: the plan (--dry-run), the report, the verify
 * report, or the error envelope. Exit codes: 0 ok, 1 verify failed, 2 invalid arguments,
 * 5 integrity failure, 7 lock held or files changed since the preview, 8 cancelled, 9 refused
 * (malformed client config).
 */
import { defineCommand } from "citty";
import { type FlameoxError, executionRefused, invalidRequest, processCancelled } from "../domain/errors.ts";
import { cliOptions } from "./context.ts";
import { NegativeResult } from "./workspace.ts";
import { canonicalClients, clientDefinition, clientIds, detectedClients, type ClientId } from "../setup/clients.ts";
import { currentSetupEnvironment } from "../setup/environment.ts";
import { renderPlan, renderReport, renderVerify } from "../setup/render.ts";
import { isCanonicalVersion, resolveRuntimeSource } from "../setup/runtime-store.ts";
import { SetupService, type ClientStatus, type SetupRequest } from "../setup/service.ts";
import { parseToolFamilies, toolFamilies, toolFamilyNames, type ToolFamily } from "../mcp/tool-families.ts";

/** --refresh never skips a connected client silently: one whose config became unreadable stops it. */
function unreadableConnected(clients: ClientStatus[]): FlameoxError {
  const names = clients.map((client) => client.display_name).join(", ");
  return executionRefused(
    `Connected ${clients.length === 1 ? "client's config" : "clients' configs"} can no longer be read: ${clients.map((client) => client.problem).join("; ")}`,
    {
      remediation: [
        `Repair ${clients.map((client) => client.path).join(", ")} by hand, then rerun flameox setup --refresh.`,
        `Or update only the others by naming them (e.g. flameox setup --claude --yes); ${names} stays as it is.`,
      ],
      details: { clients: clients.map((client) => ({ client: client.client, path: client.path })) },
    },
  );
}

const clientFlags: Record<ClientId, string> = {
  claude: "claude",
  cursor: "cursor",
  windsurf: "windsurf",
  opencode: "opencode",
  codex: "codex",
  gemini: "gemini",
  antigravity: "antigravity",
  vscode: "vscode",
  "claude-desktop": "claude-desktop",
};

const booleanFlags = new Set([
  ...Object.values(clientFlags).map((flag) => `--${flag}`),
  "--all",
  "--refresh",
  "--remove",
  "--verify",
  "--yes",
  "-y",
  "--dry-run",
  "--json",
  "--rollback",
]);
const valueFlags = new Set(["--checksums", "--expect-sha256", "--tools"]);

export type SetupArguments = {
  clients: ClientId[];
  all: boolean;
  refresh: boolean;
  remove: boolean;
  rollback: { version: string | undefined } | null;
  verify: boolean;
  yes: boolean;
  dryRun: boolean;
  json: boolean;
  checksums: string | undefined;
  expectSha256: string | undefined;
  /** --tools FAMILY,…: the families the selected clients' launchers expose (undefined: keep). */
  tools: ToolFamily[] | undefined;
};

function usage(message: string): FlameoxError {
  return invalidRequest(message, {
    remediation: [
      "Run `flameox setup --help`; non-interactive use needs a target (--claude, --all, --refresh, --rollback, --verify) and --yes.",
    ],
    details: { fields: [{ field: "setup", message, type: "usage" }] },
  });
}

/** Our own pass over the raw words: citty would let `--rollback --yes` swallow `--yes` as the version. */
export function parseSetupArguments(rawArgs: string[]): SetupArguments {
  const parsed: SetupArguments = {
    clients: [],
    all: false,
    refresh: false,
    remove: false,
    rollback: null,
    verify: false,
    yes: false,
    dryRun: false,
    json: false,
    checksums: undefined,
    expectSha256: undefined,
    tools: undefined,
  };
  for (let index = 0; index < rawArgs.length; index += 1) {
    const word = rawArgs[index]!;
    const [flag, inline] =
      word.startsWith("--") && word.includes("=")
        ? [word.slice(0, word.indexOf("=")), word.slice(word.indexOf("=") + 1)]
        : [word, undefined];
    if (valueFlags.has(flag)) {
      const value = inline ?? rawArgs[index + 1];
      if (inline === undefined) index += 1;
      if (value === undefined || value === "" || (inline === undefined && value.startsWith("-"))) throw usage(`${flag} needs a value.`);
      if (flag === "--checksums") parsed.checksums = value;
      else if (flag === "--tools") parsed.tools = value === "all" ? [...toolFamilyNames] : (parseToolFamilies(value) ?? undefined);
      else parsed.expectSha256 = value;
      continue;
    }
    if (flag === "--rollback") {
      let version = inline;
      if (version === undefined && rawArgs[index + 1] !== undefined && !rawArgs[index + 1]!.startsWith("-")) {
        version = rawArgs[index + 1];
        index += 1;
      }
      if (version !== undefined && !isCanonicalVersion(version))
        throw usage(`--rollback needs a canonical version such as 0.2.0, not ${JSON.stringify(version)}.`);
      parsed.rollback = { version };
      continue;
    }
    if (!booleanFlags.has(flag) || inline !== undefined) throw usage(`Unknown setup argument ${JSON.stringify(word)}.`);
    const client = (Object.entries(clientFlags) as Array<[ClientId, string]>).find(([, name]) => `--${name}` === flag)?.[0];
    if (client) parsed.clients.push(client);
    else if (flag === "--all") parsed.all = true;
    else if (flag === "--refresh") parsed.refresh = true;
    else if (flag === "--remove") parsed.remove = true;
    else if (flag === "--verify") parsed.verify = true;
    else if (flag === "--yes" || flag === "-y") parsed.yes = true;
    else if (flag === "--dry-run") parsed.dryRun = true;
    else if (flag === "--json") parsed.json = true;
  }
  parsed.clients = canonicalClients(parsed.clients);
  return parsed;
}

function validate(parsed: SetupArguments): void {
  const operations = [parsed.remove, parsed.rollback !== null, parsed.verify].filter(Boolean).length;
  if (operations > 1) throw usage("Choose one of --remove, --rollback and --verify.");
  const selections = [parsed.clients.length > 0, parsed.all, parsed.refresh].filter(Boolean).length;
  if (selections > 1) throw usage("Choose clients with client flags, --all or --refresh, not several of them.");
  if (parsed.verify && selections > 0) throw usage("--verify checks every configured client; it takes no client selection.");
  if (parsed.tools !== undefined && (parsed.remove || parsed.verify))
    throw usage("--tools chooses what connected clients expose; it does not go with --remove or --verify.");
  const target = selections > 0 || parsed.rollback !== null || parsed.verify;
  if (parsed.yes && !target) throw usage("--yes requires explicit clients (--claude, …), --all, --refresh, --rollback or --verify.");
}

export function isInteractive(parsed: SetupArguments): boolean {
  return (
    parsed.clients.length === 0 &&
    !parsed.all &&
    !parsed.refresh &&
    parsed.rollback === null &&
    !parsed.verify &&
    !parsed.dryRun &&
    !parsed.json &&
    !parsed.yes
  );
}

function hasTerminal(): boolean {
  return Boolean(process.stdin.isTTY && process.stdout.isTTY);
}

function print(json: boolean, document: unknown, human: () => string): void {
  if (json) process.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
  else process.stdout.write(`${human()}\n`);
}

/** Thrown after the verify report is printed: exit 1 with no second document. */
export class SetupVerifyFailed extends Error {
  constructor() {
    super("flameox setup --verify found problems.");
    this.name = "SetupVerifyFailed";
  }
}

/**
 * Runs setup for already-parsed arguments. Prints its one result document; throws FlameoxError for
 * failures (the caller renders it, as JSON when asked) and SetupVerifyFailed when verify fails.
 */
export async function executeSetup(parsed: SetupArguments, env: Record<string, string | undefined> = process.env): Promise<void> {
  validate(parsed);
  const environment = currentSetupEnvironment(env);
  const json = parsed.json;
  if (env.FLAMEOX_NPM_BOOTSTRAP === "1" && !json) process.stderr.write("flameox runtime ready. Starting flameox setup...\n");
  const service = new SetupService({
    environment,
    source: await resolveRuntimeSource(environment),
    integrity: { checksumsFile: parsed.checksums, expectedSha256: parsed.expectSha256 },
  });

  if (parsed.verify) {
    const report = await service.verify();
    print(json, report, () => renderVerify(report));
    if (!report.ok) throw new SetupVerifyFailed();
    return;
  }

  if (isInteractive(parsed)) {
    if (!hasTerminal()) throw usage("Interactive setup requires a terminal; pass a target (e.g. --claude or --all) and --yes.");
    const { runSetupWizard } = await import("../setup/wizard.ts");
    const families = toolFamilyNames.map((name) => ({ name, tools: toolFamilies[name].length }));
    const code = await runSetupWizard(service, { remove: parsed.remove, families });
    if (code === 1) throw new SetupVerifyFailed();
    return;
  }

  // --dry-run never writes, not even to roll back a crashed run (its plan says one is pending).
  if (!parsed.dryRun) {
    const recovery = await service.recover();
    if (recovery.restored.length > 0) process.stderr.write(`Rolled back an interrupted setup: ${recovery.restored.join(", ")}\n`);
    for (const warning of recovery.warnings) process.stderr.write(`Warning: ${warning}\n`);
  }

  let clients: ClientId[] = parsed.clients;
  if (parsed.all) clients = [...clientIds];
  if (parsed.refresh) {
    // Refresh (and `npx flameox upgrade`) updates what is connected; detection only when nothing is.
    const state = service.inspect();
    const unreadable = service.unreadableConnectedClients(state);
    if (unreadable.length > 0) throw unreadableConnected(unreadable);
    const configured = service.configuredClients(state);
    clients = configured.length > 0 ? configured : detectedClients(environment);
    if (clients.length === 0) throw usage("--refresh found no connected or detected MCP clients; name clients explicitly.");
  }
  const tools = parsed.tools === undefined ? {} : { tools: parsed.tools.length === toolFamilyNames.length ? null : parsed.tools };
  const request: SetupRequest = parsed.rollback
    ? { operation: "rollback", clients, version: parsed.rollback.version }
    : parsed.remove
      ? { operation: "remove", clients }
      : { operation: "configure", clients, ...tools };
  if (request.operation !== "rollback" && clients.length === 0)
    throw usage("Select at least one MCP client (a client flag, --all or --refresh).");

  const prepared = await service.plan(request);
  if (parsed.dryRun) {
    print(json, prepared.plan, () => renderPlan(prepared.plan));
    return;
  }
  if (!parsed.yes) {
    if (json) throw usage("JSON setup requires --yes or --dry-run.");
    if (!hasTerminal()) throw usage("Add --yes to apply without a prompt, or --dry-run to preview.");
    const prompts = await import("@clack/prompts");
    prompts.note(renderPlan(prepared.plan), "Preview");
    const confirmed = await prompts.confirm({ message: "Apply these changes?", initialValue: false });
    if (prompts.isCancel(confirmed) || confirmed !== true) {
      throw processCancelled("Setup cancelled.", { remediation: ["Nothing was changed."] });
    }
  }
  const report = await service.apply(prepared);
  print(json, report, () => renderReport(report, (id) => clientDefinition(id as ClientId).displayName));
}

function globalJson(): boolean {
  try {
    // Registered under the main CLI, `--json` anywhere is taken as a global option before we see it.
    return cliOptions().json;
  } catch {
    return false;
  }
}

export const setupCommand = defineCommand({
  meta: {
    name: "setup",
    description:
      "Connect local MCP clients (Claude Code, Cursor, Windsurf, OpenCode, Codex, Gemini CLI, Antigravity, VS Code, Claude Desktop) to a verified flameox runtime; also update, roll back, disconnect and verify. Without a target on a terminal it runs a wizard.",
  },
  args: {
    claude: { type: "boolean", description: "Claude Code (~/.claude.json, honours CLAUDE_CONFIG_DIR)" },
    cursor: { type: "boolean", description: "Cursor (~/.cursor/mcp.json; takes at most 40 tools, see --tools)" },
    windsurf: { type: "boolean", description: "Windsurf (~/.codeium/windsurf/mcp_config.json; see --tools)" },
    opencode: { type: "boolean", description: "OpenCode ($XDG_CONFIG_HOME/opencode/opencode.json[c], or legacy config.json)" },
    codex: { type: "boolean", description: "Codex ($CODEX_HOME/config.toml)" },
    gemini: { type: "boolean", description: "Gemini CLI (~/.gemini/settings.json)" },
    antigravity: { type: "boolean", description: "Antigravity (~/.gemini/config/mcp_config.json)" },
    vscode: { type: "boolean", description: "VS Code user mcp.json" },
    "claude-desktop": { type: "boolean", description: "Claude Desktop (claude_desktop_config.json)" },
    all: { type: "boolean", description: "Every supported client" },
    refresh: { type: "boolean", description: "The connected clients (the detected ones when none is connected)" },
    remove: { type: "boolean", description: "Disconnect the selected clients" },
    rollback: {
      type: "string",
      description: "Activate an installed VERSION (default: the newest other one) in every connected client",
      valueHint: "VERSION",
    },
    verify: { type: "boolean", description: "Read-only: runtime version, MCP handshake, and every client's exact launcher" },
    yes: { type: "boolean", alias: "y", description: "Apply without asking" },
    "dry-run": { type: "boolean", description: "Print the plan; change nothing" },
    json: { type: "boolean", description: "Print exactly one JSON document" },
    checksums: { type: "string", description: "SHA256SUMS file to check this binary against before installing it", valueHint: "FILE" },
    "expect-sha256": { type: "string", description: "Expected sha256 of this binary", valueHint: "HEX" },
    tools: {
      type: "string",
      description: `Expose only these tool families in the selected clients (${toolFamilyNames.join(", ")}, or all); for clients that limit tools`,
      valueHint: "FAMILY,…",
    },
  },
  async run({ rawArgs }) {
    const parsed = parseSetupArguments(rawArgs);
    parsed.json ||= globalJson();
    try {
      await executeSetup(parsed);
    } catch (error) {
      if (error instanceof SetupVerifyFailed) {
        // The host CLI maps its NegativeResult to exit 1 without a second document.
        throw new NegativeResult();
      }
      throw error;
    }
  },
});
