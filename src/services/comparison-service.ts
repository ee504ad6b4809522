import { canonicalJson, digestOf } from "../domain/canonical-json.ts";
import { comparisonInvalid, type FlameoxError, invalidInput, notFound, runNotFound } from "../domain/errors.ts";
import { compatibilityMismatches, metricNamesSql, metricPerRun, type MemberFacts } from "../analysis/comparison.ts";
import { metricUnitsOf, type Partition, partitionMembers, samplesOf, sampleMismatches } from "../analysis/comparison-sides.ts";
import { differentialHotspots, type DifferentialHotspots } from "../analysis/differential.ts";
import { compareSamples, deriveValidity } from "../analysis/statistics/compare.ts";
import { corpusHead } from "../store/corpus.ts";
import { currentBundles } from "../store/evidence-registry.ts";
import { withBundles } from "./evidence-scope.ts";
import { readRun, type RunManifest } from "../store/run-store.ts";
import type { ProgressReporter } from "./progress.ts";
import type { RunSet } from "../store/run-set-store.ts";
import type { RunSetService } from "./run-set-service.ts";
import type { EvidenceReceipt, EvidenceRecord, EvidenceRecordStore } from "../store/evidence-record-store.ts";
import type { ExperimentStore, Experiment, Trial } from "../store/experiment-store.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";
import {
  type ComparisonResult,
  type CompareRunSetsRequest,
  comparisonParameters,
  comparisonRecipe,
  comparisonResult,
  defaultMetric,
  type SideSummary,
} from "./comparison-result.ts";

export { comparisonRecipe, defaultMetric, type ComparisonResult, type CompareRunSetsRequest };

export type { EvidenceReceipt, EvidenceRecord };

/**
 * compare_run_sets, record_comparison and analyze_scaling. Read-only recipes pin the corpus head once
 * and read exactly the evidence bundles current at that commit; record_* persist the identical result
 * with its inputs and digest.
 */
export class ComparisonService {
  constructor(
    private readonly workspace: WorkspaceHandle,
    private readonly runSets: RunSetService,
    private readonly experiments: ExperimentStore,
    private readonly evidenceRecords: EvidenceRecordStore,
  ) {}

  private get database() {
    return this.workspace.state().database;
  }

  private trial(trialId: string | null): Trial | null {
    return trialId ? this.experiments.findTrial(trialId) : null;
  }

  private facts(runSet: RunSet): { member: RunSet["members"][number]; facts: MemberFacts; manifest: RunManifest }[] {
    return runSet.members.map((member) => {
      const manifest = readRun(this.database, member.run_id);
      if (!manifest) {
        throw runNotFound(member.run_id, {
          message: `Run ${member.run_id} of run set ${runSet.run_set_id} no longer exists.`,
          remediation: ["Freeze a new run set of existing runs."],
        });
      }
      const trial = this.trial(member.trial_id);
      const outcome = trial ? trial.outcome : manifest.run_type === "import" ? "not_applicable" : manifest.execution_status;
      const observations =
        trial?.oracle?.strength === "cross_treatment_equivalence" && trial.oracle.receipt
          ? { [trial.oracle.receipt.case_id]: canonicalJson(trial.oracle.receipt.observed ?? null) }
          : null;
      return {
        member,
        manifest,
        facts: {
          run_id: member.run_id,
          trial_id: member.trial_id,
          block_id: member.block_id,
          included: member.included,
          outcome,
          workload_definition_id: manifest.workload_definition_id,
          environment_id: manifest.environment_id,
          source_state_id: manifest.source_state_id,
          adapter: manifest.adapter,
          adapter_options_digest: digestOf(manifest.adapter_options ?? {}),
          validation_status: manifest.validation_status,
          oracle_observations: observations,
        },
      };
    });
  }

  private experimentOf(id: string | null): Experiment | null {
    return id ? this.experiments.find(id) : null;
  }

