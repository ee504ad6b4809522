/**
 * The previous flameox, for benchmarks to measure against in the same run: the binary built from
 * BENCH_PREVIOUS_COMMIT (default a0ff272, main just before the performance work of issue 16) in a cached folder
 * under .test-output/bench/ (git archive of that commit, this checkout's node_modules, its own
 * build script). Returns null, with the reason, when it cannot be built here.
 */
import { existsSync, mkdirSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { benchOutput, repositoryRoot } from "./measure.ts";

export const previousCommit = process.env.BENCH_PREVIOUS_COMMIT ?? "a0ff272";

export function previousFlameox(): { binary: string; commit: string } | { binary: null; error: string } {
  const folder = join(benchOutput, `flameox-${previousCommit}`);
  const binary = join(folder, "dist", "flameox");
  if (existsSync(binary)) return { binary, commit: previousCommit };
  rmSync(folder, { recursive: true, force: true });
  mkdirSync(folder, { recursive: true });
  const archive = Bun.spawnSync(["sh", "-c", `git -C "${repositoryRoot}" archive ${previousCommit} | tar -x -C "${folder}"`], {
    stderr: "pipe",
  });
  if (archive.exitCode !== 0)
    return { binary: null, error: `git archive ${previousCommit} failed: ${archive.stderr.toString().slice(0, 300)}` };
  symlinkSync(join(repositoryRoot, "node_modules"), join(folder, "node_modules"));
  const build = Bun.spawnSync([join(repositoryRoot, "node_modules", ".bin", "bun"), "scripts/build.ts"], {
    cwd: folder,
    stdout: "pipe",
    stderr: "pipe",
  });
  if (build.exitCode !== 0 || !existsSync(binary)) {
    return {
      binary: null,
      error: `building ${previousCommit} failed: ${(build.stderr.toString() || build.stdout.toString()).slice(0, 300)}`,
    };
  }
  return { binary, commit: previousCommit };
}
