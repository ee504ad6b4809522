import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomically } from "./atomic-file.ts";
import { treeFacts } from "./leftovers.ts";
import type { Workspace } from "./workspace.ts";

/**
 * quarantine/<id>/ keeps partial outputs of runs whose flameox process died, for a person to look at
 * or restore (flameox recover --quarantine ID registers them with their run). `manifest.json` is
 * written before the move (state `moving`) and updated after it (`quarantined`), so an interrupted
 * move can be finished. The quarantine is bounded: recovery removes the oldest entries beyond
 * `quarantineBounds` (count, bytes, age), so repeated crashes cannot fill the disk.
 */
export const quarantineBounds = { maxEntries: 32, maxBytes: 2 * 1024 ** 3, maxAgeMs: 14 * 24 * 3600 * 1000 } as const;

export type QuarantineManifest = {
  schema_version: 1;
  quarantine_id: string;
  state: "moving" | "quarantined";
  reason: string;
  run_id: string | null;
  /** Workspace-relative path the object was moved from. */
  origin: string;
  created_at: string;
};

export type QuarantineEntry = QuarantineManifest & { bytes: number; created_ms: number };

const quarantineIdPattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export function isQuarantineId(id: string): boolean {
  return quarantineIdPattern.test(id);
}

/** Moves a workspace folder or file into quarantine/<id>/object. */
export function quarantinePath(workspace: Workspace, entry: { id: string; origin: string; reason: string; runId: string | null }): void {
  const folder = workspace.path("quarantine", entry.id);
  mkdirSync(folder, { recursive: true });
  const manifest: QuarantineManifest = {
    schema_version: 1,
    quarantine_id: entry.id,
    state: "moving",
    reason: entry.reason,
    run_id: entry.runId,
    origin: entry.origin,
    created_at: new Date().toISOString(),
  };
  writeFileAtomically(join(folder, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  finishMove(workspace, manifest);
}

/** Completes a move that a crash interrupted (the origin still there, the object not yet). */
export function resumeQuarantineMoves(workspace: Workspace): string[] {
  const resumed: string[] = [];
  for (const entry of listQuarantine(workspace)) {
    if (entry.state !== "moving") continue;
    finishMove(workspace, entry);
    resumed.push(entry.quarantine_id);
  }
  return resumed;
}

function finishMove(workspace: Workspace, manifest: QuarantineManifest): void {
  const folder = workspace.path("quarantine", manifest.quarantine_id);
  const object = join(folder, "object");
  if (!existsSync(object) && existsSync(workspace.path(manifest.origin))) renameSync(workspace.path(manifest.origin), object);
  writeFileAtomically(join(folder, "manifest.json"), `${JSON.stringify({ ...manifest, state: "quarantined" }, null, 2)}\n`);
}

/** Every entry, oldest first. A folder without a readable manifest (an older layout) is described from its files. */
export function listQuarantine(workspace: Workspace): QuarantineEntry[] {
  const root = workspace.path("quarantine");
  if (!existsSync(root)) return [];
  const found: QuarantineEntry[] = [];
  for (const id of readdirSync(root)) {
    const folder = join(root, id);
    const facts = treeFacts(folder);
    let manifest: QuarantineManifest;
    try {
      manifest = JSON.parse(readFileSync(join(folder, "manifest.json"), "utf8")) as QuarantineManifest;
    } catch {
      manifest = {
        schema_version: 1,
        quarantine_id: id,
        state: "quarantined",
        reason: "partial outputs",
        run_id: id.startsWith("run-") ? id.slice("run-".length) : null,
        origin: `staging/${id}`,
        created_at: new Date(facts.modified_ms).toISOString(),
      };
    }
    const created = Date.parse(manifest.created_at);
    found.push({ ...manifest, quarantine_id: id, bytes: facts.bytes, created_ms: Number.isFinite(created) ? created : facts.modified_ms });
  }
  return found.sort((left, right) => left.created_ms - right.created_ms || left.quarantine_id.localeCompare(right.quarantine_id));
}

/** The entries to remove so the rest is within the bounds: too old, then the oldest until count and bytes fit. */
export function beyondQuarantineBounds(entries: readonly QuarantineEntry[], nowMs: number): QuarantineEntry[] {
  const doomed = new Set(entries.filter((entry) => nowMs - entry.created_ms > quarantineBounds.maxAgeMs));
  let kept = entries.filter((entry) => !doomed.has(entry));
  let bytes = kept.reduce((sum, entry) => sum + entry.bytes, 0);
  while (kept.length > 0 && (kept.length > quarantineBounds.maxEntries || bytes > quarantineBounds.maxBytes)) {
    const oldest = kept[0]!;
    doomed.add(oldest);
    bytes -= oldest.bytes;
    kept = kept.slice(1);
  }
  return entries.filter((entry) => doomed.has(entry));
}

export function removeQuarantine(workspace: Workspace, id: string): void {
  rmSync(workspace.path("quarantine", id), { recursive: true, force: true });
}

/** The quarantined object's files, as paths relative to its object folder (an older layout keeps them beside nothing). */
export function quarantineObjectFolder(workspace: Workspace, id: string): string {
  const folder = workspace.path("quarantine", id);
  return existsSync(join(folder, "object")) ? join(folder, "object") : folder;
}
