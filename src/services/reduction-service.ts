import { randomHex } from "../domain/random.ts";
import { existsSync, readFileSync, statSync } from "node:fs";
import { extname, resolve } from "node:path";
import { maximumReductionUnits, partitionArtifact } from "../analysis/reduction/partitioners.ts";
import { resolveWorkloadInvocation } from "../config/workload-template.ts";
import { loadWorkspacePolicy } from "../config/workspace-policy.ts";
import { digestOf } from "../domain/canonical-json.ts";
import {
  artifactNotFound,
  capabilityUnavailable,
  executionRefused,
  notFound,
  planRefused,
  reductionPlanStale,
  toFlameoxError,
} from "../domain/errors.ts";
import { reductionCandidateVariable, type ReductionIntent, type ReductionPlan, type ReductionResult } from "../domain/reductions.ts";
import type { PlanReductionInput } from "../domain/requests/reductions.ts";
import { artifactResourceUri, reductionResourceUri } from "../domain/resource-uris.ts";
import { executableDigest, resolveExecutable } from "../exec/executable.ts";
import { readArtifact, registrationsOfArtifact } from "../store/artifact-registry.ts";
import { verifyStoredArtifact } from "../store/artifact-store.ts";
import { type PlanTokenStore, publicPlanId } from "../store/plan-tokens.ts";
import type { ReductionStore } from "../store/reduction-store.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";
import { refuseEscape, safeDigest } from "./capture-plan.ts";
import type { ProgressReporter } from "./progress.ts";
import { bindEngine, type EngineContext, engineChange } from "./reduction-engines.ts";
import type { ReductionRunner } from "./reduction-runner.ts";
import type { WorkloadService } from "./workload-service.ts";
import { displayArgv } from "./host-paths.ts";
import { keysetPage, resumeAfter } from "./keyset-page.ts";

export type { ReductionIntent, ReductionPlan, ReductionResult };

/** Read into memory whole (ddmin rebuilds candidates from it), so bounded well below the artifact cap. */
export const maximumReductionBytes = 64 * 1024 * 1024;

const sensitivityRank: Record<string, number> = { normal: 0, internal: 1, sensitive: 2 };

/**
 * plan_reduction, execute_reduction and get_reduction. Planning resolves the artifact, cuts it into
 * units (so a wrong partitioner fails here, not after a long run), binds the predicate workload's
 * definition and executable and issues a single-use token; executing spends it, rechecks every bound
 * identity and runs ddmin (ReductionRunner).
 */
export class ReductionService {
  constructor(
    private readonly workspace: WorkspaceHandle,
    private readonly workloads: WorkloadService,
    private readonly plans: PlanTokenStore<"reduction", ReductionIntent>,
    private readonly reductions: ReductionStore,
    private readonly runner: ReductionRunner,
    private readonly engines: EngineContext,
  ) {}

