import { compareStages } from "../analysis/pipeline-comparison.ts";
import { digestOf } from "../domain/canonical-json.ts";
import { type FieldProblem, invalidInput, notFound, runNotFound } from "../domain/errors.ts";
import type { ArtifactPipeline, PipelineComparison, PipelineReceipt, PipelineStage } from "../domain/pipelines.ts";
import type { ComparePipelinesInput, PipelineStageInput, RegisterPipelineInput } from "../domain/requests/pipelines.ts";
import { pipelineResourceUri } from "../domain/resource-uris.ts";
import { readArtifact, readRegistration, registrationsOfArtifact } from "../store/artifact-registry.ts";
import { currentBundlesOfArtifact } from "../store/evidence-registry.ts";
import type { PipelineStore } from "../store/pipeline-store.ts";
import { readRun } from "../store/run-store.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";
import { keysetPage, resumeAfter } from "./keyset-page.ts";

export type { ArtifactPipeline, PipelineComparison, PipelineReceipt };

/** Stages listed in register_artifact_pipeline's answer; the resource has all of them. */
const receiptStages = 40;
/** compare_artifact_pipelines fills a page up to this many characters of stages (at least one), so its answer stays under 8,000. */
const comparisonPageCharacters = 5500;

const notRootCause = "A stage comparison shows where two pipelines' outputs diverge; it is not a root-cause attribution.";

/**
 * register_artifact_pipeline and compare_artifact_pipelines: a producer's multi-stage pipeline kept
 * as stage evidence (each available stage pointing at a stored artifact), and two of them compared
 * stage by stage.
 */
export class PipelineService {
  constructor(
    private readonly workspace: WorkspaceHandle,
    private readonly pipelines: PipelineStore,
  ) {}

  register(request: RegisterPipelineInput): PipelineReceipt {
    const database = this.workspace.open().state.database;
    if (!readRun(database, request.run_id)) throw runNotFound(request.run_id);
    const problems = stageProblems(request.stages);
    const stages = [...request.stages]
      .sort((left, right) => left.ordinal - right.ordinal)
      .map((stage) => this.resolveStage(stage, request.stages.indexOf(stage), problems));
    if (problems.length > 0)
      throw invalidInput(
        `The pipeline has ${problems.length} invalid field(s): ${problems[0]!.field}: ${problems[0]!.message}.`,
        problems,
        {
          remediation: ["Fix the listed stages and register the pipeline again."],
        },
      );
    const pipelineId = crypto.randomUUID();
    const record: ArtifactPipeline = {
      schema_version: 1,
      pipeline_id: pipelineId,
      run_id: request.run_id,
      pipeline_name: request.pipeline_name,
      pipeline_schema: request.pipeline_schema,
      producer: request.producer,
      producer_version: request.producer_version,
      stages,
      limitations: request.limitations,
      created_at: new Date().toISOString(),
      resource_uri: pipelineResourceUri(pipelineId),
    };
    this.pipelines.insert(record);
    return {
      ...record,
      stages: stages.slice(0, receiptStages).map(({ name, ordinal, status, artifact_id, byte_length }) => ({
        name,
        ordinal,
        status,
        artifact_id,
        byte_length,
      })),
      stage_count: stages.length,
      stages_truncated: stages.length > receiptStages,
    };
  }

  get(pipelineId: string): ArtifactPipeline {
    this.workspace.open();
    const record = this.pipelines.find(pipelineId);
    if (!record)
      throw notFound("pipeline", pipelineId, {
        remediation: ["Pass a pipeline_id that register_artifact_pipeline returned."],
        details: { next_tool: "register_artifact_pipeline" },
      });
    return record;
  }

