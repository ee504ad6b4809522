/**
 * The smaller ways setup kept less than it should: keys a user added to our entry, OpenCode's legacy
 * config.json, byte-exact disconnects, rollback of one client, --refresh over an unreadable connected
 * client, temporaries of crashed runs, --dry-run with a pending journal, and --tools for clients that
 * limit tools.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseToml } from "smol-toml";
import { clientDefinition, type ClientId } from "../../../src/setup/clients.ts";
import { SetupService } from "../../../src/setup/service.ts";
import { makeFakeRuntime, runSetupCli as run, setupEnvironmentFor, temporaryHomes, writeFile, type TempHome } from "./helpers.ts";

setDefaultTimeout(120_000);

const home = temporaryHomes();

function serviceFor(temp: TempHome, version: string): SetupService {
  const runtime = makeFakeRuntime(join(temp.home, "downloads"), version);
  return new SetupService({ environment: temp.environment, source: { path: runtime, version, kind: "file" } });
}

async function apply(service: SetupService, operation: "configure" | "remove" | "rollback", clients: ClientId[], extra = {}) {
  return service.apply(await service.plan({ operation, clients, ...extra }));
}

const read = (path: string) => readFileSync(path, "utf8");

describe("setup keeps what is not its own", () => {
  test("keys a user added to our entry (Codex startup_timeout_sec and env, Claude env) survive an update and are not drift", async () => {
    const temp = home();
    await apply(serviceFor(temp, "0.2.0"), "configure", ["claude", "codex"]);
    const codex = join(temp.home, ".codex", "config.toml");
    writeFileSync(codex, `${read(codex)}startup_timeout_sec = 30\n\n[mcp_servers.flameox.env]\nRUST_LOG = "info"\n`);
    const claude = join(temp.home, ".claude.json");
    const withEnv = JSON.parse(read(claude));
    withEnv.mcpServers.flameox.env = { PYTHONPATH: "src" };
    writeFileSync(claude, JSON.stringify(withEnv, null, 2));
    // The user's own keys are not drift.
    expect((await serviceFor(temp, "0.2.0").verify()).problems).toEqual([]);
    const newer = serviceFor(temp, "0.3.0");
    const report = await apply(newer, "configure", ["claude", "codex"]);
    expect(report.changed_clients).toEqual(["claude", "codex"]);
    const entry = (parseToml(read(codex)) as any).mcp_servers.flameox;
    expect(entry).toEqual({
      ...clientDefinition("codex").entry(report.executable!, null),
      startup_timeout_sec: 30,
      env: { RUST_LOG: "info" },
    });
    expect(JSON.parse(read(claude)).mcpServers.flameox.env).toEqual({ PYTHONPATH: "src" });
    const verify = await newer.verify();
    expect(verify.problems).toEqual([]);
  });

  test("OpenCode: the global folder's legacy config.json is used when it is the only one, and never keeps a stale entry", async () => {
    const temp = home();
    const folder = join(temp.env.XDG_CONFIG_HOME!, "opencode");
    writeFile(join(folder, "config.json"), '{\n  "theme": "dark"\n}\n');
    const first = await apply(serviceFor(temp, "0.2.0"), "configure", ["opencode"]);
    expect(JSON.parse(read(join(folder, "config.json"))).mcp.flameox.command[0]).toBe(first.executable);
    expect(existsSync(join(folder, "opencode.json"))).toBe(false);
    // A newer opencode.json takes precedence over config.json; our entry moves there, the old one goes.
    writeFile(join(folder, "opencode.json"), '{\n  // mine\n  "model": "x"\n}\n');
    const service = serviceFor(temp, "0.2.0");
    expect((await service.verify()).drifted_clients).toEqual(["opencode"]);
    await apply(service, "configure", ["opencode"]);
    expect(read(join(folder, "config.json"))).toBe('{\n  "theme": "dark"\n}\n');
    expect(read(join(folder, "opencode.json"))).toContain("// mine");
    expect((await service.verify()).ok).toBe(true);
    await apply(service, "remove", ["opencode"]);
    expect(read(join(folder, "opencode.json"))).toBe('{\n  // mine\n  "model": "x"\n}\n');
  });

  test("disconnect gives back the exact bytes: no section, an empty section, a file setup created", async () => {
    const temp = home();
    const files = {
      claude: [join(temp.home, ".claude.json"), '{"numStartups":3,"projects":{}}'],
      cursor: [join(temp.home, ".cursor", "mcp.json"), '{\n  "mcpServers": {}\n}\n'],
    } as const;
    for (const [path, text] of Object.values(files)) writeFile(path, text);
    const service = serviceFor(temp, "0.2.0");
    await apply(service, "configure", ["claude", "cursor", "gemini"]);
    await apply(serviceFor(temp, "0.3.0"), "configure", ["claude"]);
    const remove = await apply(service, "remove", ["claude", "cursor", "gemini"]);
    expect(remove.changed_clients).toEqual(["claude", "cursor", "gemini"]);
    for (const [path, text] of Object.values(files)) expect(read(path)).toBe(text);
    expect(existsSync(join(temp.home, ".gemini", "settings.json"))).toBe(false);
  });

  test("a rollback that names one client moves every connected client, and says so", async () => {
    const temp = home();
    await apply(serviceFor(temp, "0.2.0"), "configure", ["claude", "cursor", "codex"]);
    const newer = serviceFor(temp, "0.3.0");
    await apply(newer, "configure", ["claude"]);
    const prepared = await newer.plan({ operation: "rollback", clients: ["cursor"], version: "0.2.0" });
    expect(prepared.plan.clients.map((client) => [client.client, client.reason])).toEqual([
      ["claude", "connected"],
      ["cursor", "selected"],
      ["codex", "connected"],
    ]);
    expect(prepared.plan.warnings.join(" ")).toContain("Claude Code, Codex");
    await newer.apply(prepared);
    const verify = await newer.verify();
    expect(verify.version).toBe("0.2.0");
    expect(verify.ok).toBe(true);
  });

  test("temporaries left by a crashed writer are removed; a live writer's are not", async () => {
    const temp = home();
    writeFile(join(temp.home, ".claude.json"), "{}\n");
    // The writer's temporaries are `.<name>.<pid>.<hex>.tmp`: `..claude.json.…` for a dotfile.
    const dead = join(temp.home, "..claude.json.999999999.0123456789ab.tmp");
    const live = join(temp.home, `..claude.json.${process.pid}.0123456789ab.tmp`);
    writeFile(dead, "stale");
    writeFile(live, "in use");
    await apply(serviceFor(temp, "0.2.0"), "configure", ["claude"]);
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(live)).toBe(true);
  });
});

describe("flameox setup (CLI) edge cases", () => {
  function prepare() {
    const temp = home();
    return { temp, env: setupEnvironmentFor(temp) };
  }

  test("--refresh names a connected client whose config became unreadable (exit 9) instead of skipping it", () => {
    const { temp, env } = prepare();
    expect(run(env, ["--claude", "--cursor", "--yes"]).code).toBe(0);
    const cursor = join(temp.home, ".cursor", "mcp.json");
    writeFileSync(cursor, "{ broken");
    const claudeBefore = read(join(temp.home, ".claude.json"));
    const refresh = run(env, ["--refresh", "--yes", "--json"]);
    expect(refresh.code).toBe(9);
    const error = JSON.parse(refresh.stdout).error;
    expect(error.code).toBe("EXECUTION_REFUSED");
    expect(error.message).toContain("Cursor");
    expect(error.remediation.join(" ")).toContain(cursor);
    expect(read(join(temp.home, ".claude.json"))).toBe(claudeBefore);
    expect(read(cursor)).toBe("{ broken");
    // Connected before setup kept records: our key in the raw text is enough to name it.
    rmSync(join(temp.env.XDG_DATA_HOME!, "flameox", "connections.json"));
    writeFileSync(cursor, '{"mcpServers": {"flameox": {"command": "x"}},,}');
    expect(run(env, ["--refresh", "--yes"]).code).toBe(9);
    // Naming the others still works, and says what it left alone.
    const named = run(env, ["--claude", "--yes", "--json"]);
    expect(named.code).toBe(0);
    expect(JSON.parse(named.stdout).warnings.join(" ")).toContain("Cursor is connected but its config cannot be read");
  });

  test("a damaged active pointer is named by --verify and replaced by the remedy it gives", () => {
    const { temp, env } = prepare();
    expect(run(env, ["--claude", "--yes"]).code).toBe(0);
    const active = join(temp.env.XDG_DATA_HOME!, "flameox", "active");
    writeFileSync(active, "{ damaged");
    const verify = run(env, ["--verify", "--json"]);
    expect(verify.code).toBe(1);
    expect(JSON.parse(verify.stdout).problems.join(" ")).toContain("not valid JSON");
    const refresh = run(env, ["--refresh", "--yes", "--json"]);
    expect(refresh.code, refresh.stdout + refresh.stderr).toBe(0);
    expect(JSON.parse(refresh.stdout).warnings.join(" ")).toContain("It will be replaced");
    expect(run(env, ["--verify"]).code).toBe(0);
  });

  test("--dry-run with a crashed run's journal pending writes nothing, not even the rollback", () => {
    const { temp, env } = prepare();
    writeFileSync(join(temp.home, ".claude.json"), '{"a": 1}\n');
    const crashed = Bun.spawnSync([process.execPath, join(import.meta.dir, "fixtures", "apply-driver.ts"), "claude"], {
      env: { ...env, FLAMEOX_SETUP_CRASH_AFTER_WRITES: "1" },
    });
    expect(crashed.signalCode).toBe("SIGKILL");
    const journal = join(temp.env.XDG_DATA_HOME!, "flameox", "setup-journal.json");
    const before = { journal: read(journal), claude: read(join(temp.home, ".claude.json")) };
    const dry = run(env, ["--claude", "--dry-run", "--json"]);
    expect(dry.code).toBe(0);
    expect(JSON.parse(dry.stdout).warnings.join(" ")).toContain("interrupted setup");
    expect({ journal: read(journal), claude: read(join(temp.home, ".claude.json")) }).toEqual(before);
    const verify = run(env, ["--verify", "--json"]);
    expect(JSON.parse(verify.stdout).problems.join(" ")).toContain("the next `flameox setup` run rolls it back");
    // The crashed run held Claude Code's own lock; it is still there, and is ours to release.
    expect(existsSync(join(temp.home, ".claude.json.lock"))).toBe(true);
    // And that advice works.
    expect(run(env, ["--claude", "--yes"]).code).toBe(0);
    expect(existsSync(journal)).toBe(false);
    expect(existsSync(join(temp.home, ".claude.json.lock"))).toBe(false);
  });

  test("--tools selects families for Cursor and Windsurf only, an upgrade keeps it, and an unknown family is exit 2", () => {
    const { temp, env } = prepare();
    const applied = run(env, ["--claude", "--cursor", "--windsurf", "--tools", "runs,capture", "--yes", "--json"]);
    expect(applied.code, applied.stderr).toBe(0);
    const cursor = JSON.parse(read(join(temp.home, ".cursor", "mcp.json"))).mcpServers.flameox;
    expect(cursor.args).toEqual(["mcp", "serve", "--project-root", ".", "--tools", "capture,runs"]);
    const windsurf = JSON.parse(read(join(temp.home, ".codeium", "windsurf", "mcp_config.json"))).mcpServers.flameox;
    expect(windsurf.args).toEqual(cursor.args);
    expect(JSON.parse(read(join(temp.home, ".claude.json"))).mcpServers.flameox.args).toEqual(["mcp", "serve", "--project-root", "."]);
    const newer = { ...env, FLAMEOX_SETUP_RUNTIME_SOURCE: makeFakeRuntime(join(temp.home, "downloads"), "0.3.0") };
    expect(run(newer, ["--refresh", "--yes"]).code).toBe(0);
    const upgraded = JSON.parse(read(join(temp.home, ".cursor", "mcp.json"))).mcpServers.flameox;
    expect(upgraded.command).toContain("/runtimes/0.3.0/");
    expect(upgraded.args).toEqual(cursor.args);
    expect(run(newer, ["--verify"]).code).toBe(0);
    const unknown = run(env, ["--cursor", "--tools", "capture,bogus", "--yes", "--json"]);
    expect(unknown.code).toBe(2);
    expect(JSON.parse(unknown.stdout).error.message).toContain('"bogus"');
    // Without --tools, the plan for a client with a tool limit says how to stay under it.
    const hint = run(env, ["--windsurf", "--tools", "all", "--dry-run", "--json"]);
    expect(JSON.parse(hint.stdout).warnings.join(" ")).toContain("Windsurf takes at most 50 tools");
    expect(readdirSync(temp.home)).not.toContain(".claude.json.lock");
  });
});
