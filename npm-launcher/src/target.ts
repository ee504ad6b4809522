/**
 * Which release asset this machine needs. The supported platforms are the build's target table
 * (dist-targets/targets.json), bundled into the launcher at build time.
 */
import { targetId, targets } from "../../dist-targets/targets.ts";
import { LauncherError } from "./errors.ts";

export type TargetProbe = { platform?: string; arch?: string; glibc?: string | null | undefined };

function detectGlibc(): string | undefined {
  if (process.platform !== "linux") return undefined;
  try {
    const report = process.report?.getReport?.() as { header?: { glibcVersionRuntime?: string } } | undefined;
    return report?.header?.glibcVersionRuntime;
  } catch {
    return undefined;
  }
}

export const supportedTargets: readonly string[] = targets.map((target) => target.id);

/** Target id of this machine, or a LauncherError naming what to do instead. */
export function resolveTarget({ platform = process.platform, arch = process.arch, glibc = detectGlibc() }: TargetProbe = {}): string {
  const id = targetId(platform, arch);
  if (!supportedTargets.includes(id)) {
    throw new LauncherError(
      `flameox has no prebuilt binary for ${platform}-${arch}. Supported: ${supportedTargets.join(", ")}. Build from source (bun scripts/build.ts) on this machine instead.`,
    );
  }
  if (platform === "linux" && !glibc) {
    throw new LauncherError(
      "flameox's Linux binaries need glibc; this system looks like musl (e.g. Alpine). Use a glibc-based distribution or container (Debian, Ubuntu, Fedora), or build from source.",
    );
  }
  return id;
}
