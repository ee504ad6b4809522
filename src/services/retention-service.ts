import { existsSync, readdirSync } from "node:fs";
import { digestOf } from "../domain/canonical-json.ts";
import { corpusHead } from "../store/corpus.ts";
import { type Leftover, treeFacts } from "../store/leftovers.ts";
import { processStagingOwner, processStagingPrefix } from "../store/process-staging.ts";
import { isSupersededBundle, retentionRoots, supersededBundleIds } from "../store/retention-roots.ts";
import {
  findTrashManifest,
  moveToTrash,
  newTrashId,
  purgeTrash,
  restoreFromTrash,
  type RetentionRoot,
  type TrashEntry,
} from "../store/trash.ts";
import type { Workspace } from "../store/workspace.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";
import { flameoxVersion } from "../version.ts";
import type { RecoveryService } from "./recovery-service.ts";

/** How long trashed paths stay restorable before a purge may delete them. */
export const trashRecoveryWindowHours = 24;

export type GcEntry = TrashEntry & { reason: string };

export type GcPlan = {
  schema_version: 1;
  mode: "dry_run" | "apply";
  /** Digest of the corpus head and the exact entries: the same workspace gives the same plan. */
  plan_id: string;
  corpus_commit_id: string;
  minimum_age_hours: number;
  cutoff: string;
  entries: GcEntry[];
  total_bytes: number;
  retention_roots: RetentionRoot[];
  recoverable: true;
  recovery_window_hours: number;
  trash_id: string | null;
  manifest_path: string | null;
  expires_at: string | null;
  next_step: string;
};

export type GcRestoreResult = { schema_version: 1; mode: "restore"; trash_id: string; restored: string[] };
export type GcPurgeResult = { schema_version: 1; mode: "purge"; trash_id: string; purged_paths: number; purged_bytes: number };

const reasons: Record<string, string> = {
  orphaned_staging: "staging no live flameox process owns",
  unregistered_bundle: "an evidence folder no committed bundle names",
  unregistered_artifact: "an artifact file no committed object names",
  empty_artifact_folder: "an empty artifact folder",
  superseded_bundle: "an evidence bundle a later extraction superseded, cited by no record",
  stale_collector_cache: "collector files of another flameox version",
  capability_probe_cache: "cached capability probes (rerun on demand)",
};

/**
 * flameox gc (CLI only; MCP never deletes). A dry run lists what is eligible — staging no live
 * process owns, superseded bundles no record cites, caches, and artifact files no committed row
 * names — older than --minimum-age-hours. Apply moves exactly those into recoverable trash with a
 * manifest; restore moves them back; purge deletes a manifest only once it has expired.
 */
export class RetentionService {
  constructor(
    private readonly workspace: WorkspaceHandle,
    private readonly recovery: RecoveryService,
  ) {}

  plan(options: { minimumAgeHours: number }): GcPlan {
    const workspace = this.workspace.open();
    const now = Date.now();
    const cutoff = now - options.minimumAgeHours * 3600 * 1000;
    const { roots, keptBundles } = retentionRoots(workspace.state.database);
    const entries = this.candidates(workspace, keptBundles).filter((entry) => entry.modified_ms < cutoff);
    roots.push(...this.liveRoots(workspace));
    const head = corpusHead(workspace.state.database);
    const listed = entries.map(({ kind, path, bytes, modified_ms }) => ({
      path,
      category: kind,
      bytes,
      modified_at: new Date(modified_ms).toISOString(),
      reason: reasons[kind] ?? kind,
    }));
    return {
      schema_version: 1,
      mode: "dry_run",
      plan_id: digestOf({ corpus: head.commit_id, entries: listed.map(({ path, category, bytes }) => ({ path, category, bytes })) }),
      corpus_commit_id: head.commit_id,
      minimum_age_hours: options.minimumAgeHours,
      cutoff: new Date(cutoff).toISOString(),
      entries: listed,
      total_bytes: listed.reduce((sum, entry) => sum + entry.bytes, 0),
      retention_roots: roots.slice(0, 100),
      recoverable: true,
      recovery_window_hours: trashRecoveryWindowHours,
      trash_id: null,
      manifest_path: null,
      expires_at: null,
      next_step: listed.length === 0 ? "Nothing to collect." : "flameox gc --apply moves exactly these paths into recoverable trash.",
    };
  }

