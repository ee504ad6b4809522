/**
 * The one target table (targets.json beside this file) and the names derived from it. The build, the
 * release script, the npm launcher (bundled, so its platform list is this table at build time) and
 * `setup --checksums` all read it from here.
 */
import table from "./targets.json" with { type: "json" };

export type Target = {
  id: string;
  bun_target: string;
  platform: string;
  arch: string;
  duckdb_package: string;
  duckdb_library: string;
  executable: string;
};

export const targets: readonly Target[] = table.targets;

/** Target id of a platform and architecture as Node names them (`win32` is spelled `windows`). */
export function targetId(platform: string, arch: string): string {
  return `${platform === "win32" ? "windows" : platform}-${arch}`;
}

/** The release asset of a target: what SHA256SUMS and the npm launcher's checksum table list. */
export function assetName(id: string): string {
  const target = targets.find((candidate) => candidate.id === id);
  return `flameox-${id}${(target?.executable ?? "").endsWith(".exe") || id.startsWith("windows-") ? ".exe" : ""}`;
}

export function targetFor(platform: string, arch: string): Target | undefined {
  return targets.find((target) => target.platform === platform && target.arch === arch);
}
