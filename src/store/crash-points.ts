/**
 * Named publication boundaries where a test can make this process die at once, as a power cut or a
 * kill -9 would: with FLAMEOX_TEST_CRASH_AT=<boundary> in its environment the process sends itself
 * SIGKILL on reaching that boundary. Compiled into every build so the shipped binary is what the
 * crash tests exercise; without the variable each point is a single comparison. The broker never
 * passes the variable to a workload (it is not on the inherited allowlist).
 */
export const crashBoundaries = [
  /** The collector has exited; its outputs are still only in the run's staging folder. */
  "capture_collected",
  /** A file has been copied and hashed into this process's staging, not yet placed. */
  "artifact_staged",
  /** An evidence bundle's Parquet files are finished in staging, not yet placed. */
  "bundle_finished",
  /** Inside the publishing transaction: an artifact object has been renamed into artifacts/, nothing committed. */
  "artifact_placed",
  /** Inside the publishing transaction: a bundle folder has been renamed into evidence/, nothing committed. */
  "bundle_placed",
  /** Inside a write transaction: the folders it changed are synced (StateDatabase.syncBeforeCommit), nothing committed. */
  "placements_synced",
  /** The transaction has committed; the staging that fed it is not yet removed. */
  "published",
] as const;

export type CrashBoundary = (typeof crashBoundaries)[number];

export const crashVariable = "FLAMEOX_TEST_CRASH_AT";

export function crashPoint(boundary: CrashBoundary): void {
  if (process.env[crashVariable] === boundary) process.kill(process.pid, "SIGKILL");
}
