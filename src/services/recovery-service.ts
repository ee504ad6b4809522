import { existsSync, readdirSync } from "node:fs";
import { processesWithEnvironment } from "../exec/environment-scan.ts";
import { bootId, processLiveness } from "../exec/identity.ts";
import { advanceCorpus } from "../store/corpus.ts";
import { findLeftovers, type Leftover, reclaimLeftovers } from "../store/leftovers.ts";
import { processStagingOwner, processStagingPrefix, removeOrphanedProcessStaging } from "../store/process-staging.ts";
import { beyondQuarantineBounds, listQuarantine, quarantinePath, removeQuarantine, resumeQuarantineMoves } from "../store/quarantine.ts";
import { openRunManifests, readRun, reviseRun, type RunManifest } from "../store/run-store.ts";
import { resumeTrashMoves } from "../store/trash.ts";
import type { Workspace } from "../store/workspace.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";
import { runMarkerVariable } from "./capture-plan.ts";

export type RecoveredRun = {
  run_id: string;
  previous_execution_status: string;
  execution_status: "cancelled";
  owner_pid: number | null;
  workload_pid: number | null;
  workload_killed: boolean;
  cleanup_complete: boolean;
  quarantined_staging: boolean;
};

export type ReclaimedItem = { kind: Leftover["kind"] | "quarantine_beyond_bound"; path: string; bytes: number };

export type RecoveryResult = {
  schema_version: 1;
  recovered: RecoveredRun[];
  still_running: string[];
  corpus_commit_id: string | null;
  /** Leftovers of dead processes that were removed, and quarantine entries beyond its bound. */
  reclaimed: ReclaimedItem[];
  reclaimed_bytes: number;
  /** Trash and quarantine moves a crash had interrupted, now finished. */
  resumed_moves: string[];
};

/** What every server start (and workspace_status) does: close runs whose owner died, drop dead processes' scratch. */
export type StartupRecovery = { recovered: RecoveredRun[]; removed_process_staging: number; warnings: string[] };

/**
 * Recovers from process death (kill -9, crash, reboot). A running run's lease names its owning
 * flameox process by pid, process start time and boot id, so a reused pid is never mistaken for the
 * owner; a run whose owner is gone is closed as cancelled by crash recovery, its leftover workload
 * processes are killed and its partial outputs quarantined. `recover` also reclaims what dead
 * processes left (leftovers.ts), finishes interrupted trash and quarantine moves, and keeps the
 * quarantine within its bound. Nothing unfinished ever becomes visible evidence.
 */
export class RecoveryService {
  constructor(private readonly workspace: WorkspaceHandle) {}

  staleRunIds(): string[] {
    return this.openRuns()
      .filter((run) => ownerIsGone(run))
      .map((run) => run.run_id);
  }

  /** Run staging ownership as leftovers.ts needs it. */
  runStagingOwner(runId: string): "owned" | "stale" | "none" {
    const run = readRun(this.workspace.state().database, runId);
    if (!run || !isOpen(run)) return "none";
    return ownerIsGone(run) ? "stale" : "owned";
  }

  /** Leftovers of dead processes, confirmed against committed rows (validate reports them; recover and gc reclaim them). */
  leftovers(): Leftover[] {
    return findLeftovers(this.workspace.open(), (runId) => this.runStagingOwner(runId));
  }

  private openRuns(): RunManifest[] {
    return openRunManifests(this.workspace.state().database);
  }

  async recover(): Promise<RecoveryResult> {
    const workspace = this.workspace.open();
    const resumed = [...resumeQuarantineMoves(workspace), ...resumeTrashMoves(workspace)];
    const { recovered, stillRunning, corpusCommitId } = await this.recoverRuns(workspace);
    const reclaimed: ReclaimedItem[] = reclaimLeftovers(workspace, this.leftovers()).map(({ kind, path, bytes }) => ({
      kind,
      path,
      bytes,
    }));
    reclaimed.push(...this.pruneQuarantine(workspace));
    return {
      schema_version: 1,
      recovered,
      still_running: stillRunning,
      corpus_commit_id: corpusCommitId,
      reclaimed,
      reclaimed_bytes: reclaimed.reduce((sum, item) => sum + item.bytes, 0),
      resumed_moves: resumed,
    };
  }

  /** Cheap and safe on every start: dead leases and dead processes' own staging folders only (no tree scan). */
  async startupRecovery(): Promise<StartupRecovery> {
    const workspace = this.workspace.open();
    const { recovered } = await this.recoverRuns(workspace);
    let removed = 0;
    for (const name of listNames(workspace.path("staging"))) {
      if (!name.startsWith(processStagingPrefix) || processStagingOwner(workspace.root, name) !== "none") continue;
      if (removeOrphanedProcessStaging(workspace.root, name)) removed += 1;
    }
    const warnings = recovered.map(
      (run) =>
        `Run ${run.run_id} was still marked ${run.previous_execution_status} but its flameox process had died; crash recovery closed it as cancelled${run.workload_killed ? " and terminated its leftover workload processes" : ""}${run.quarantined_staging ? ", and quarantined its partial outputs" : ""}.`,
    );
    return { recovered, removed_process_staging: removed, warnings };
  }

  private async recoverRuns(
    workspace: Workspace,
  ): Promise<{ recovered: RecoveredRun[]; stillRunning: string[]; corpusCommitId: string | null }> {
    const recovered: RecoveredRun[] = [];
    const stillRunning: string[] = [];
    let corpusCommitId: string | null = null;
    for (const run of this.openRuns()) {
      if (!ownerIsGone(run)) {
        stillRunning.push(run.run_id);
        continue;
      }
      const outcome = await closeStaleRun(workspace, run);
      corpusCommitId = outcome.corpusCommitId;
      recovered.push(outcome.recovered);
    }
    return { recovered, stillRunning, corpusCommitId };
  }