  async compare(request: CompareRunSetsRequest, progress?: ProgressReporter): Promise<ComparisonResult> {
    const baseline = this.runSets.resolve(request.baseline);
    const candidate = this.runSets.resolve(request.candidate);
    const head = corpusHead(this.database);
    await progress?.(0, 2, "Comparison snapshot pinned");
    const sameExperiment =
      baseline.runSet.experiment_id !== null && baseline.runSet.experiment_id === candidate.runSet.experiment_id
        ? baseline.runSet.experiment_id
        : null;
    const declared = this.experimentOf(sameExperiment)?.statistics ?? null;
    const metric = request.metric ?? declared?.primary_metric ?? defaultMetric;
    const parameters = comparisonParameters(request, declared, metric);
    const members = { baseline: this.facts(baseline.runSet), candidate: this.facts(candidate.runSet) };
    const partition = partitionMembers(members, sameExperiment !== null);
    const { metricRows, differential, otherMetrics } = await this.queryEvidence(
      head.sequence,
      metric,
      partition,
      request.hotspot_limit ?? 10,
    );
    // Runs with no measurements at all (imported profiles) compared on the default metric still have their
    // differential hotspots to show; a metric someone named, or runs that measured other things, are an error.
    const named = (request.metric ?? null) !== null || Boolean(declared?.primary_metric);
    if (otherMetrics && (named || otherMetrics.length > 0)) throw unknownMetric(request, metric, otherMetrics);
    await progress?.(1, 2, "Comparison query complete");
    const units = metricUnitsOf(metricRows);
    const { samples, missingMetric } = samplesOf(partition.eligibleRuns, metricRows);
    const { failed, excluded } = partition;
    const statistics = compareSamples({
      baseline: samples.baseline,
      candidate: samples.candidate,
      pairing: request.pairing && request.pairing !== "auto" ? request.pairing : "auto",
      ...statisticsParameters(parameters),
      failed_counts: failed,
      excluded: { baseline: excluded.baseline + missingMetric.baseline, candidate: excluded.candidate + missingMetric.candidate },
    });
    const validity = deriveValidity([
      ...compatibilityMismatches(
        { baseline: members.baseline.map((entry) => entry.facts), candidate: members.candidate.map((entry) => entry.facts) },
        failed,
      ),
      ...sampleMismatches({ metric, requestedUnit: request.unit ?? null, units, samples, missingMetric, partition }),
      ...statistics.validity_mismatches,
    ]);
    const acrossExperiments =
      statistics.pairing === "unpaired" && sameExperiment === null && (baseline.runSet.experiment_id || candidate.runSet.experiment_id);
    const limitations = acrossExperiments
      ? [
          "The run sets come from different experiments (or only one from an experiment), so blocks cannot pair them; the comparison is unpaired.",
        ]
      : [];
    await progress?.(2, 2, "Comparison result ready");
    return comparisonResult({
      comparisonId: comparisonIdOf(request, { metric, parameters }, [baseline.runSet, candidate.runSet], head.commit_id),
      corpusCommitId: head.commit_id,
      baseline: sideSummary(baseline, members.baseline[0]?.member.treatment ?? null),
      candidate: sideSummary(candidate, members.candidate[0]?.member.treatment ?? null),
      experimentId: sameExperiment,
      metric,
      unit: units.length === 1 ? units[0]! : (request.unit ?? null),
      parameters,
      statistics,
      validity,
      members: { baseline: baseline.runSet.members.length, candidate: candidate.runSet.members.length },
      missingMetric,
      failedTrials: partition.failedTrials,
      differential,
      limitations,
    });
  }

  /** The eligible runs' metric values and their differential hotspots, read from the bundles current at the pinned commit. */
  private async queryEvidence(
    sequence: number,
    metric: string,
    partition: Partition,
    hotspotLimit: number,
  ): Promise<{
    metricRows: { run_id: string; value: unknown; units: string }[];
    differential: DifferentialHotspots;
    /** Set only when runs are eligible but none has the metric: the names they do have (maybe none). */
    otherMetrics: string[] | null;
  }> {
    const { eligibleRuns } = partition;
    const allEligible = [...eligibleRuns.baseline, ...eligibleRuns.candidate].map((entry) => entry.run_id);
    const bundles = allEligible.flatMap((runId) => currentBundles(this.database, { runId, maxSequence: sequence }));
    return withBundles(
      this.workspace,
      bundles.map((bundle) => bundle.bundle_id),
      async (view) => {
        const metricRows = await metricPerRun(view, metric, allEligible);
        const otherMetrics =
          allEligible.length > 0 && metricRows.length === 0
            ? (await view.rows<{ name: string }>(metricNamesSql(allEligible, 20))).map((row) => row.name)
            : null;
        const differential = await differentialHotspots(
          view,
          eligibleRuns.baseline.map((entry) => entry.run_id),
          eligibleRuns.candidate.map((entry) => entry.run_id),
          hotspotLimit,
        );
        return { metricRows, differential, otherMetrics };
      },
    );
  }

  /** Same recipe as compare; persisted with its exact inputs, pinned commit and result digest. Deterministic ids make it idempotent. */
  async record(request: CompareRunSetsRequest, progress?: ProgressReporter): Promise<EvidenceReceipt> {
    const result = await this.compare(request, async (step, _total, message) => progress?.(step, 3, message));
    await progress?.(2, 3, "Publishing comparison provenance");
    const inputs = {
      request,
      baseline: { id: result.baseline.id, kind: result.baseline.kind, membership_digest: result.baseline.membership_digest },
      candidate: { id: result.candidate.id, kind: result.candidate.kind, membership_digest: result.candidate.membership_digest },
      run_ids: {
        baseline: this.runSets.resolve(request.baseline).runSet.members.map((member) => member.run_id),
        candidate: this.runSets.resolve(request.candidate).runSet.members.map((member) => member.run_id),
      },
    };
    const receipt = this.evidenceRecords.record({
      refType: "comparison",
      refId: result.comparison_id,
      recipe: comparisonRecipe,
      inputs,
      corpusCommitId: result.corpus_commit_id,
      result: result as unknown as Record<string, unknown>,
    });
    await progress?.(3, 3, "Comparison publication complete");
    const ci = result.ci === null ? null : { lower: result.ci.lower, upper: result.ci.upper, level: result.ci.level };
    return { ...receipt, decision: result.decision, validity: result.validity, estimate: result.estimate, ci };
  }

