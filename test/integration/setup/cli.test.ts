import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";

setDefaultTimeout(120_000);
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeFakeRuntime, makeTempHome, type TempHome } from "./helpers.ts";

const entry = join(import.meta.dir, "fixtures", "setup-cli.ts");
let homes: TempHome[] = [];
afterEach(() => {
  for (const home of homes) home.cleanup();
  homes = [];
});

function prepare(): { temp: TempHome; env: Record<string, string> } {
  const temp = makeTempHome();
  homes.push(temp);
  const runtime = makeFakeRuntime(join(temp.home, "downloads"), "0.2.0");
  return { temp, env: { ...temp.env, FLAMEOX_SETUP_RUNTIME_SOURCE: runtime } };
}

function run(env: Record<string, string>, args: string[]) {
  const child = Bun.spawnSync([process.execPath, entry, ...args], { env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  return { code: child.exitCode, stdout: child.stdout.toString(), stderr: child.stderr.toString() };
}

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
});