  async plan(request: PlanReductionInput): Promise<ReductionPlan> {
    const workspace = this.workspace.open();
    const engine = await bindEngine(request, this.engines);
    const policy = loadWorkspacePolicy(workspace.root);
    const original = this.original(request);
    const unitCount = partitionArtifact(request.partitioner, readFileSync(workspace.path(original.stored_path))).unitCount;
    const { workload, definitionId } = await this.workloads.requireWorkload(request.predicate_workload);
    const invocation = resolveWorkloadInvocation(workload, request.predicate_parameters);
    const cwd = resolve(this.workspace.projectRoot, invocation.cwd);
    refuseEscape(this.workspace.projectRoot, cwd, request.predicate_workload);
    if (!existsSync(cwd) || !statSync(cwd).isDirectory())
      throw executionRefused(`The predicate workload's cwd '${invocation.cwd}' is not an existing folder.`, {
        remediation: ["Fix the workload's cwd with configure_workload (get_declared_workflow shows its definition)."],
        next: { tool: "get_declared_workflow", arguments: { kind: "workload", name: request.predicate_workload } },
      });
    const executable = this.predicateExecutable(request.predicate_workload, invocation.argv[0]!, invocation.environment, cwd);
    const reductionId = crypto.randomUUID();
    const createdAt = new Date();
    const expiresAtMs = createdAt.getTime() + policy.limits.plan_ttl_seconds * 1000;
    const intent: ReductionIntent = {
      workspace_id: workspace.id,
      reduction_id: reductionId,
      request,
      request_digest: digestOf({ tool: "plan_reduction", ...request }),
      original,
      unit_count: unitCount,
      engine_version: engine.version,
      ...(engine.provider ? { engine_provider: engine.provider } : {}),
      predicate: {
        workload_name: request.predicate_workload,
        workload_definition_id: definitionId,
        argv: [executable, ...invocation.argv.slice(1)],
        cwd,
        environment: invocation.environment,
        executable_digest: await executableDigest(executable),
      },
      policy_digest: digestOf(policy),
    };
    const token = randomHex(32);
    this.plans.issue({
      token,
      intent,
      labels: { reduction_id: reductionId, original_artifact_id: original.artifact_id },
      createdAt,
      expiresAtMs,
    });
    return {
      schema_version: 1,
      plan_id: token,
      reduction_id: reductionId,
      request_digest: intent.request_digest,
      original: { artifact_id: original.artifact_id, byte_length: original.byte_length, kind: original.kind, unit_count: unitCount },
      partitioner: request.partitioner,
      engine: { name: request.engine, version: intent.engine_version },
      predicate: {
        workload_name: request.predicate_workload,
        workload_definition_id: definitionId,
        argv: displayArgv(invocation.argv, this.workspace.projectRoot),
        cwd: invocation.cwd,
        candidate_variable: reductionCandidateVariable,
      },
      limits: request.limits,
      created_at: createdAt.toISOString(),
      expires_at: new Date(expiresAtMs).toISOString(),
      warnings: [
        "Trusted-local execution: the predicate workload runs directly, uncontained, once per attempt; it must only read the candidate file.",
        ...(engine.provider ? [shrinkrayWarning] : []),
      ],
    };
  }

  /** Spends the token before anything runs, rechecks every bound identity, then reduces. */
  async execute(planId: string, options: { signal?: AbortSignal; progress?: ProgressReporter } = {}): Promise<ReductionResult> {
    this.workspace.open();
    const outcome = this.plans.consume(planId, Date.now());
    if (!("intent" in outcome)) {
      // A spent or expired plan says what it was for: the same request planned again. An unknown id says nothing.
      const spent = outcome.spent;
      throw planRefused("reduction", `The reduction plan ${outcome.refused}.`, {
        details: { reason: outcome.refused, ...(spent ? { reduction_id: spent.reduction_id } : {}) },
        remediation: [
          "Call plan_reduction again and execute the new plan_id; a consumed plan is never retryable (get_reduction reads its result).",
        ],
        ...(spent ? { next: { tool: "plan_reduction", arguments: { request: spent.request } } } : {}),
      });
    }
    await this.recheck(outcome.intent);
    await this.runner.run(outcome.intent, publicPlanId(planId), options);
    return this.get({ reduction_id: outcome.intent.reduction_id, limit: 10, cursor: null });
  }

  get(request: { reduction_id: string; limit: number; cursor: string | null }): ReductionResult {
    const workspace = this.workspace.open();
    const record = this.reductions.find(request.reduction_id);
    if (!record)
      throw notFound("reduction", request.reduction_id, {
        remediation: ["Pass the reduction_id that plan_reduction or execute_reduction returned."],
      });
    const scope = digestOf({ query: "get_reduction", reduction_id: record.reduction_id, limit: request.limit });
    // Attempts are append-only, so a cursor stays valid while a reduction is still adding to them.
    const binding = { secret: workspace.cursorSecret(), scope, snapshot: record.reduction_id };
    const after = resumeAfter<number>(binding, request.cursor) ?? 0;
    const { total, rows } = this.reductions.attempts(record.reduction_id, after, request.limit);
    const { page, fields } = keysetPage(binding, rows, total, request.limit, (last) => last.attempt);
    const resultArtifact = record.final_artifact_id ?? record.best_known_artifact_id;
    return {
      ...record,
      attempts: {
        rows: page,
        ...fields,
      },
      resource_uri: reductionResourceUri(record.reduction_id),
      final_artifact_resource_uri: resultArtifact ? artifactResourceUri(resultArtifact) : null,
    };
  }