  getEvidence(refType: string, refId: string): EvidenceRecord {
    if (refType !== "analysis" && refType !== "comparison") {
      throw invalidInput(
        `Evidence ref_type must be 'analysis' or 'comparison', not '${refType}'.`,
        [{ field: "ref_type", message: "must be 'analysis' or 'comparison'", type: "literal_error" }],
        { remediation: ["Use ref_type 'comparison' for record_comparison results and 'analysis' for record_analysis results."] },
      );
    }
    const found = this.evidenceRecords.find(refType, refId);
    if (!found) {
      // An id recorded under the other type is the likely mix-up; there is no listing of records to send the caller to.
      const other = refType === "comparison" ? "analysis" : "comparison";
      const elsewhere = this.evidenceRecords.find(other, refId) !== null;
      throw notFound(refType, refId, {
        field: "ref_id",
        message: `No recorded ${refType} ${refId} exists in this workspace${elsewhere ? `; it is a recorded ${other}` : ""}.`,
        remediation: [
          elsewhere
            ? `Read it with ref_type '${other}'.`
            : refType === "comparison"
              ? "Persist a comparison with record_comparison and use the ref_id it returns."
              : "Persist an analysis with record_analysis and use the ref_id it returns.",
        ],
        list: elsewhere ? { tool: "get_evidence", arguments: { ref_type: other, ref_id: refId } } : null,
      });
    }
    return found;
  }
}

/**
 * No eligible run has the metric: nothing could be decided, and saying "inconclusive" would hide a
 * typo. The recovery is the same comparison on a metric the runs have (the default one when they do).
 */
function unknownMetric(request: CompareRunSetsRequest, metric: string, available: string[]): FlameoxError {
  const suggested = available.includes(defaultMetric) ? defaultMetric : (available[0] ?? null);
  return comparisonInvalid(
    `No run in either set has the metric '${metric}'${available.length > 0 ? `; they have ${available.slice(0, 8).join(", ")}` : ""}.`,
    {
      details: {
        metric,
        available_metrics: available,
        fields: [{ field: "metric", message: "no run in either set has this measurement", type: "value_error" }],
      },
      remediation: [
        suggested
          ? `Compare on a measurement the runs have, e.g. metric='${suggested}' (query_measurements lists them per run).`
          : "The runs have no measurements at all; capture them again, then compare.",
      ],
      next: suggested
        ? {
            tool: "compare_run_sets",
            arguments: { baseline_run_set_id: request.baseline, candidate_run_set_id: request.candidate, metric: suggested },
          }
        : { tool: "list_runs" },
    },
  );
}

/** compareSamples' names for the comparison parameters. */
function statisticsParameters(parameters: ComparisonResult["parameters"]) {
  return {
    polarity: parameters.polarity,
    practical_threshold: parameters.practical_threshold,
    confidence_level: parameters.confidence_level,
    minimum_samples: parameters.minimum_samples,
  };
}

/** How a side is named in the result: its set (or one-run shorthand) and the treatment it stands for. */
function sideSummary(resolved: { runSet: RunSet; kind: "run_set" | "run" }, firstTreatment: string | null): SideSummary {
  return {
    id: resolved.runSet.run_set_id,
    kind: resolved.kind,
    membership_digest: resolved.runSet.membership_digest,
    experiment_id: resolved.runSet.experiment_id,
    members: resolved.runSet.members.length,
    treatment: (resolved.runSet.selection.treatment as string | undefined) ?? firstTreatment,
  };
}

/** The id digests the normalized request, both memberships and the pinned commit: same inputs, same id. */
function comparisonIdOf(
  request: CompareRunSetsRequest,
  resolved: { metric: string; parameters: ReturnType<typeof comparisonParameters> },
  [baseline, candidate]: [{ membership_digest: string }, { membership_digest: string }],
  corpusCommitId: string,
): string {
  return digestOf({
    recipe: comparisonRecipe,
    request: {
      metric: resolved.metric,
      unit: request.unit ?? null,
      pairing: request.pairing ?? "auto",
      hotspot_limit: request.hotspot_limit ?? 10,
      ...resolved.parameters,
    },
    baseline: baseline.membership_digest,
    candidate: candidate.membership_digest,
    corpus_commit_id: corpusCommitId,
  });
}