  compare(request: ComparePipelinesInput): PipelineComparison {
    const workspace = this.workspace.open();
    const baseline = this.get(request.baseline_pipeline_id);
    const candidate = this.get(request.candidate_pipeline_id);
    const database = workspace.state.database;
    const compared = compareStages(baseline, candidate, (artifactId) => {
      const bundles = currentBundlesOfArtifact(database, artifactId);
      if (bundles.length === 0) return null;
      const rows: Record<string, number> = {};
      for (const bundle of bundles) for (const [table, count] of Object.entries(bundle.tables)) rows[table] = (rows[table] ?? 0) + count;
      return rows;
    });
    const resultDigest = digestOf({ baseline: baseline.pipeline_id, candidate: candidate.pipeline_id, ...compared });
    const scope = digestOf({
      query: "compare_artifact_pipelines",
      baseline: baseline.pipeline_id,
      candidate: candidate.pipeline_id,
      limit: request.limit,
    });
    // A page holds up to `limit` stages, fewer when they fill its character budget, so its size is known
    // only once filled. The cursor's position is the number of stages returned so far; keysetPage is
    // given the page's stages and the one after it (if any) to tell whether more remain.
    const binding = { secret: workspace.cursorSecret(), scope, snapshot: resultDigest };
    const offset = resumeAfter<number>(binding, request.cursor) ?? 0;
    const pageSize = fillPage(compared.stages.slice(offset, offset + request.limit)).length;
    const pageAndNext = compared.stages.slice(offset, offset + pageSize + 1);
    const { page, fields } = keysetPage(binding, pageAndNext, compared.stages.length, pageSize, () => offset + pageSize);
    const notes = [notRootCause];
    if (!compared.compatible)
      notes.push("The pipelines differ in name, schema or producer, so their stages are not compared; compare two runs of one pipeline.");
    return {
      schema_version: 1,
      baseline_pipeline_id: baseline.pipeline_id,
      candidate_pipeline_id: candidate.pipeline_id,
      compatible: compared.compatible,
      identity_differences: compared.identity_differences,
      counts: compared.counts,
      first_divergent_stage: compared.first_divergent_stage,
      stages: page,
      ...fields,
      notes,
      result_digest: resultDigest,
    };
  }

  /** The stage as stored: its output registration resolved to the artifact and its size. */
  private resolveStage(stage: PipelineStageInput, position: number, problems: FieldProblem[]): PipelineStage {
    let artifactId: string | null = null;
    let byteLength: number | null = null;
    let registrationId = stage.registration_id ?? null;
    if (registrationId) {
      const database = this.workspace.open().state.database;
      const registration = readRegistration(database, registrationId);
      const artifact = registration ? null : readArtifact(database, registrationId);
      if (registration) {
        artifactId = registration.artifact_id;
        byteLength = registration.byte_length;
      } else if (artifact) {
        // An artifact id stands for its first registration, so stages can name what list_artifacts shows.
        registrationId = registrationsOfArtifact(database, artifact.artifact_id)[0]?.registration_id ?? null;
        artifactId = artifact.artifact_id;
        byteLength = artifact.byte_length;
      } else
        problems.push({
          field: `request.stages[${position}].registration_id`,
          message: "names no registration or artifact in this workspace (list_artifacts, get_artifact)",
          type: "value_error",
        });
    }
    return {
      name: stage.name,
      ordinal: stage.ordinal,
      predecessor: stage.predecessor ?? null,
      status: stage.status,
      registration_id: registrationId,
      artifact_id: artifactId,
      byte_length: byteLength,
      format: stage.format,
      format_schema: stage.format_schema,
      extractor: stage.extractor ?? null,
      extractor_version: stage.extractor_version ?? null,
      structural_summary: stage.structural_summary ?? null,
      elapsed_ns: stage.elapsed_ns ?? null,
      limitations: stage.limitations,
    };
  }
}

/** Names and ordinals unique, predecessors earlier, outputs exactly where the status says there is one. */
function stageProblems(stages: PipelineStageInput[]): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const problem = (index: number, field: string, message: string) =>
    problems.push({ field: `request.stages[${index}].${field}`, message, type: "value_error" });
  const ordinalOf = new Map<string, number>();
  const ordinals = new Set<number>();
  stages.forEach((stage, index) => {
    if (ordinalOf.has(stage.name)) problem(index, "name", "repeats another stage's name");
    if (ordinals.has(stage.ordinal)) problem(index, "ordinal", "repeats another stage's ordinal");
    ordinalOf.set(stage.name, stage.ordinal);
    ordinals.add(stage.ordinal);
  });
  stages.forEach((stage, index) => {
    const predecessor = stage.predecessor ?? null;
    if (predecessor !== null && !((ordinalOf.get(predecessor) ?? Number.POSITIVE_INFINITY) < stage.ordinal))
      problem(index, "predecessor", "must name a stage with a lower ordinal");
    const hasOutput = stage.status === "available" || stage.status === "cached";
    if (hasOutput && !stage.registration_id) problem(index, "registration_id", `is required when status is ${stage.status}`);
    if (!hasOutput && stage.registration_id) problem(index, "registration_id", `must be absent when status is ${stage.status}`);
    const described = [stage.extractor, stage.extractor_version, stage.structural_summary].filter((value) => value != null).length;
    if (described !== 0 && described !== 3)
      problem(index, "extractor", "extractor, extractor_version and structural_summary come together or not at all");
  });
  return problems;
}

/** The leading stages that fit the page's character budget; always at least one, so paging advances. */
function fillPage<Item>(items: Item[]): Item[] {
  let used = 0;
  const page: Item[] = [];
  for (const item of items) {
    used += JSON.stringify(item).length;
    if (page.length > 0 && used > comparisonPageCharacters) break;
    page.push(item);
  }
  return page;
}