  /** Closes one run if (still) its owner is gone; false when it is not stale. */
  async closeRunIfStale(runId: string): Promise<boolean> {
    const run = readRun(this.workspace.state().database, runId);
    if (!run || !isOpen(run) || !ownerIsGone(run)) return false;
    await closeStaleRun(this.workspace.open(), run);
    return true;
  }

  /** Removes the oldest quarantine entries beyond the bound. */
  private pruneQuarantine(workspace: Workspace): ReclaimedItem[] {
    const doomed = beyondQuarantineBounds(listQuarantine(workspace), Date.now());
    for (const entry of doomed) this.removeQuarantineEntry(entry.quarantine_id);
    return doomed.map((entry) => ({ kind: "quarantine_beyond_bound", path: `quarantine/${entry.quarantine_id}`, bytes: entry.bytes }));
  }

  /** Deletes a quarantine entry; a run whose partial outputs go is told so in its record. */
  removeQuarantineEntry(id: string): boolean {
    const workspace = this.workspace.open();
    const entry = listQuarantine(workspace).find((item) => item.quarantine_id === id);
    if (!entry) return false;
    removeQuarantine(workspace, id);
    if (!entry.run_id) return true;
    workspace.state.write(() => {
      const run = readRun(workspace.state.database, entry.run_id!);
      if (run?.capture_status !== "quarantined") return;
      reviseRun(
        workspace.state.database,
        run.run_id,
        run.revision,
        (current) => ({
          ...current,
          capture_status: "cancelled",
          limitations: [...current.limitations, "Its quarantined partial outputs were removed to keep the quarantine within its bound."],
        }),
        "quarantine bound",
      );
      advanceCorpus(workspace.state.database, workspace.id, `quarantine bound ${run.run_id}`);
    });
    return true;
  }
}

function isOpen(run: RunManifest): boolean {
  return run.execution_status === "planned" || run.execution_status === "running" || run.capture_status === "running";
}

/** Kills what is left of the run's workload, quarantines its staging, and closes it as cancelled by crash recovery. */
async function closeStaleRun(workspace: Workspace, run: RunManifest): Promise<{ recovered: RecoveredRun; corpusCommitId: string }> {
  const processInfo = (run.process ?? {}) as { pid?: number; process_start_time?: string | null };
  const targets = processesWithEnvironment(runMarkerVariable, run.run_id);
  if (typeof processInfo.pid === "number" && processLiveness(processInfo.pid, processInfo.process_start_time ?? null) === "alive") {
    const root = { pid: processInfo.pid, startTime: processInfo.process_start_time ?? "" };
    if (!targets.some((target) => target.pid === root.pid)) targets.push(root);
    killGroup(processInfo.pid);
  }
  for (const target of targets) killProcess(target.pid);
  const deadline = Date.now() + 5000;
  const survivors = () => targets.filter((target) => processLiveness(target.pid, target.startTime || null) === "alive");
  while (Date.now() < deadline && survivors().length > 0) await Bun.sleep(50);
  const workloadGone = survivors().length === 0;
  const staging = `staging/run-${run.run_id}`;
  const quarantined = existsSync(workspace.path(staging));
  if (quarantined) {
    quarantinePath(workspace, {
      id: `run-${run.run_id}`,
      origin: staging,
      reason: "partial outputs of a capture whose flameox process died",
      runId: run.run_id,
    });
  }
  const corpusCommitId = workspace.state.write(() => {
    reviseRun(
      workspace.state.database,
      run.run_id,
      run.revision,
      (current) => ({
        ...current,
        finished_at: current.finished_at ?? new Date().toISOString(),
        execution_status: "cancelled",
        capture_status: quarantined ? "quarantined" : "cancelled",
        lease: null,
        process: { ...(current.process ?? {}), cancelled: true, cancellation_cause: "crash_recovery", cleanup_complete: workloadGone },
        limitations: [
          ...current.limitations,
          quarantined
            ? `The owning flameox process died during the capture; the run was closed by crash recovery and its partial outputs were quarantined (flameox recover --quarantine run-${run.run_id} registers them with this run).`
            : "The owning flameox process died during the capture; the run was closed by crash recovery.",
        ],
        failure: { code: "PROCESS_CANCELLED", message: "Closed by crash recovery after its owner died." },
      }),
      "crash recovery",
    );
    return advanceCorpus(workspace.state.database, workspace.id, `recover ${run.run_id}`).commit_id;
  });
  return {
    corpusCommitId,
    recovered: {
      run_id: run.run_id,
      previous_execution_status: run.execution_status,
      execution_status: "cancelled",
      owner_pid: run.lease?.pid ?? null,
      workload_pid: processInfo.pid ?? null,
      workload_killed: targets.length > 0,
      cleanup_complete: workloadGone,
      quarantined_staging: quarantined,
    },
  };
}

function ownerIsGone(run: RunManifest): boolean {
  if (!run.lease) return true;
  const currentBoot = bootId();
  if (run.lease.boot_id && currentBoot && run.lease.boot_id !== currentBoot) return true;
  return processLiveness(run.lease.pid, run.lease.process_start_time) === "dead";
}

function listNames(folder: string): string[] {
  try {
    return readdirSync(folder);
  } catch {
    return [];
  }
}

/** The workload leads its own process group (the broker starts it with setsid). */
function killGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // The group is already gone.
  }
}

function killProcess(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}
