import * as v from "valibot";
import { digestOf } from "../domain/canonical-json.ts";
import { invalidRequest, staleInput } from "../domain/errors.ts";
import { removeEmptyObjectFolders } from "../store/artifact-placement.ts";
import { advanceCorpus } from "../store/corpus.ts";
import { type RepairAction, retireBundle } from "../store/integrity.ts";
import { type Leftover, reclaimLeftovers } from "../store/leftovers.ts";
import { quarantinePath, resumeQuarantineMoves } from "../store/quarantine.ts";
import { resumeTrashMoves } from "../store/trash.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";
import type { RecoveryService } from "./recovery-service.ts";
import { inspectWorkspace, repairPlanId, repairPlanOf } from "./workspace-inspection.ts";

export type RepairPlan = {
  schema_version: 1;
  plan_id: string | null;
  actions: RepairAction[];
  applied: boolean;
  /** Per action, once applied: what happened (`applied`, or `already_done` when the problem had gone meanwhile). */
  outcomes: { action: RepairAction; outcome: "applied" | "already_done" }[];
  next_step: string;
};

const RepairActionSchema = v.variant("action", [
  v.strictObject({ action: v.literal("close_stale_run"), run_id: v.pipe(v.string(), v.maxLength(200)) }),
  v.strictObject({
    action: v.literal("remove_leftover"),
    kind: v.pipe(v.string(), v.maxLength(64)),
    path: v.pipe(v.string(), v.maxLength(1000)),
  }),
  v.strictObject({ action: v.literal("retire_bundle"), bundle_id: v.pipe(v.string(), v.maxLength(200)) }),
  v.strictObject({
    action: v.literal("quarantine_damaged_artifact"),
    artifact_id: v.pipe(v.string(), v.maxLength(200)),
    path: v.pipe(v.string(), v.maxLength(1000)),
  }),
  v.strictObject({ action: v.literal("remove_quarantine"), quarantine_id: v.pipe(v.string(), v.maxLength(200)) }),
  v.strictObject({ action: v.literal("finish_interrupted_move"), id: v.pipe(v.string(), v.maxLength(200)) }),
]);

/** What repair reads back: the preview it printed (extra fields such as `applied` are ignored). */
const RepairPlanFileSchema = v.object({
  plan_id: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
  actions: v.pipe(v.array(RepairActionSchema), v.minLength(1), v.maxLength(100_000)),
});

/**
 * flameox repair [PLAN.json] (CLI only). Without a plan it previews the plan validate proposes:
 * one action per issue that has a safe fix. With a plan it applies exactly that plan's actions, and
 * only if every one of them is still proposed now (otherwise nothing is applied: preview again).
 */
export class RepairService {
  constructor(
    private readonly workspace: WorkspaceHandle,
    private readonly recovery: RecoveryService,
  ) {}

  async preview(): Promise<RepairPlan> {
    const { plan_id, actions } = repairPlanOf((await inspectWorkspace(this.workspace, this.recovery, "standard")).issues);
    return {
      schema_version: 1,
      plan_id,
      actions,
      applied: false,
      outcomes: [],
      next_step:
        plan_id === null ? "Nothing to repair." : "Save this JSON to a file and run flameox repair FILE to apply exactly these actions.",
    };
  }

  async apply(plan: unknown): Promise<RepairPlan> {
    const parsed = v.safeParse(RepairPlanFileSchema, plan);
    if (!parsed.success) {
      throw invalidRequest("The repair plan is not a plan flameox repair printed.", {
        details: { problems: parsed.issues.slice(0, 10).map((issue) => `${v.getDotPath(issue) ?? "plan"}: ${issue.message}`) },
        remediation: ["Run flameox repair --json > plan.json, then flameox repair plan.json."],
      });
    }
    const actions = parsed.output.actions as RepairAction[];
    if (repairPlanId(actions) !== parsed.output.plan_id) {
      throw invalidRequest("The repair plan's actions do not match its plan_id (was it edited?).", {
        remediation: ["Preview the plan again with flameox repair and apply that file unchanged."],
      });
    }
    const full = actions.some((action) => action.action === "quarantine_damaged_artifact");
    const current = new Set(
      repairPlanOf((await inspectWorkspace(this.workspace, this.recovery, full ? "full" : "standard")).issues).actions.map(digestOf),
    );
    const gone = actions.filter((action) => !current.has(digestOf(action)));
    if (gone.length > 0) {
      throw staleInput(`${gone.length} of the plan's ${actions.length} actions no longer apply to this workspace; nothing was repaired.`, {
        details: { plan_id: parsed.output.plan_id, stale_actions: gone.slice(0, 10) },
        remediation: ["Preview the current plan with flameox repair, then apply that one."],
      });
    }
    const outcomes: RepairPlan["outcomes"] = [];
    for (const action of actions) outcomes.push({ action, outcome: (await this.applyOne(action)) ? "applied" : "already_done" });
    return {
      schema_version: 1,
      plan_id: parsed.output.plan_id,
      actions,
      applied: true,
      outcomes,
      next_step: "Run flameox validate to confirm.",
    };
  }

  private async applyOne(action: RepairAction): Promise<boolean> {
    const workspace = this.workspace.open();
    switch (action.action) {
      case "close_stale_run":
        return this.recovery.closeRunIfStale(action.run_id);
      case "remove_leftover":
        return (
          reclaimLeftovers(workspace, [{ kind: action.kind as Leftover["kind"], path: action.path, bytes: 0, modified_ms: 0 }]).length > 0
        );
      case "retire_bundle":
        return workspace.state.write(() => {
          if (!retireBundle(workspace, action.bundle_id)) return false;
          advanceCorpus(workspace.state.database, workspace.id, `repair: retire ${action.bundle_id}`);
          return true;
        });
      case "quarantine_damaged_artifact":
        return workspace.state.write(() => {
          quarantinePath(workspace, {
            id: `artifact-${action.artifact_id.slice("sha256:".length, "sha256:".length + 16)}-${Date.now()}`,
            origin: action.path,
            reason: `stored bytes of ${action.artifact_id} no longer match their registration`,
            runId: null,
          });
          removeEmptyObjectFolders(workspace, action.path.slice(0, action.path.lastIndexOf("/")));
          return true;
        });
      case "remove_quarantine":
        return this.recovery.removeQuarantineEntry(action.quarantine_id);
      case "finish_interrupted_move":
        return [...resumeQuarantineMoves(workspace), ...resumeTrashMoves(workspace)].includes(action.id);
    }
  }
}
