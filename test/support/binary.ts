import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

export const repositoryRoot = resolve(import.meta.dir, "../..");

/** The compiled binary under test: FLAMEOX_BINARY (set by scripts/test.ts) or dist/flameox. */
export function binaryPath(): string {
  const path = process.env.FLAMEOX_BINARY || join(repositoryRoot, "dist", process.platform === "win32" ? "flameox.exe" : "flameox");
  if (!existsSync(path)) throw new Error(`The compiled binary ${path} is missing; run 'npm run build' first.`);
  return path;
}

export { temporaryFolder } from "./temporary-folders.ts";

/** PATH with the pinned Python tools first, so adapters find py-spy & co. */
export function toolPath(): string {
  return [join(repositoryRoot, ".tools", "venv", "bin"), process.env.PATH ?? ""].join(":");
}

export function testEnvironment(extra: Record<string, string> = {}): Record<string, string> {
  const environment: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) environment[key] = value;
  environment.PATH = toolPath();
  environment.FLAMEOX_CACHE_DIR ??= join(tmpdir(), "flameox-test-cache");
  return { ...environment, ...extra };
}

export type CliResult = { exitCode: number; stdout: string; stderr: string; json: any };

export function runCli(argv: string[], options: { cwd?: string; env?: Record<string, string> } = {}): CliResult {
  const result = Bun.spawnSync([binaryPath(), ...argv], {
    cwd: options.cwd ?? process.cwd(),
    env: testEnvironment(options.env),
    stdout: "pipe",
    stderr: "pipe",
    stdin: "ignore",
  });
  const stdout = result.stdout.toString();
  let json: unknown;
  if (argv.includes("--json")) {
    try {
      json = JSON.parse(stdout);
    } catch {
      json = undefined;
    }
  }
  return { exitCode: result.exitCode ?? -1, stdout, stderr: result.stderr.toString(), json };
}

export type McpSession = { client: Client; close(): Promise<void>; stderr(): string; pid(): number | null };

/** The SDK's own client over real stdio against the compiled binary. */
export async function connectMcp(
  projectRoot: string,
  extraArguments: string[] = [],
  env: Record<string, string> = {},
): Promise<McpSession> {
  const transport = new StdioClientTransport({
    command: binaryPath(),
    args: ["mcp", "serve", "--project-root", projectRoot, ...extraArguments],
    env: testEnvironment(env),
    stderr: "pipe",
    cwd: projectRoot,
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name: "flameox-tests", version: "1.0.0" });
  await client.connect(transport);
  return { client, close: () => client.close(), stderr: () => stderr, pid: () => transport.pid };
}

/** Calls a tool and returns its structured envelope. */
export async function callTool(
  session: McpSession,
  name: string,
  args: Record<string, unknown> = {},
): Promise<{ envelope: any; isError: boolean; text: string; raw: any }> {
  const raw = await session.client.callTool({ name, arguments: args });
  const text = (raw.content as { type: string; text?: string }[]).find((item) => item.type === "text")?.text ?? "";
  return { envelope: raw.structuredContent, isError: Boolean(raw.isError), text, raw };
}
