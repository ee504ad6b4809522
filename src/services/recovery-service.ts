import { existsSync, mkdirSync, renameSync } from "node:fs";
import { bootId, processLiveness } from "../exec/identity.ts";
import { processesWithEnvironment } from "../exec/environment-scan.ts";
import { runMarkerVariable } from "./capture-plan.ts";
import { advanceCorpus } from "../store/corpus.ts";
import { openRunManifests, reviseRun, type RunManifest } from "../store/run-store.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";

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

export type RecoveryResult = { schema_version: 1; recovered: RecoveredRun[]; still_running: string[]; corpus_commit_id: string | null };

/**
 * Closes runs whose owning flameox process died (kill -9, crash, reboot): the lease names the owner
 * by pid, process start time and boot id, so a reused pid is never mistaken for the owner.
 * Leftover workload processes are killed, partial outputs move to quarantine/, and the run is
 * recorded as cancelled by crash recovery. Nothing unfinished ever becomes visible evidence.
 */
export class RecoveryService {
  constructor(private readonly workspace: WorkspaceHandle) {}

  staleRunIds(): string[] {
    return this.openRuns()
      .filter((run) => ownerIsGone(run))
      .map((run) => run.run_id);
  }

  private openRuns(): RunManifest[] {
    return openRunManifests(this.workspace.state().database);
  }

  async recover(): Promise<RecoveryResult> {
    const workspace = this.workspace.open();
    const recovered: RecoveredRun[] = [];
    const stillRunning: string[] = [];
    let corpusCommitId: string | null = null;
    for (const run of this.openRuns()) {
      if (!ownerIsGone(run)) {
        stillRunning.push(run.run_id);
        continue;
      }
      const processInfo = (run.process ?? {}) as { pid?: number; process_start_time?: string | null };
      const targets = processesWithEnvironment(runMarkerVariable, run.run_id);
      if (typeof processInfo.pid === "number" && processLiveness(processInfo.pid, processInfo.process_start_time ?? null) === "alive") {
        const root = { pid: processInfo.pid, startTime: processInfo.process_start_time ?? "" };
        if (!targets.some((target) => target.pid === root.pid)) targets.push(root);
        killGroup(processInfo.pid);
      }
      for (const target of targets) killProcess(target.pid);
      const killed = targets.length > 0;
      const deadline = Date.now() + 5000;
      const survivors = () => targets.filter((target) => processLiveness(target.pid, target.startTime || null) === "alive");
      while (Date.now() < deadline && survivors().length > 0) await Bun.sleep(50);
      const workloadGone = survivors().length === 0;
      const staging = workspace.path("staging", `run-${run.run_id}`);
      let quarantined = false;
      if (existsSync(staging)) {
        mkdirSync(workspace.path("quarantine"), { recursive: true });
        renameSync(staging, workspace.path("quarantine", `run-${run.run_id}`));
        quarantined = true;
      }
      corpusCommitId = workspace.state.write(() => {
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
              "The owning flameox process died during the capture; the run was closed by crash recovery and partial outputs were quarantined.",
            ],
            failure: { code: "PROCESS_CANCELLED", message: "Closed by crash recovery after its owner died." },
          }),
          "crash recovery",
        );
        return advanceCorpus(workspace.state.database, workspace.id, `recover ${run.run_id}`).commit_id;
      });
      recovered.push({
        run_id: run.run_id,
        previous_execution_status: run.execution_status,
        execution_status: "cancelled",
        owner_pid: run.lease?.pid ?? null,
        workload_pid: processInfo.pid ?? null,
        workload_killed: killed,
        cleanup_complete: workloadGone,
        quarantined_staging: quarantined,
      });
    }
    return { schema_version: 1, recovered, still_running: stillRunning, corpus_commit_id: corpusCommitId };
  }
}

function ownerIsGone(run: RunManifest): boolean {
  if (!run.lease) return true;
  const currentBoot = bootId();
  if (run.lease.boot_id && currentBoot && run.lease.boot_id !== currentBoot) return true;
  return processLiveness(run.lease.pid, run.lease.process_start_time) === "dead";
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
