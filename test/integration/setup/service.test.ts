import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, lstatSync, readFileSync, statSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { parse as parseToml } from "smol-toml";
import { clientDefinition, clientIds, type ClientId } from "../../../src/setup/clients.ts";
import { FlameoxError } from "../../../src/domain/errors.ts";
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
      expect(parsedEntry(temp, id)).toEqual(clientDefinition(id).entry(launcher));
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

  test("a file changed between preview and apply aborts with nothing written", async () => {
    const { temp, service } = setup();
    seedConfigs(temp);
    const prepared = await service.plan({ operation: "configure", clients: ["claude", "codex", "cursor"] });
    writeFile(pathOf(temp, "cursor"), '{"mcpServers": {}, "edited": true}');
    const before = ["claude", "codex", "cursor"].map((id) => read(pathOf(temp, id as ClientId)));
    const error = await service.apply(prepared).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(FlameoxError);
    expect((error as FlameoxError).code).toBe("REVISION_CONFLICT");
    expect(["claude", "codex", "cursor"].map((id) => read(pathOf(temp, id as ClientId)))).toEqual(before);
    expect(existsSync(join(service.store.runtimesDirectory, "0.2.0"))).toBe(false);
    expect(existsSync(service.store.activePath)).toBe(false);
    expect(existsSync(service.store.journalPath)).toBe(false);
  });

  test("a mode change between preview and apply also aborts", async () => {
    const { temp, service } = setup();
    seedConfigs(temp);
    const prepared = await service.plan({ operation: "configure", clients: ["claude"] });
    chmodSync(pathOf(temp, "claude"), 0o640);
    expect(((await service.apply(prepared).catch((caught: unknown) => caught)) as FlameoxError).code).toBe("REVISION_CONFLICT");
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
    expect(read(pathOf(temp, "claude"))).not.toBe(seeds.claude);
    expect(read(pathOf(temp, "cursor"))).toBe(seeds.cursor);
    const restored = await service.recover();
    expect(restored).toEqual([pathOf(temp, "claude")]);
    for (const id of ["claude", "cursor", "codex"] as ClientId[]) expect(read(pathOf(temp, id))).toBe(seeds[id]);
    expect(existsSync(service.store.journalPath)).toBe(false);
    expect(existsSync(service.store.activePath)).toBe(false);
    // And the next plan sees the originals again.
    const plan = await service.plan({ operation: "configure", clients: ["claude"] });
    expect(plan.plan.clients[0]!.action).toBe("update");
  });

  test("recovery refuses and keeps the journal when a file was edited after the crash", async () => {
    const temp = makeTempHome();
    homes.push(temp);
    seedConfigs(temp);
    const runtime = makeFakeRuntime(join(temp.home, "downloads"), "0.2.0");
    Bun.spawnSync([process.execPath, join(import.meta.dir, "fixtures", "apply-driver.ts"), "claude,cursor"], {
      env: { ...temp.env, FLAMEOX_SETUP_RUNTIME_SOURCE: runtime, FLAMEOX_SETUP_CRASH_AFTER_WRITES: "1" },
    });
    writeFile(pathOf(temp, "claude"), '{"user": "edit"}');
    const service = serviceFor(temp, "0.2.0");
    const error = (await service.recover().catch((caught: unknown) => caught)) as FlameoxError;
    expect(error.code).toBe("ARTIFACT_INTEGRITY_FAILED");
    expect(read(pathOf(temp, "claude"))).toBe('{"user": "edit"}');
    expect(existsSync(service.store.journalPath)).toBe(true);
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
    for (const id of clients) expect(parsedEntry(temp, id)).toEqual(clientDefinition(id).entry(old));
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
    chmodSync(target, 0o444);
    symlinkSync(target, pathOf(temp, "claude"));
    await configure(service, ["claude"]);
    expect(lstatSync(pathOf(temp, "claude")).isSymbolicLink()).toBe(true);
    expect(JSON.parse(read(target)).mcpServers.flameox.args).toEqual(["mcp", "serve", "--project-root", "."]);
    expect(statSync(target).mode & 0o777).toBe(0o444);
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

  test("--expect-sha256 mismatch installs nothing", async () => {
    const { temp, service } = setup("0.2.0", { integrity: { expectedSha256: "0".repeat(64) } });
    seedConfigs(temp);
    const error = (await configure(service, ["claude"]).catch((caught: unknown) => caught)) as FlameoxError;
    expect(error.code).toBe("ARTIFACT_INTEGRITY_FAILED");
    expect(existsSync(join(service.store.runtimesDirectory, "0.2.0"))).toBe(false);
    expect(read(pathOf(temp, "claude"))).not.toContain("flameox");
  });
});
