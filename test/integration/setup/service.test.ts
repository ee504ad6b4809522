import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";

setDefaultTimeout(120_000);
import { chmodSync, existsSync, linkSync, lstatSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseToml } from "smol-toml";
import { clientDefinition, clientIds, type ClientId } from "../../../src/setup/clients.ts";
import type { FlameoxError } from "../../../src/domain/errors.ts";
import { maxWriteAttempts } from "../../../src/setup/apply.ts";
import { acquireSetupLock } from "../../../src/setup/lock.ts";
import { SetupService } from "../../../src/setup/service.ts";
import { makeFakeRuntime, makeTempHome, writeFile, type TempHome } from "./helpers.ts";

let homes: TempHome[] = [];
afterEach(() => {
  for (const home of homes) home.cleanup();
  homes = [];
});

function setup(version = "0.2.0", extra: Partial<ConstructorParameters<typeof SetupService>[0]> = {}) {
  const temp = makeTempHome();
  homes.push(temp);
  const runtime = makeFakeRuntime(join(temp.home, "downloads"), version);
  const service = new SetupService({ environment: temp.environment, source: { path: runtime, version, kind: "file" }, ...extra });
  return { temp, runtime, service };
}

function serviceFor(temp: TempHome, version: string, extra: Partial<ConstructorParameters<typeof SetupService>[0]> = {}): SetupService {
  const runtime = makeFakeRuntime(join(temp.home, "downloads"), version);
  return new SetupService({ environment: temp.environment, source: { path: runtime, version, kind: "file" }, ...extra });
}

async function configure(service: SetupService, clients: ClientId[]) {
  return service.apply(await service.plan({ operation: "configure", clients }));
}

const pathOf = (temp: TempHome, id: ClientId): string => clientDefinition(id).configPath(temp.environment);
const read = (path: string): string => readFileSync(path, "utf8");

/** A pre-existing config per client with a comment (where the format allows), an unrelated server and odd formatting. */
function seedConfigs(temp: TempHome): Record<ClientId, string> {
  const seeds: Record<ClientId, string> = {
    claude: '{\n    "numStartups": 3,\n    "mcpServers": {\n        "other": {"command": "other"}\n    }\n}\n',
    cursor: '{"mcpServers": {"other": {"command": "other"}}}',
    windsurf: '{\n  "mcpServers": {}\n}\n',
    opencode:
      '{\n  // my opencode settings\n  "$schema": "https://opencode.ai/config.json",\n  "mcp": {\n    "other": { "type": "local", "command": ["other"] },\n  },\n}\n',
    codex: '# codex settings\nmodel = "o3"\n\n[mcp_servers.other]\ncommand = "other" # keep me\n',
    gemini: '{\r\n\t// gemini\r\n\t"theme": "Default",\r\n\t"mcpServers": {\r\n\t\t"other": {"command": "other"}\r\n\t}\r\n}\r\n',
    antigravity: '{\n  "mcpServers": {\n    "other": {"command": "other"}\n  }\n}\n',
    vscode: '{\n  // VS Code MCP\n  "servers": {\n    "other": {"type": "stdio", "command": "other"}\n  },\n  "inputs": []\n}\n',
    "claude-desktop": '{\n  "globalShortcut": "",\n  "mcpServers": {}\n}\n',
  };
  for (const id of clientIds) writeFile(pathOf(temp, id), seeds[id]);
  return seeds;
}

function parsedEntry(temp: TempHome, id: ClientId): unknown {
  const path = pathOf(temp, id);
  const text = read(path);
  if (id === "codex") return (parseToml(text) as { mcp_servers: Record<string, unknown> }).mcp_servers.flameox;
  const { parse } = require("jsonc-parser") as typeof import("jsonc-parser");
  let node = parse(text) as Record<string, unknown>;
  for (const key of clientDefinition(id).section) node = node[key] as Record<string, unknown>;
  return node.flameox;
}

