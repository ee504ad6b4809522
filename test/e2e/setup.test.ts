/**
 * The compiled binary installs itself as a runtime and connects clients (the air-gapped path:
 * `./flameox setup`), then verifies with a real MCP handshake against the installed copy.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

setDefaultTimeout(180_000);

const binary = process.env.FLAMEOX_BINARY ?? "";
const home = realpathSync(mkdtempSync(join(tmpdir(), "flameox-e2e-setup-")));
afterAll(() => rmSync(home, { recursive: true, force: true }));
const env = {
  HOME: home,
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  XDG_CONFIG_HOME: join(home, ".config"),
  XDG_DATA_HOME: join(home, "data"),
};

function run(args: string[]) {
  const child = Bun.spawnSync([binary, ...args], { env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  return { code: child.exitCode, stdout: child.stdout.toString(), stderr: child.stderr.toString() };
}

describe("compiled flameox setup", () => {
  test("the binary has a setup command", () => {
    expect(binary, "FLAMEOX_BINARY must name the compiled flameox (npm test sets it)").not.toBe("");
    const help = run(["setup", "--help"]);
    expect(
      `${help.stdout}${help.stderr}`,
      "`flameox setup` is not registered in this build (src/cli/main.ts must add setupCommand)",
    ).toContain("--claude");
  });

  test("installs itself, connects Claude Code and Codex, verifies, and a second run changes nothing", () => {
    writeFileSync(join(home, ".claude.json"), '{\n  "numStartups": 1\n}\n');
    const version = run(["--version"]).stdout.trim();
    const digest = new Bun.CryptoHasher("sha256").update(readFileSync(binary)).digest("hex");
    const applied = run(["setup", "--claude", "--codex", "--yes", "--json", "--expect-sha256", digest]);
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    const report = JSON.parse(applied.stdout);
    expect(report.runtime_installed).toBe(true);
    const launcher = join(home, "data", "flameox", "runtimes", version, "flameox");
    expect(report.executable).toBe(launcher);
    expect(existsSync(launcher)).toBe(true);
    expect(JSON.parse(readFileSync(join(home, ".claude.json"), "utf8")).mcpServers.flameox).toEqual({
      command: launcher,
      args: ["mcp", "serve", "--project-root", "."],
    });
    const verify = run(["setup", "--verify", "--json"]);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    expect(JSON.parse(verify.stdout).runtime.handshake_ok).toBe(true);
    const again = run(["setup", "--claude", "--codex", "--yes", "--json"]);
    expect(JSON.parse(again.stdout).changed_clients).toEqual([]);
  });

  test("Cursor gets a --tools selection that the installed runtime really serves; a modified runtime is repaired", () => {
    const applied = run(["setup", "--cursor", "--tools", "workspace,capture,runs", "--yes", "--json"]);
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    const entry = JSON.parse(readFileSync(join(home, ".cursor", "mcp.json"), "utf8")).mcpServers.flameox;
    expect(entry.args).toEqual(["mcp", "serve", "--project-root", ".", "--tools", "workspace,capture,runs"]);
    // verify runs the installed runtime with this client's own --tools.
    const verify = run(["setup", "--verify", "--json"]);
    expect(verify.code, verify.stdout).toBe(0);
    appendFileSync(entry.command, new Uint8Array([0]));
    const broken = run(["setup", "--verify", "--json"]);
    expect(broken.code).toBe(1);
    expect(JSON.parse(broken.stdout).problems.join(" ")).toContain("modified");
    const repaired = run(["setup", "--refresh", "--yes", "--json"]);
    expect(repaired.code, repaired.stdout + repaired.stderr).toBe(0);
    expect(JSON.parse(repaired.stdout).runtime_repaired).toBe(true);
    expect(readdirSync(join(home, "data", "flameox", "runtimes", ".quarantine"))).toHaveLength(1);
    expect(run(["setup", "--verify"]).code).toBe(0);
  });
});