  /** Recomputes the plan and, under the write lock, moves every entry that still qualifies into one trash folder. */
  apply(options: { minimumAgeHours: number }): GcPlan {
    const workspace = this.workspace.open();
    const plan = this.plan(options);
    if (plan.entries.length === 0) return { ...plan, mode: "apply" };
    const now = new Date();
    return workspace.state.write(() => {
      const still = this.stillEligible(workspace, plan.entries);
      const trashId = newTrashId(now);
      const expiresAt = new Date(now.getTime() + trashRecoveryWindowHours * 3600 * 1000).toISOString();
      moveToTrash(workspace, {
        trash_id: trashId,
        created_at: now.toISOString(),
        expires_at: expiresAt,
        minimum_age_hours: options.minimumAgeHours,
        retention_roots: plan.retention_roots,
        entries: still.map(({ path, category, bytes, modified_at }) => ({ path, category, bytes, modified_at })),
      });
      return {
        ...plan,
        mode: "apply" as const,
        entries: still,
        total_bytes: still.reduce((sum, entry) => sum + entry.bytes, 0),
        trash_id: trashId,
        manifest_path: `.diagnostics/trash/${trashId}/manifest.json`,
        expires_at: expiresAt,
        next_step: `flameox gc --restore ${trashId} brings these paths back until ${expiresAt}; after that flameox gc --purge ${trashId} deletes them.`,
      };
    });
  }

  restore(reference: string): GcRestoreResult {
    const workspace = this.workspace.open();
    const manifest = findTrashManifest(workspace, reference);
    const restored = workspace.state.write(() => restoreFromTrash(workspace, manifest));
    return { schema_version: 1, mode: "restore", trash_id: manifest.trash_id, restored };
  }

  purge(reference: string): GcPurgeResult {
    const workspace = this.workspace.open();
    const manifest = findTrashManifest(workspace, reference);
    purgeTrash(workspace, manifest, new Date());
    return {
      schema_version: 1,
      mode: "purge",
      trash_id: manifest.trash_id,
      purged_paths: manifest.entries.length,
      purged_bytes: manifest.entries.reduce((sum, entry) => sum + entry.bytes, 0),
    };
  }

  private candidates(workspace: Workspace, keptBundles: Set<string>): Candidate[] {
    const found: Candidate[] = [...this.recovery.leftovers()];
    for (const bundleId of supersededBundleIds(workspace.state.database)) {
      const path = `evidence/${bundleId}`;
      if (keptBundles.has(bundleId) || !existsSync(workspace.path(path))) continue;
      found.push({ kind: "superseded_bundle", path, ...treeFacts(workspace.path(path)) });
    }
    for (const version of names(workspace.path("tools", "collectors"))) {
      if (version === flameoxVersion) continue;
      const path = `tools/collectors/${version}`;
      found.push({ kind: "stale_collector_cache", path, ...treeFacts(workspace.path(path)) });
    }
    if (existsSync(workspace.path("tools", "capability-probes.json"))) {
      const path = "tools/capability-probes.json";
      found.push({ kind: "capability_probe_cache", path, ...treeFacts(workspace.path(path)) });
    }
    return found.sort((left, right) => left.path.localeCompare(right.path));
  }

  /** Inside the write lock: an entry qualifies still when it exists and nothing committed (or live) claims it now. */
  private stillEligible(workspace: Workspace, entries: GcEntry[]): GcEntry[] {
    const leftovers = new Set(this.recovery.leftovers().map((item) => item.path));
    return entries.filter((entry) => {
      if (!existsSync(workspace.path(entry.path))) return false;
      if (entry.category === "superseded_bundle") return isSupersededBundle(workspace.state.database, entry.path.slice("evidence/".length));
      if (leftoverKinds.has(entry.category)) return leftovers.has(entry.path);
      return true;
    });
  }

  /** Roots that are not rows: live processes' staging and open runs' staging. */
  private liveRoots(workspace: Workspace): RetentionRoot[] {
    const roots: RetentionRoot[] = [];
    for (const name of names(workspace.path("staging"))) {
      if (name.startsWith(processStagingPrefix) && processStagingOwner(workspace.root, name) !== "none")
        roots.push({ kind: "live_process_staging", id: name, detail: null });
      else if (name.startsWith("run-") && this.recovery.runStagingOwner(name.slice("run-".length)) !== "none")
        roots.push({ kind: "open_run", id: name.slice("run-".length), detail: null });
    }
    return roots;
  }
}

type Candidate = Omit<Leftover, "kind"> & {
  kind: Leftover["kind"] | "superseded_bundle" | "stale_collector_cache" | "capability_probe_cache";
};

const leftoverKinds = new Set<string>(["orphaned_staging", "unregistered_bundle", "unregistered_artifact", "empty_artifact_folder"]);

function names(folder: string): string[] {
  try {
    return readdirSync(folder).sort();
  } catch {
    return [];
  }
}
