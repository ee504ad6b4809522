/**
 * Managed provider environments: version-addressed folders under the user's data folder
 * (`$XDG_DATA_HOME/flameox/providers/<name>/<version>/`), shared by every project of that user and never
 * inside a workspace, a workload's environment or flameox's own. An environment is built in a staging
 * folder and appears at its final path by one rename, so a cancelled or crashed install leaves nothing
 * half-made there; its receipt says whether a real probe verified it.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { randomHex } from "../domain/random.ts";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { writeFileAtomically } from "./atomic-file.ts";

/**
 * flameox's per-user data folder: XDG_DATA_HOME/flameox when XDG_DATA_HOME is set (on every platform,
 * so tests can point it at a temporary folder), else the platform's usual place.
 */
export function userDataRoot(env: Record<string, string | undefined> = process.env): string {
  const xdg = env.XDG_DATA_HOME?.trim();
  if (xdg) return join(xdg, "flameox");
  const home = env.HOME?.trim() || homedir() || tmpdir();
  if (process.platform === "darwin") return join(home, "Library", "Application Support", "flameox");
  if (process.platform === "win32") return join(env.LOCALAPPDATA?.trim() || join(home, "AppData", "Local"), "flameox");
  return join(home, ".local", "share", "flameox");
}

/** What a verified provider environment holds and how it was checked; written by setup, read by discovery. */
export type ProviderReceipt = {
  schema_version: 1;
  provider: string;
  version: string;
  requirements: string[];
  /** Installed distribution versions, as the environment's own interpreter reports them. */
  distributions: Record<string, string>;
  usage: string;
  /** The interpreter the environment was made from, and its version. */
  base_python: { executable: string; version: string };
  installed_at: string;
  operation_id: string;
  flameox_version: string;
  /** Null until the real probe passed at the environment's final path. */
  verification: { verified_at: string; version_output: string; probe: string; permission_status: string } | null;
};

export type StagingOwner = { pid: number; start_time: string | null; boot_id: string | null; operation_id: string };

export type StagingArea = {
  /** The folder that holds everything of one install attempt. */
  root: string;
  /** The environment under construction; renamed to its final path when complete. */
  environment: string;
  /** Probe outputs and process logs. */
  scratch: string;
};

const receiptName = "flameox-provider.json";
const ownerName = "owner.json";

export class ProviderEnvironments {
  readonly root: string;

  constructor(dataRoot: string = userDataRoot()) {
    this.root = join(dataRoot, "providers");
  }

  environmentPath(name: string, version: string): string {
    return join(this.root, name, version);
  }

  /** How the environment is named to agents: relative to flameox's data folder, never a host path. */
  label(name: string, version: string): string {
    return `providers/${name}/${version}`;
  }

  receipt(name: string, version: string): ProviderReceipt | null {
    const path = join(this.environmentPath(name, version), receiptName);
    try {
      const receipt = JSON.parse(readFileSync(path, "utf8")) as ProviderReceipt;
      return receipt.schema_version === 1 && receipt.provider === name && receipt.version === version ? receipt : null;
    } catch {
      return null;
    }
  }

  writeReceipt(environment: string, receipt: ProviderReceipt): void {
    writeFileAtomically(join(environment, receiptName), `${JSON.stringify(receipt, null, 2)}\n`);
  }

  /** A fresh staging area named for its owner, so a later sweep can tell a live install from a leftover. */
  createStaging(name: string, version: string, owner: StagingOwner): StagingArea {
    const root = join(this.stagingRoot(), `${name}-${version}-${randomHex(6)}`);
    mkdirSync(join(root, "scratch"), { recursive: true });
    writeFileAtomically(join(root, ownerName), `${JSON.stringify(owner)}\n`);
    return { root, environment: join(root, "environment"), scratch: join(root, "scratch") };
  }

  /**
   * Moves a complete environment to its final path in one rename. "exists" when another install got
   * there first (a rename onto a non-empty folder fails), in which case the staged copy is left for discard.
   */
  promote(staging: StagingArea, name: string, version: string): "promoted" | "exists" {
    const target = this.environmentPath(name, version);
    mkdirSync(join(this.root, name), { recursive: true });
    if (existsSync(target)) return "exists";
    try {
      renameSync(staging.environment, target);
      return "promoted";
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOTEMPTY" || code === "EEXIST") return "exists";
      throw error;
    }
  }

  /** Takes an environment off its final path at once (a rename), then deletes it. True when nothing is left. */
  withdraw(name: string, version: string): boolean {
    const target = this.environmentPath(name, version);
    if (!existsSync(target)) return true;
    const aside = join(this.stagingRoot(), `withdrawn-${name}-${version}-${randomHex(6)}`);
    mkdirSync(this.stagingRoot(), { recursive: true });
    renameSync(target, aside);
    return removeTree(aside);
  }

  discard(staging: StagingArea): boolean {
    return removeTree(staging.root);
  }

  /** Staging areas with their owners; an area without a readable owner is reported with a null owner. */
  stagingAreas(): { root: string; owner: StagingOwner | null }[] {
    const root = this.stagingRoot();
    if (!existsSync(root)) return [];
    return readdirSync(root).map((entry) => {
      const path = join(root, entry);
      let owner: StagingOwner | null = null;
      try {
        owner = JSON.parse(readFileSync(join(path, ownerName), "utf8")) as StagingOwner;
      } catch {
        owner = null;
      }
      return { root: path, owner };
    });
  }

  /** Removes the staging areas `isLeftover` picks (their owner is gone); returns whether all of them went. */
  sweep(isLeftover: (area: { root: string; owner: StagingOwner | null; ageMs: number }) => boolean): boolean {
    let clean = true;
    for (const area of this.stagingAreas()) {
      let ageMs = 0;
      try {
        ageMs = Date.now() - statSync(area.root).mtimeMs;
      } catch {
        continue;
      }
      if (isLeftover({ ...area, ageMs }) && !removeTree(area.root)) clean = false;
    }
    return clean;
  }

  private stagingRoot(): string {
    return join(this.root, ".staging");
  }
}

function removeTree(path: string): boolean {
  try {
    rmSync(path, { recursive: true, force: true, maxRetries: 3 });
  } catch {
    // Reported through the return value: cleanup_status says "incomplete".
  }
  return !existsSync(path);
}
