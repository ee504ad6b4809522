/**
 * Behavioural verification of a runtime: `<runtime> --version` must print exactly the version, and a
 * real MCP session over stdio (initialize, then tools/list) must list at least one tool. The server runs
 * in a fresh temporary folder so the check never touches the user's current project.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type FlameoxError, processFailed } from "../domain/errors.ts";

export type RuntimeCheck = { version: string; tools: number };

function runtimeEnvironment(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of ["PATH", "HOME", "USERPROFILE", "SYSTEMROOT", "TMPDIR", "TEMP", "TMP", "LANG"]) {
    const value = process.env[key];
    if (value !== undefined) env[key] = value;
  }
  return env;
}

function failed(executable: string, reason: string, cause?: unknown): FlameoxError {
  return processFailed(`The flameox runtime at ${executable} failed verification: ${reason}`, {
    remediation: ["The previously active runtime (if any) remains active.", "Rerun flameox setup from a working flameox binary."],
    details: { executable, reason },
    cause,
  });
}

export async function checkRuntimeVersion(executable: string, version: string, timeoutMs = 30_000): Promise<void> {
  let child;
  try {
    child = Bun.spawn([executable, "--version"], {
      stdout: "pipe",
      stderr: "pipe",
      stdin: "ignore",
      env: runtimeEnvironment(),
      timeout: timeoutMs,
    });
  } catch (cause) {
    throw failed(executable, `cannot start it (${(cause as Error).message})`, cause);
  }
  const [stdout, stderr, exitCode] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  if (exitCode !== 0) throw failed(executable, `--version exited ${exitCode}: ${stderr.trim().slice(0, 500)}`);
  const printed = stdout.trim().replace(/^flameox\s+/, "");
  if (printed !== version)
    throw failed(executable, `--version printed ${JSON.stringify(stdout.trim().slice(0, 200))}, expected ${version}`);
}

/** Lists the tools of `<executable> mcp serve …` (with `extraArguments`, e.g. a client's `--tools`). */
export async function checkMcpHandshake(executable: string, extraArguments: readonly string[] = [], timeoutMs = 60_000): Promise<number> {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
  const projectRoot = mkdtempSync(join(tmpdir(), "flameox-verify-"));
  const transport = new StdioClientTransport({
    command: executable,
    args: ["mcp", "serve", "--project-root", projectRoot, ...extraArguments],
    cwd: projectRoot,
    env: runtimeEnvironment(),
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    if (stderr.length < 4000) stderr += chunk.toString();
  });
  const client = new Client({ name: "flameox-setup-verify", version: "1" });
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const session = (async () => {
      await client.connect(transport);
      const listed = await client.listTools();
      return listed.tools.length;
    })();
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    const tools = await Promise.race([session, deadline]);
    if (tools < 1) throw new Error("tools/list returned no tools");
    return tools;
  } catch (cause) {
    throw failed(
      executable,
      `MCP handshake failed (${(cause as Error).message})${stderr ? `; stderr: ${stderr.trim().slice(0, 500)}` : ""}`,
      cause,
    );
  } finally {
    clearTimeout(timer);
    await client.close().catch(() => undefined);
    rmSync(projectRoot, { recursive: true, force: true });
  }
}

export async function verifyRuntime(executable: string, version: string): Promise<RuntimeCheck> {
  await checkRuntimeVersion(executable, version);
  const tools = await checkMcpHandshake(executable);
  return { version, tools };
}