  /** The stored artifact to reduce, with what its registrations say it is. */
  private original(request: PlanReductionInput): ReductionIntent["original"] {
    const database = this.workspace.open().state.database;
    const artifact = readArtifact(database, request.original_artifact_id);
    if (!artifact) throw artifactNotFound(request.original_artifact_id);
    if (artifact.byte_length > maximumReductionBytes)
      throw executionRefused(`The artifact is ${artifact.byte_length} bytes; a reduction reads at most ${maximumReductionBytes}.`, {
        details: { byte_length: artifact.byte_length, maximum_bytes: maximumReductionBytes, maximum_units: maximumReductionUnits },
        remediation: ["Cut the input down by hand (or with the producer) below the bound, import it, and reduce that."],
      });
    const registrations = registrationsOfArtifact(database, artifact.artifact_id);
    const first = registrations[0];
    const sensitivity = registrations.reduce(
      (highest, registration) =>
        (sensitivityRank[registration.sensitivity] ?? 2) > (sensitivityRank[highest] ?? 0) ? registration.sensitivity : highest,
      "normal",
    );
    const extension = extname(artifact.payload_name);
    return {
      artifact_id: artifact.artifact_id,
      sha256: artifact.artifact_id.replace(/^sha256:/, ""),
      byte_length: artifact.byte_length,
      stored_path: artifact.stored_path,
      extension,
      kind: first?.kind ?? "collector_metadata",
      format: first?.format ?? null,
      media_type: first?.media_type ?? null,
      display_name: first?.display_name ?? `artifact${extension}`,
      sensitivity,
    };
  }

  private predicateExecutable(workloadName: string, command: string, environment: Record<string, string>, cwd: string): string {
    try {
      return resolveExecutable(command, environment.PATH ?? process.env.PATH ?? "", cwd);
    } catch (error) {
      throw capabilityUnavailable(`The predicate workload's executable '${command}' cannot be run: ${toFlameoxError(error).message}`, {
        details: { next_tool: "get_declared_workflow", missing_executable: command, requirement_kind: "executable" },
        remediation: ["Install the executable or fix the workload's argv with configure_workload."],
        next: { tool: "get_declared_workflow", arguments: { kind: "workload", name: workloadName } },
      });
    }
  }

  /** The token is spent: any changed identity means plan again, never run the stale intent. */
  private async recheck(intent: ReductionIntent): Promise<void> {
    const reasons: string[] = [];
    try {
      const { definitionId } = await this.workloads.requireWorkload(intent.predicate.workload_name);
      if (definitionId !== intent.predicate.workload_definition_id) reasons.push("the predicate workload's definition changed");
    } catch {
      reasons.push("the predicate workload is no longer declared or flameox.toml is invalid");
    }
    if ((await safeDigest(intent.predicate.argv[0]!)) !== intent.predicate.executable_digest)
      reasons.push("the predicate's executable changed");
    const workspace = this.workspace.open();
    if (!verifyStoredArtifact(workspace, intent.original.stored_path, intent.original.sha256))
      reasons.push("the original artifact's stored bytes no longer match its id");
    const engineReason = await engineChange(intent, this.engines);
    if (engineReason) reasons.push(engineReason);
    if (digestOf(loadWorkspacePolicy(workspace.root)) !== intent.policy_digest) reasons.push("the workspace policy changed");
    if (reasons.length > 0) throw reductionPlanStale(reasons, intent.request);
  }
}

const shrinkrayWarning =
  "ShrinkRay (one test at a time, fixed seed) cuts bytes with its own passes; the partitioner checks the input and counts units. Past max_attempts flameox stops it and keeps the best candidate.";
