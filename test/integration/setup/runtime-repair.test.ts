/**
 * A runtime setup installed, damaged five ways (executable deleted, runtime.json damaged, data folder
 * or version folder moved, chmod -x, bytes modified): `--verify` names the damage, the remedy it
 * prints (`flameox setup --refresh --yes` from the same version) restores a verified runtime, moves
 * the damaged copy to quarantine instead of deleting it, re-points every client, and `--verify` is
 * green again.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { appendFileSync, chmodSync, existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseToml } from "smol-toml";
import { runSetupCli as run, setupEnvironmentFor, temporaryHomes } from "./helpers.ts";

setDefaultTimeout(180_000);

const makeHome = temporaryHomes();

type Damage = {
  name: string;
  expect: RegExp;
  quarantined: boolean;
  damage(paths: { data: string; version: string; executable: string }): void;
};

const damages: Damage[] = [
  { name: "executable deleted", expect: /missing|not installed/, quarantined: true, damage: ({ executable }) => rmSync(executable) },
  {
    name: "runtime.json damaged",
    expect: /not installed|runtime\.json/,
    quarantined: true,
    damage: ({ version }) => writeFileSync(join(version, "runtime.json"), "{ damaged"),
  },
  {
    name: "data folder moved",
    expect: /No active flameox runtime/,
    quarantined: false,
    damage: ({ data }) => renameSync(data, `${data}.moved`),
  },
  {
    name: "version folder moved",
    expect: /not installed/,
    quarantined: false,
    damage: ({ version }) => renameSync(version, `${version}.moved`),
  },
  { name: "chmod -x", expect: /not executable/, quarantined: true, damage: ({ executable }) => chmodSync(executable, 0o644) },
  {
    name: "bytes modified",
    expect: /modified/,
    quarantined: true,
    damage: ({ executable }) => appendFileSync(executable, "\n# tampered\n"),
  },
];

describe("setup repairs the runtime it installed", () => {
  for (const damage of damages) {
    test(`${damage.name}: --verify detects it; rerunning setup restores a verified runtime and re-points every client`, () => {
      const temp = makeHome();
      const env = setupEnvironmentFor(temp);
      writeFileSync(join(temp.home, ".claude.json"), '{"numStartups": 1}\n');
      const connected = run(env, ["--claude", "--codex", "--cursor", "--yes", "--json"]);
      expect(connected.code, connected.stderr).toBe(0);
      const executable = JSON.parse(connected.stdout).executable as string;
      const data = join(temp.env.XDG_DATA_HOME!, "flameox");
      const version = join(data, "runtimes", "0.2.0");
      expect(run(env, ["--verify"]).code).toBe(0);

      damage.damage({ data, version, executable });
      const broken = run(env, ["--verify", "--json"]);
      expect(broken.code).toBe(1);
      const problems = JSON.parse(broken.stdout).problems.join("\n");
      expect(problems).toMatch(damage.expect);

      const repaired = run(env, ["--refresh", "--yes", "--json"]);
      expect(repaired.code, repaired.stdout + repaired.stderr).toBe(0);
      const report = JSON.parse(repaired.stdout);
      expect(report.executable).toBe(executable);
      expect(report.runtime_repaired).toBe(damage.quarantined);
      if (damage.quarantined) {
        expect(report.quarantined).toStartWith(join(data, "runtimes", ".quarantine", "0.2.0-"));
        expect(readdirSync(join(data, "runtimes", ".quarantine"))).toHaveLength(1);
      }
      const verified = run(env, ["--verify", "--json"]);
      expect(verified.code, verified.stdout).toBe(0);
      const verify = JSON.parse(verified.stdout);
      expect(verify.runtime).toEqual({ version_ok: true, handshake_ok: true, tools: 1, sha256_ok: true });
      expect(verify.clients.map((client: { client: string; state: string }) => [client.client, client.state])).toEqual([
        ["claude", "current"],
        ["cursor", "current"],
        ["codex", "current"],
      ]);
      expect(JSON.parse(readFileSync(join(temp.home, ".claude.json"), "utf8")).mcpServers.flameox.command).toBe(executable);
      expect((parseToml(readFileSync(join(temp.home, ".codex", "config.toml"), "utf8")) as any).mcp_servers.flameox.command).toBe(
        executable,
      );
      expect(existsSync(executable)).toBe(true);
    });
  }
});