describe("setup service", () => {
  test("every client gets a correct entry; comments, unrelated servers and formatting survive; a second run changes nothing", async () => {
    const { temp, service } = setup();
    const seeds = seedConfigs(temp);
    const report = await configure(service, [...clientIds]);
    expect(report.changed_clients).toEqual([...clientIds]);
    expect(report.runtime_installed).toBe(true);
    const launcher = join(temp.env.XDG_DATA_HOME!, "flameox", "runtimes", "0.2.0", "flameox");
    expect(report.executable).toBe(launcher);
    for (const id of clientIds) {
      expect(parsedEntry(temp, id)).toEqual(clientDefinition(id).entry(launcher, null));
      const text = read(pathOf(temp, id));
      for (const line of ["// my opencode settings", "# codex settings", "# keep me", "// gemini", "// VS Code MCP", '"numStartups": 3']) {
        if (seeds[id].includes(line)) expect(text).toContain(line);
      }
    }
    expect(read(pathOf(temp, "codex")).startsWith(seeds.codex)).toBe(true);
    expect(
      read(pathOf(temp, "claude")).startsWith(
        '{\n    "numStartups": 3,\n    "mcpServers": {\n        "other": {"command": "other"},\n        "flameox": {\n',
      ),
    ).toBe(true);
    expect(read(pathOf(temp, "gemini")).replace(/\r\n/g, "")).not.toContain("\n");
    const before = clientIds.map((id) => read(pathOf(temp, id)));
    const second = await service.plan({ operation: "configure", clients: [...clientIds] });
    expect(second.plan.clients.map((client) => client.action)).toEqual(clientIds.map(() => "already_current"));
    expect(second.plan.runtime.action).toBe("reuse");
    const again = await service.apply(second);
    expect(again.changed_clients).toEqual([]);
    expect(clientIds.map((id) => read(pathOf(temp, id)))).toEqual(before);
    const verify = await service.verify();
    expect(verify.ok).toBe(true);
    expect(verify.clients.map((client) => client.client)).toEqual([...clientIds]);
  });

  test("a config rewritten between preview and apply keeps the other change beside our entry", async () => {
    const { temp, service } = setup();
    seedConfigs(temp);
    const prepared = await service.plan({ operation: "configure", clients: ["claude", "codex", "cursor"] });
    writeFile(pathOf(temp, "cursor"), '{"mcpServers": {}, "edited": true}');
    chmodSync(pathOf(temp, "claude"), 0o640);
    const report = await service.apply(prepared);
    expect(report.changed_clients).toEqual(["claude", "cursor", "codex"]);
    expect(JSON.parse(read(pathOf(temp, "cursor"))).edited).toBe(true);
    expect(parsedEntry(temp, "cursor")).toEqual(clientDefinition("cursor").entry(report.executable!, null));
    expect(statSync(pathOf(temp, "claude")).mode & 0o777).toBe(0o640);
    expect(existsSync(service.store.journalPath)).toBe(false);
  });

  test("another setup activating a runtime after the preview aborts with nothing written", async () => {
    const temp = makeTempHome();
    homes.push(temp);
    const seeds = seedConfigs(temp);
    const older = serviceFor(temp, "0.2.0");
    const prepared = await older.plan({ operation: "configure", clients: ["claude"] });
    await configure(serviceFor(temp, "0.3.0"), ["codex"]);
    const error = (await older.apply(prepared).catch((caught: unknown) => caught)) as FlameoxError;
    expect(error.code).toBe("REVISION_CONFLICT");
    expect(read(pathOf(temp, "claude"))).toBe(seeds.claude);
    expect(existsSync(older.store.versionDirectory("0.2.0"))).toBe(false);
    expect(older.store.readActive()?.version).toBe("0.3.0");
  });

  test("a config that changes between our read and our write is read again and written once", async () => {
    let changes = 0;
    const { temp, service } = setup("0.2.0", {
      beforeConfigWrite: (client, path) => {
        if (client !== "codex" || changes > 0) return;
        changes += 1;
        writeFileSync(path, `${readFileSync(path, "utf8")}\n[profiles.fast]\nmodel = "o4"\n`);
      },
    });
    seedConfigs(temp);
    const report = await configure(service, ["claude", "codex"]);
    expect(report.changed_clients).toEqual(["claude", "codex"]);
    const codex = parseToml(read(pathOf(temp, "codex"))) as Record<string, any>;
    expect(codex.profiles.fast.model).toBe("o4");
    expect(codex.mcp_servers.flameox.command).toBe(report.executable);
  });

  test("a config that keeps changing gives up with a typed conflict naming the client; what was written is rolled back", async () => {
    const { temp, service } = setup("0.2.0", {
      beforeConfigWrite: (client, path, attempt) => {
        if (client === "codex") writeFileSync(path, `${readFileSync(path, "utf8")}# writer ${attempt}\n`);
      },
    });
    const seeds = seedConfigs(temp);
    const error = (await configure(service, ["claude", "codex"]).catch((caught: unknown) => caught)) as FlameoxError;
    expect(error.code).toBe("REVISION_CONFLICT");
    expect(error.message).toContain("Codex");
    expect(error.message).toContain(pathOf(temp, "codex"));
    expect(error.remediation.join(" ")).toContain("Run the same flameox setup command again");
    expect(read(pathOf(temp, "claude"))).toBe(seeds.claude);
    expect(read(pathOf(temp, "codex"))).toBe(
      `${seeds.codex}${Array.from({ length: maxWriteAttempts }, (_, index) => `# writer ${index + 1}\n`).join("")}`,
    );
    expect(existsSync(service.store.journalPath)).toBe(false);
    expect(existsSync(service.store.activePath)).toBe(false);
    // The next run, with the writer gone, is not blocked by anything the failed one left.
    const again = await configure(serviceFor(temp, "0.2.0"), ["claude", "codex"]);
    expect(again.changed_clients).toEqual(["claude", "codex"]);
  });

  test("a crash after the first of several writes is fully rolled back on the next run", async () => {
    const temp = makeTempHome();
    homes.push(temp);
    const seeds = seedConfigs(temp);
    const runtime = makeFakeRuntime(join(temp.home, "downloads"), "0.2.0");
    const child = Bun.spawnSync([process.execPath, join(import.meta.dir, "fixtures", "apply-driver.ts"), "claude,cursor,codex"], {
      env: { ...temp.env, FLAMEOX_SETUP_RUNTIME_SOURCE: runtime, FLAMEOX_SETUP_CRASH_AFTER_WRITES: "1" },
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(child.signalCode).toBe("SIGKILL");
    const service = serviceFor(temp, "0.2.0");
    expect(existsSync(service.store.journalPath)).toBe(true);
    // The journal names only the file that was written, never the ones still waiting.
    const journal = JSON.parse(read(service.store.journalPath)) as { mutations: Array<{ path: string }> };
    expect(journal.mutations.map((mutation) => mutation.path)).toEqual([pathOf(temp, "claude")]);
    expect(read(pathOf(temp, "claude"))).not.toBe(seeds.claude);
    expect(read(pathOf(temp, "cursor"))).toBe(seeds.cursor);
    const recovery = await service.recover();
    expect(recovery.restored).toEqual([pathOf(temp, "claude")]);
    for (const id of ["claude", "cursor", "codex"] as ClientId[]) expect(read(pathOf(temp, id))).toBe(seeds[id]);
    expect(existsSync(service.store.journalPath)).toBe(false);
    expect(existsSync(service.store.activePath)).toBe(false);
    // And the next plan sees the originals again.
    const plan = await service.plan({ operation: "configure", clients: ["claude"] });
    expect(plan.plan.clients[0]!.action).toBe("update");
  });

  test("a file edited after the crash is left alone, the journal is kept aside, and setup is not blocked", async () => {
    const temp = makeTempHome();
    homes.push(temp);
    seedConfigs(temp);
    const runtime = makeFakeRuntime(join(temp.home, "downloads"), "0.2.0");
    Bun.spawnSync([process.execPath, join(import.meta.dir, "fixtures", "apply-driver.ts"), "claude,cursor"], {
      env: { ...temp.env, FLAMEOX_SETUP_RUNTIME_SOURCE: runtime, FLAMEOX_SETUP_CRASH_AFTER_WRITES: "1" },
    });
    writeFile(pathOf(temp, "claude"), '{"user": "edit"}');
    const service = serviceFor(temp, "0.2.0");
    const recovery = await service.recover();
    expect(recovery.left_alone).toEqual([pathOf(temp, "claude")]);
    expect(recovery.kept_journal).not.toBeNull();
    expect(JSON.parse(read(recovery.kept_journal!)).mutations[0].path).toBe(pathOf(temp, "claude"));
    expect(recovery.warnings.join(" ")).toContain(pathOf(temp, "claude"));
    expect(read(pathOf(temp, "claude"))).toBe('{"user": "edit"}');
    expect(existsSync(service.store.journalPath)).toBe(false);
    const report = await configure(service, ["claude", "cursor"]);
    expect(report.changed_clients).toEqual(["claude", "cursor"]);
    expect(JSON.parse(read(pathOf(temp, "claude"))).user).toBe("edit");
  });

  test("a crash under one CODEX_HOME is recovered under another, and a damaged journal never blocks setup", async () => {
    const temp = makeTempHome({ CODEX_HOME: "" });
    homes.push(temp);
    const codexHome = join(temp.home, "elsewhere", "codex");
    writeFile(join(codexHome, "config.toml"), 'model = "o3"\n');
    const runtime = makeFakeRuntime(join(temp.home, "downloads"), "0.2.0");
    Bun.spawnSync([process.execPath, join(import.meta.dir, "fixtures", "apply-driver.ts"), "codex"], {
      env: { ...temp.env, CODEX_HOME: codexHome, FLAMEOX_SETUP_RUNTIME_SOURCE: runtime, FLAMEOX_SETUP_CRASH_AFTER_WRITES: "1" },
    });
    const service = serviceFor(temp, "0.2.0");
    expect(existsSync(service.store.journalPath)).toBe(true);
    expect((await service.recover()).restored).toEqual([join(codexHome, "config.toml")]);
    expect(read(join(codexHome, "config.toml"))).toBe('model = "o3"\n');
    writeFile(service.store.journalPath, "{ not json");
    const recovery = await service.recover();
    expect(recovery.kept_journal).toMatch(/setup-journal\..+\.kept\.json$/);
    expect(read(recovery.kept_journal!)).toBe("{ not json");
    expect((await configure(service, ["claude"])).changed_clients).toEqual(["claude"]);
  });

  test("a failure after the second write restores every file in-process", async () => {
    const { temp, service } = setup("0.2.0", { failAfterWrites: 2 });
    const seeds = seedConfigs(temp);
    const error = await configure(service, ["claude", "cursor", "codex"]).catch((caught: unknown) => caught);
    expect(String(error)).toContain("injected failure after 2 writes");
    for (const id of ["claude", "cursor", "codex"] as ClientId[]) expect(read(pathOf(temp, id))).toBe(seeds[id]);
    expect(existsSync(service.store.journalPath)).toBe(false);
    expect(existsSync(service.store.activePath)).toBe(false);
  });

  test("verify catches a hand-edited entry and names the client, without repairing it", async () => {
    const { temp, service } = setup();
    seedConfigs(temp);
    await configure(service, ["claude", "codex"]);
    const edited = read(pathOf(temp, "codex")).replace('"--project-root", "."', '"--project-root", "/elsewhere"');
    writeFile(pathOf(temp, "codex"), edited);
    const report = await service.verify();
    expect(report.ok).toBe(false);
    expect(report.drifted_clients).toEqual(["codex"]);
    expect(report.problems.join("\n")).toContain("Codex");
    expect(report.runtime.handshake_ok).toBe(true);
    expect(read(pathOf(temp, "codex"))).toBe(edited);
  });

  test("rollback restores the previous runtime in every client", async () => {
    const temp = makeTempHome();
    homes.push(temp);
    seedConfigs(temp);
    const clients: ClientId[] = ["claude", "cursor", "opencode", "codex", "vscode"];
    await configure(serviceFor(temp, "0.2.0"), clients);
    const newer = serviceFor(temp, "0.3.0");
    await configure(newer, clients);
    expect(newer.inspect().installed_versions).toEqual(["0.3.0", "0.2.0"]);
    const prepared = await newer.plan({ operation: "rollback", clients: [] });
    expect(prepared.plan.version).toBe("0.2.0");
    expect(prepared.plan.clients.map((client) => client.client)).toEqual(clients);
    await newer.apply(prepared);
    const old = newer.store.executablePath("0.2.0");
    for (const id of clients) expect(parsedEntry(temp, id)).toEqual(clientDefinition(id).entry(old, null));
    expect(newer.store.readActive()?.version).toBe("0.2.0");
    expect((await newer.verify()).ok).toBe(true);
    // Configuring again from the older binary keeps the newer active runtime (no silent downgrade).
    const downgrade = await serviceFor(temp, "0.1.0").plan({ operation: "configure", clients: ["claude"] });
    expect(downgrade.plan.version).toBe("0.2.0");
  });

  test("remove disconnects only our entry", async () => {
    const { temp, service } = setup();
    const seeds = seedConfigs(temp);
    await configure(service, ["claude", "codex"]);
    const report = await service.apply(await service.plan({ operation: "remove", clients: ["claude", "codex", "cursor"] }));
    expect(report.changed_clients).toEqual(["claude", "codex"]);
    expect(report.unchanged_clients).toEqual(["cursor"]);
    expect(read(pathOf(temp, "codex"))).toBe(seeds.codex);
    expect(JSON.parse(read(pathOf(temp, "claude")))).toEqual(JSON.parse(seeds.claude));
  });

  test("symlinked configs are edited at their target and the link survives; modes are kept", async () => {
    const { temp, service } = setup();
    const target = join(temp.home, "dotfiles", "claude.json");
    writeFile(target, '{"mcpServers": {}}\n');
    chmodSync(target, 0o640);
    symlinkSync(target, pathOf(temp, "claude"));
    await configure(service, ["claude"]);
    expect(lstatSync(pathOf(temp, "claude")).isSymbolicLink()).toBe(true);
    expect(JSON.parse(read(target)).mcpServers.flameox.args).toEqual(["mcp", "serve", "--project-root", "."]);
    expect(statSync(target).mode & 0o777).toBe(0o640);
  });

  test("a read-only (0444) or hard-linked config is refused with a typed error naming the client; nothing changes", async () => {
    const { temp, service } = setup();
    const seeds = seedConfigs(temp);
    chmodSync(pathOf(temp, "cursor"), 0o444);
    const readOnly = (await configure(service, ["cursor"]).catch((caught: unknown) => caught)) as FlameoxError;
    expect(readOnly.code).toBe("EXECUTION_REFUSED");
    expect(readOnly.message).toContain("Cursor");
    expect(readOnly.message).toContain("read-only");
    expect(readOnly.remediation.join(" ")).toContain("chmod u+w");
    const twin = join(temp.home, "codex-twin.toml");
    linkSync(pathOf(temp, "codex"), twin);
    const linked = (await configure(service, ["codex"]).catch((caught: unknown) => caught)) as FlameoxError;
    expect(linked.code).toBe("EXECUTION_REFUSED");
    expect(linked.message).toContain("Codex");
    expect(linked.message).toContain("2 hard links");
    expect(read(pathOf(temp, "cursor"))).toBe(seeds.cursor);
    expect(read(twin)).toBe(seeds.codex);
    expect(statSync(pathOf(temp, "codex")).nlink).toBe(2);
    expect(existsSync(service.store.runtimesDirectory)).toBe(false);
  });

  test("malformed, non-UTF-8 and directory configs are refused and never replaced", async () => {
    const { temp, service } = setup();
    writeFile(pathOf(temp, "claude"), "{broken");
    writeFile(pathOf(temp, "cursor"), new Uint8Array([0x7b, 0xfe, 0x7d]));
    for (const id of ["claude", "cursor"] as ClientId[]) {
      const error = (await service.plan({ operation: "configure", clients: [id] }).catch((caught: unknown) => caught)) as FlameoxError;
      expect(error.code).toBe("EXECUTION_REFUSED");
      expect(error.remediation.join(" ")).toContain("then rerun flameox setup");
    }
    expect(read(pathOf(temp, "claude"))).toBe("{broken");
  });

  test("a held lock makes apply fail with WRITE_LOCK_TIMEOUT", async () => {
    const { temp, service } = setup("0.2.0", { lockTimeoutMs: 200 });
    seedConfigs(temp);
    const prepared = await service.plan({ operation: "configure", clients: ["claude"] });
    const lock = await acquireSetupLock(service.store.lockPath);
    try {
      expect(((await service.apply(prepared).catch((caught: unknown) => caught)) as FlameoxError).code).toBe("WRITE_LOCK_TIMEOUT");
    } finally {
      lock.release();
    }
  });

  test("--expect-sha256 mismatch installs nothing, and is checked when the version is already installed too", async () => {
    const { temp, service } = setup("0.2.0", { integrity: { expectedSha256: "0".repeat(64) } });
    seedConfigs(temp);
    const error = (await configure(service, ["claude"]).catch((caught: unknown) => caught)) as FlameoxError;
    expect(error.code).toBe("ARTIFACT_INTEGRITY_FAILED");
    expect(existsSync(join(service.store.runtimesDirectory, "0.2.0"))).toBe(false);
    expect(read(pathOf(temp, "claude"))).not.toContain("flameox");
    await configure(serviceFor(temp, "0.2.0"), ["claude"]);
    const installed = serviceFor(temp, "0.2.0", { integrity: { expectedSha256: "0".repeat(64) } });
    const again = (await configure(installed, ["codex"]).catch((caught: unknown) => caught)) as FlameoxError;
    expect(again.code).toBe("ARTIFACT_INTEGRITY_FAILED");
    expect(read(pathOf(temp, "codex"))).not.toContain("flameox");
  });
});
