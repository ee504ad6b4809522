/**
 * Version-addressed runtimes under the user data folder:
 *   <data>/runtimes/<version>/flameox[.exe]   the executable clients launch
 *   <data>/runtimes/<version>/runtime.json    commit marker (version, target, sha256, size, source)
 *   <data>/active                             the active pointer, replaced atomically inside the setup journal
 * A runtime is staged in `runtimes/.staging-*`, its copy checked against the source's sha256, verified
 * (`--version` + MCP handshake), then renamed into place. Existing versions are reused only when their
 * bytes still match their record and they still pass verification. A damaged one (executable gone or
 * not executable, bytes modified, record damaged, folder moved) is never deleted: it is moved to
 * `runtimes/.quarantine/` and the version is installed again from a source of the same version.
 */
import { randomBytes } from "node:crypto";
import {
  chownSync,
  closeSync,
  existsSync,
  fchmodSync,
  fsyncSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { FlameoxError } from "../domain/errors.ts";
import { dataRoot, joinFor, type SetupEnvironment } from "./environment.ts";
import { ensureDirectory, fileError, ownerForNewFile, sha256Hex, writeOwnFile } from "./files.ts";
import {
  checkExpected,
  compareVersions,
  hostTargetId,
  integrityFailure,
  invalidVersion,
  isCanonicalVersion,
  type IntegrityExpectation,
  type RuntimeSource,
} from "./runtime-source.ts";
import { verifyRuntime, type RuntimeCheck } from "./runtime-verify.ts";

export {
  compareVersions,
  isCanonicalVersion,
  resolveRuntimeSource,
  type IntegrityExpectation,
  type RuntimeSource,
} from "./runtime-source.ts";

export type RuntimeRecord = {
  schema_version: 1;
  version: string;
  target: string;
  sha256: string;
  size: number;
  source: "self" | "file";
  executable: string;
};

export type ActivePointer = { schema_version: 1; version: string; executable: string; sha256: string };

/** What an installed version looks like on disk; `damaged` says why it cannot be used as it is. */
export type RuntimeHealth =
  | { state: "absent" }
  | { state: "intact"; record: RuntimeRecord }
  | { state: "damaged"; reason: string; record: RuntimeRecord | null };

export type InstallOutcome = { record: RuntimeRecord; installed: boolean; repaired: boolean; quarantined: string | null };

type Check = (executable: string, version: string) => Promise<RuntimeCheck>;

export class RuntimeStore {
  readonly root: string;
  readonly runtimesDirectory: string;
  readonly activePath: string;
  readonly lockPath: string;
  readonly journalPath: string;
  readonly connectionsPath: string;
  private readonly executableName: string;

  constructor(private readonly environment: SetupEnvironment) {
    this.root = dataRoot(environment);
    this.runtimesDirectory = joinFor(environment.platform, this.root, "runtimes");
    this.activePath = joinFor(environment.platform, this.root, "active");
    this.lockPath = joinFor(environment.platform, this.root, "setup.lock");
    this.journalPath = joinFor(environment.platform, this.root, "setup-journal.json");
    this.connectionsPath = joinFor(environment.platform, this.root, "connections.json");
    this.executableName = environment.platform === "win32" ? "flameox.exe" : "flameox";
  }

  executablePath(version: string): string {
    if (!isCanonicalVersion(version)) throw invalidVersion(version);
    return joinFor(this.environment.platform, this.runtimesDirectory, version, this.executableName);
  }

  private recordPath(version: string): string {
    return joinFor(this.environment.platform, this.runtimesDirectory, version, "runtime.json");
  }

  versionDirectory(version: string): string {
    return joinFor(this.environment.platform, this.runtimesDirectory, version);
  }

  private parseRecord(version: string): RuntimeRecord | null {
    try {
      const record = JSON.parse(readFileSync(this.recordPath(version), "utf8")) as RuntimeRecord;
      const valid =
        record.schema_version === 1 &&
        record.version === version &&
        record.executable === this.executablePath(version) &&
        /^[0-9a-f]{64}$/.test(record.sha256);
      return valid ? record : null;
    } catch {
      return null;
    }
  }

  /** A valid record whose executable exists (bytes not checked: see health()). */
  readRecord(version: string): RuntimeRecord | null {
    if (!isCanonicalVersion(version)) return null;
    const record = this.parseRecord(version);
    return record && existsSync(record.executable) ? record : null;
  }

  /** Whether `version` is installed and usable as it is. Hashes the executable. */
  health(version: string): RuntimeHealth {
    if (!isCanonicalVersion(version) || !existsSync(this.versionDirectory(version))) return { state: "absent" };
    const record = this.parseRecord(version);
    if (!record) return { state: "damaged", reason: "its runtime.json is missing or damaged", record: null };
    let stats;
    try {
      stats = statSync(record.executable);
    } catch {
      return { state: "damaged", reason: `its executable ${record.executable} is missing`, record };
    }
    if (this.environment.platform !== "win32" && (stats.mode & 0o111) === 0) {
      return { state: "damaged", reason: `its executable ${record.executable} is not executable`, record };
    }
    const actual = sha256Hex(readFileSync(record.executable));
    if (actual !== record.sha256) {
      return { state: "damaged", reason: `its executable was modified (sha256 ${actual}, recorded ${record.sha256})`, record };
    }
    return { state: "intact", record };
  }

  /** Installed, intact versions, newest first. Anything else under runtimes/ is ignored. */
  installedVersions(): RuntimeRecord[] {
    let names: string[];
    try {
      names = readdirSync(this.runtimesDirectory);
    } catch {
      return [];
    }
    return names
      .filter(isCanonicalVersion)
      .map((name) => this.readRecord(name))
      .filter((record): record is RuntimeRecord => record !== null)
      .sort((left, right) => compareVersions(right.version, left.version));
  }

  readActive(): ActivePointer | null {
    let text: string;
    try {
      text = readFileSync(this.activePath, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw error;
    }
    let pointer: ActivePointer;
    try {
      pointer = JSON.parse(text) as ActivePointer;
    } catch (cause) {
      throw integrityFailure(
        `The active runtime pointer ${this.activePath} is not valid JSON.`,
        ["Rerun `flameox setup --refresh --yes`: it replaces the pointer."],
        { cause: String(cause) },
      );
    }
    const keys = Object.keys(pointer ?? {})
      .sort()
      .join(",");
    if (
      keys !== "executable,schema_version,sha256,version" ||
      pointer.schema_version !== 1 ||
      !isCanonicalVersion(pointer.version) ||
      pointer.executable !== this.executablePath(pointer.version)
    ) {
      throw integrityFailure(`The active runtime pointer ${this.activePath} is damaged.`, [
        "Rerun `flameox setup --refresh --yes`: it replaces the pointer.",
      ]);
    }
    return pointer;
  }

  activePointerText(record: Pick<RuntimeRecord, "version" | "executable" | "sha256">): string {
    const pointer: ActivePointer = { schema_version: 1, version: record.version, executable: record.executable, sha256: record.sha256 };
    return `${JSON.stringify(pointer, null, 2)}\n`;
  }

  /**
   * Makes `source.version` installed and verified. An intact install of the same bytes is re-verified
   * and reused; a damaged one (or one that fails verification) is quarantined and installed again.
   * An intact install of *different* bytes for the same version is refused.
   */
  async install(source: RuntimeSource, integrity: IntegrityExpectation, check: Check = verifyRuntime): Promise<InstallOutcome> {
    if (!isCanonicalVersion(source.version)) throw invalidVersion(source.version);
    let bytes: Uint8Array;
    try {
      bytes = new Uint8Array(readFileSync(source.path));
    } catch (error) {
      throw fileError(error, "read", source.path, "setup");
    }
    const digest = sha256Hex(bytes);
    checkExpected(source, digest, integrity);
    const health = this.health(source.version);
    if (health.state === "intact") {
      if (health.record.sha256 !== digest) {
        throw integrityFailure(
          `Runtime ${source.version} is already installed with different bytes (sha256 ${health.record.sha256}, this binary ${digest}).`,
          [`Move ${this.versionDirectory(source.version)} aside if you trust this binary, then rerun flameox setup.`],
          { installed: health.record.sha256, source: digest },
        );
      }
      try {
        await check(health.record.executable, health.record.version);
        return { record: health.record, installed: false, repaired: false, quarantined: null };
      } catch (error) {
        if (!(error instanceof FlameoxError) || error.code !== "PROCESS_FAILED") throw error;
        // It has its recorded bytes but no longer works (a changed library, a lost mode): reinstall.
      }
    }
    const quarantined = health.state === "absent" ? null : this.quarantine(source.version);
    try {
      const record = await this.installFresh(source, bytes, digest, check);
      return { record, installed: true, repaired: quarantined !== null, quarantined };
    } catch (error) {
      // The new copy failed: put the old folder back, so a failed repair changes nothing on disk.
      if (quarantined !== null && !existsSync(this.versionDirectory(source.version)))
        renameSync(quarantined, this.versionDirectory(source.version));
      throw error;
    }
  }

  /** Moves a version's folder to runtimes/.quarantine/ (nothing is deleted). Returns where it went. */
  quarantine(version: string): string {
    const directory = joinFor(this.environment.platform, this.runtimesDirectory, ".quarantine");
    ensureDirectory(directory, "setup");
    const stamp = new Date().toISOString().replace(/[:.]/g, "-");
    const destination = joinFor(this.environment.platform, directory, `${version}-${stamp}-${randomBytes(3).toString("hex")}`);
    renameSync(this.versionDirectory(version), destination);
    return destination;
  }

  private async installFresh(source: RuntimeSource, bytes: Uint8Array, digest: string, check: Check): Promise<RuntimeRecord> {
    this.removeStaleStaging();
    ensureDirectory(this.runtimesDirectory, "setup");
    const staging = joinFor(this.environment.platform, this.runtimesDirectory, `.staging-${randomBytes(6).toString("hex")}`);
    ensureDirectory(staging, "setup");
    try {
      const stagedExecutable = joinFor(this.environment.platform, staging, this.executableName);
      const descriptor = openSync(stagedExecutable, "wx", 0o755);
      try {
        let offset = 0;
        while (offset < bytes.byteLength) offset += writeSync(descriptor, bytes, offset, bytes.byteLength - offset);
        fsyncSync(descriptor);
        fchmodSync(descriptor, 0o755);
      } finally {
        closeSync(descriptor);
      }
      const owner = ownerForNewFile(staging);
      if (owner) chownSync(stagedExecutable, owner.uid, owner.gid);
      const copied = sha256Hex(readFileSync(stagedExecutable));
      if (copied !== digest)
        throw integrityFailure(`The staged copy of ${source.path} does not match its source.`, ["Check the disk and rerun flameox setup."]);
      if (this.environment.platform === "darwin")
        Bun.spawnSync(["xattr", "-d", "com.apple.quarantine", stagedExecutable], { stdout: "ignore", stderr: "ignore" });
      await check(stagedExecutable, source.version);
      const record: RuntimeRecord = {
        schema_version: 1,
        version: source.version,
        target: hostTargetId(),
        sha256: digest,
        size: bytes.byteLength,
        source: source.kind,
        executable: this.executablePath(source.version),
      };
      writeOwnFile(joinFor(this.environment.platform, staging, "runtime.json"), `${JSON.stringify(record, null, 2)}\n`, 0o644);
      renameSync(staging, this.versionDirectory(source.version));
      return record;
    } catch (error) {
      rmSync(staging, { recursive: true, force: true });
      throw fileError(error, "write", this.versionDirectory(source.version), "setup");
    }
  }

  /** An installed runtime is used again only when it is intact and still passes verification. */
  async reverify(record: RuntimeRecord, check: Check = verifyRuntime): Promise<RuntimeCheck> {
    const health = this.health(record.version);
    if (health.state !== "intact" || health.record.sha256 !== record.sha256) {
      throw integrityFailure(
        `Runtime ${record.version} at ${record.executable} ${health.state === "damaged" ? health.reason.replace(/^its /, "is damaged: its ") : "is not installed"}.`,
        [
          `Rerun setup with the flameox ${record.version} binary (\`npx flameox@${record.version} setup --refresh --yes\`), which repairs it.`,
        ],
      );
    }
    return check(record.executable, record.version);
  }

  private removeStaleStaging(): void {
    let names: string[] = [];
    try {
      names = readdirSync(this.runtimesDirectory);
    } catch {
      return;
    }
    for (const name of names) {
      if (name.startsWith(".staging-"))
        rmSync(joinFor(this.environment.platform, this.runtimesDirectory, name), { recursive: true, force: true });
    }
  }
}
