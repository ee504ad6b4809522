/**
 * Run as root against a user's HOME (`sudo` keeping HOME), setup keeps every file's owner, group and
 * mode, and what it creates gets the owner of the folder it is created in. Run as an ordinary user
 * without write access, it fails with a typed refusal naming the client and the path.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runSetupCli as run, setupEnvironmentFor, temporaryHomes } from "./helpers.ts";

setDefaultTimeout(120_000);

const asRoot = typeof process.getuid === "function" && process.getuid() === 0;
const user = { uid: 12345, gid: 12345 };
const makeHome = temporaryHomes();

const ownership = (path: string) => {
  const stats = statSync(path);
  return { uid: stats.uid, gid: stats.gid, mode: stats.mode & 0o7777 };
};

describe("ownership and modes", () => {
  test.skipIf(!asRoot)("as root, a config owned by another uid keeps owner, group and mode through connect and disconnect", () => {
    const temp = makeHome();
    const env = setupEnvironmentFor(temp);
    const claude = join(temp.home, ".claude.json");
    const original = '{\n  "numStartups": 7\n}\n';
    writeFileSync(claude, original);
    chownSync(claude, user.uid, user.gid);
    chmodSync(claude, 0o640);
    // Folders the user owns: what setup creates inside them must be the user's too.
    for (const folder of [join(temp.home, ".codex"), join(temp.home, ".local"), join(temp.home, ".local", "share")]) {
      mkdirSync(folder, { recursive: true });
      chownSync(folder, user.uid, user.gid);
    }

    const connected = run(env, ["--claude", "--codex", "--yes", "--json"]);
    expect(connected.code, connected.stderr).toBe(0);
    expect(ownership(claude)).toEqual({ ...user, mode: 0o640 });
    expect(JSON.parse(readFileSync(claude, "utf8")).mcpServers.flameox).toBeDefined();
    const codex = join(temp.home, ".codex", "config.toml");
    expect(ownership(codex)).toEqual({ ...user, mode: 0o600 });
    const data = join(temp.home, ".local", "share", "flameox");
    for (const path of [
      data,
      join(data, "active"),
      join(data, "runtimes"),
      join(data, "runtimes", "0.2.0"),
      join(data, "runtimes", "0.2.0", "flameox"),
    ]) {
      expect({ path, uid: statSync(path).uid, gid: statSync(path).gid }).toEqual({ path, ...user });
    }

    const removed = run(env, ["--remove", "--claude", "--codex", "--yes", "--json"]);
    expect(removed.code, removed.stderr).toBe(0);
    expect(readFileSync(claude, "utf8")).toBe(original);
    expect(ownership(claude)).toEqual({ ...user, mode: 0o640 });
    // The Codex config did not exist before setup created it, so disconnecting removes it again.
    expect(existsSync(codex)).toBe(false);
  });

  test.skipIf(!asRoot)("as an ordinary user without write access, a typed refusal names the client and the path", () => {
    const temp = makeHome();
    const nobody = { uid: 65534, gid: 65534 };
    chmodSync(temp.home, 0o755);
    const env = setupEnvironmentFor(temp);
    chmodSync(join(temp.home, "downloads"), 0o755);
    for (const folder of [join(temp.home, ".local"), join(temp.home, ".local", "share")]) {
      mkdirSync(folder, { recursive: true });
      chownSync(folder, nobody.uid, nobody.gid);
    }
    // ~/.cursor belongs to root: the user can read it but not write in it.
    mkdirSync(join(temp.home, ".cursor"), { mode: 0o755 });
    const prefix = ["setpriv", `--reuid=${nobody.uid}`, `--regid=${nobody.gid}`, "--clear-groups"];
    const result = run({ ...env, HOME: realpathSync(temp.home) }, ["--cursor", "--yes", "--json"], prefix);
    expect(result.code, result.stdout + result.stderr).toBe(9);
    const error = JSON.parse(result.stdout).error;
    expect(error.code).toBe("EXECUTION_REFUSED");
    expect(error.message).toContain("Cursor");
    // Named once, as the prefix, not again after the path.
    expect(error.message.split("Cursor").length - 1).toBe(1);
    expect(error.message).toContain(join(temp.home, ".cursor", "mcp.json"));
    expect(error.message).toContain("permission denied");
    expect(error.remediation.join(" ")).toContain("write access");
    expect(existsSync(join(temp.home, ".local", "share", "flameox", "setup-journal.json"))).toBe(false);
  });
});
