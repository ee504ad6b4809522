import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { toolFamilies, toolFamilyNames } from "../../../src/mcp/tool-families.ts";
import { makeFakeRuntime, runSetupCli, setupCli as entry, setupEnvironmentFor, temporaryHomes, type TempHome } from "./helpers.ts";

setDefaultTimeout(120_000);

const makeHome = temporaryHomes();

function prepare(): { temp: TempHome; env: Record<string, string> } {
  const temp = makeHome();
  return { temp, env: setupEnvironmentFor(temp) };
}

const run = runSetupCli;

describe("flameox setup (CLI)", () => {
  test("--dry-run --json prints exactly one plan document and writes nothing", () => {
    const { temp, env } = prepare();
    const result = run(env, ["--claude", "--dry-run", "--json"]);
    expect(result.code).toBe(0);
    const plan = JSON.parse(result.stdout);
    expect(plan.operation).toBe("configure");
    expect(plan.clients[0].action).toBe("create");
    expect(existsSync(join(temp.home, ".claude.json"))).toBe(false);
    expect(existsSync(join(temp.env.XDG_DATA_HOME!, "flameox"))).toBe(false);
  });

  test("argument rules: exit 2 without a target, on unknown flags, on JSON without --yes", () => {
    const { env } = prepare();
    expect(run(env, ["--yes"]).code).toBe(2);
    expect(run(env, ["--bogus"]).code).toBe(2);
    expect(run(env, ["--claude", "--all"]).code).toBe(2);
    expect(run(env, ["--verify", "--claude"]).code).toBe(2);
    expect(run(env, ["--rollback", "v1"]).code).toBe(2);
    const json = run(env, ["--claude", "--json"]);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout).error.code).toBe("INVALID_ARGUMENTS");
    expect(run(env, []).code).toBe(2);
  });

  test("apply, verify, drift makes verify exit 1 naming the client, refresh repairs, rollback", () => {
    const { temp, env } = prepare();
    writeFileSync(join(temp.home, ".claude.json"), '{"projects": {}}\n');
    const applied = run(env, ["--claude", "--codex", "--yes", "--json"]);
    expect(applied.code).toBe(0);
    expect(JSON.parse(applied.stdout).changed_clients).toEqual(["claude", "codex"]);
    expect(run(env, ["--verify"]).code).toBe(0);
    const path = join(temp.home, ".claude.json");
    writeFileSync(path, readFileSync(path, "utf8").replace('"--project-root"', '"--workspace"'));
    const verify = run(env, ["--verify", "--json"]);
    expect(verify.code).toBe(1);
    expect(JSON.parse(verify.stdout).drifted_clients).toEqual(["claude"]);
    const refresh = run(env, ["--refresh", "--yes", "--json"]);
    expect(JSON.parse(refresh.stdout).changed_clients).toEqual(["claude"]);
    expect(run(env, ["--verify"]).code).toBe(0);
    const newer = { ...env, FLAMEOX_SETUP_RUNTIME_SOURCE: makeFakeRuntime(join(temp.home, "downloads"), "0.3.0") };
    expect(run(newer, ["--refresh", "--yes"]).code).toBe(0);
    const rollback = run(newer, ["--rollback", "0.2.0", "--yes", "--json"]);
    expect(rollback.code).toBe(0);
    expect(readFileSync(path, "utf8")).toContain("/runtimes/0.2.0/flameox");
    expect(readFileSync(join(temp.home, ".codex", "config.toml"), "utf8")).toContain("/runtimes/0.2.0/flameox");
  });

  test("--checksums: a matching SHA256SUMS line installs, a wrong one refuses with exit 5", () => {
    const { temp, env } = prepare();
    const runtime = env.FLAMEOX_SETUP_RUNTIME_SOURCE!;
    const digest = new Bun.CryptoHasher("sha256").update(readFileSync(runtime)).digest("hex");
    const sums = join(temp.home, "SHA256SUMS");
    writeFileSync(sums, `${"1".repeat(64)}  flameox-other\n${"0".repeat(64)}  flameox-0.2.0\n`);
    expect(run(env, ["--claude", "--yes", "--checksums", sums]).code).toBe(5);
    expect(existsSync(join(temp.home, ".claude.json"))).toBe(false);
    writeFileSync(sums, `${digest}  flameox-0.2.0\n`);
    expect(run(env, ["--claude", "--yes", "--checksums", sums]).code).toBe(0);
    // With 0.2.0 installed, a wrong line is still refused: the installed bytes are what is checked.
    writeFileSync(sums, `${"0".repeat(64)}  flameox-0.2.0\n`);
    const installed = run(env, ["--codex", "--yes", "--json", "--checksums", sums]);
    expect(installed.code).toBe(5);
    expect(JSON.parse(installed.stdout).error.code).toBe("ARTIFACT_INTEGRITY_FAILED");
    expect(existsSync(join(temp.home, ".codex", "config.toml"))).toBe(false);
  });

  test("a PTY drives the wizard to completion (detected client preselected, confirm)", () => {
    const { temp, env } = prepare();
    mkdirSync(join(temp.home, ".codex"));
    const spec = join(temp.home, "pty.json");
    writeFileSync(
      spec,
      JSON.stringify({
        argv: [process.execPath, entry],
        env: { ...env, TERM: "xterm-256color", COLUMNS: "120", LINES: "40" },
        steps: [
          ["Select MCP clients to connect", "\r"],
          ["Apply these changes?", "y"],
        ],
        timeout: 60,
      }),
    );
    const child = Bun.spawnSync(["python3", join(import.meta.dir, "fixtures", "pty-drive.py"), spec], { stdout: "pipe", stderr: "pipe" });
    const transcript = child.stdout.toString();
    expect(transcript).toContain("Codex");
    expect(child.exitCode).toBe(0);
    expect(transcript).toContain("Updated: Codex");
    expect(readFileSync(join(temp.home, ".codex", "config.toml"), "utf8")).toContain("[mcp_servers.flameox]");
    expect(existsSync(join(temp.home, ".claude.json"))).toBe(false);
  });

  test("a PTY wizard declined at the confirm exits 8 with nothing written", () => {
    const { temp, env } = prepare();
    mkdirSync(join(temp.home, ".codex"));
    const spec = join(temp.home, "pty.json");
    writeFileSync(
      spec,
      JSON.stringify({
        argv: [process.execPath, entry],
        env: { ...env, TERM: "xterm-256color" },
        steps: [
          ["Select MCP clients to connect", "\r"],
          ["Apply these changes?", "\r"],
        ],
        timeout: 60,
      }),
    );
    const child = Bun.spawnSync(["python3", join(import.meta.dir, "fixtures", "pty-drive.py"), spec], { stdout: "pipe", stderr: "pipe" });
    expect(child.exitCode).toBe(8);
    expect(existsSync(join(temp.home, ".codex", "config.toml"))).toBe(false);
  });

  function driveWizard(env: Record<string, string>, home: string, steps: Array<[string, string]>) {
    const spec = join(home, "pty.json");
    writeFileSync(spec, JSON.stringify({ argv: [process.execPath, entry], env: { ...env, TERM: "xterm-256color" }, steps, timeout: 60 }));
    const child = Bun.spawnSync(["python3", join(import.meta.dir, "fixtures", "pty-drive.py"), spec], { stdout: "pipe", stderr: "pipe" });
    return { code: child.exitCode, transcript: child.stdout.toString() };
  }

  test("the wizard never preselects (or lets you pick) a client whose config is malformed, and finishes the others", () => {
    const { temp, env } = prepare();
    mkdirSync(join(temp.home, ".claude"));
    writeFileSync(join(temp.home, ".claude.json"), "{ broken");
    mkdirSync(join(temp.home, ".codex"));
    const { code, transcript } = driveWizard(env, temp.home, [
      ["Select MCP clients to connect", "\r"],
      ["Apply these changes?", "y"],
    ]);
    expect(code, transcript).toBe(0);
    expect(transcript).toContain("config unreadable; repair it first");
    expect(transcript).toContain("Updated: Codex");
    expect(readFileSync(join(temp.home, ".claude.json"), "utf8")).toBe("{ broken");
  });

  test("choosing Cursor in the wizard offers the tool families, preselected to fit its 40-tool limit", () => {
    const { temp, env } = prepare();
    mkdirSync(join(temp.home, ".cursor"));
    const { code, transcript } = driveWizard(env, temp.home, [
      ["Select MCP clients to connect", "\r"],
      ["Tool families to expose", "\r"],
      ["Apply these changes?", "y"],
    ]);
    expect(code, transcript).toBe(0);
    const args = JSON.parse(readFileSync(join(temp.home, ".cursor", "mcp.json"), "utf8")).mcpServers.flameox.args as string[];
    const families = args[args.indexOf("--tools") + 1]!.split(",");
    const sizes = Object.fromEntries(toolFamilyNames.map((name) => [name, toolFamilies[name].length]));
    const exposed = families.reduce((sum, name) => sum + sizes[name]!, 0);
    expect(exposed).toBeLessThanOrEqual(40);
    expect(exposed).toBeGreaterThan(0);
    expect(families).toContain("capture");
  });
});
