/**
 * Design realization: the experiment's factors (with legacy forms projected onto them), the
 * combinations they span minus exclusions, and the seeded randomized-complete-block order.
 * Pure: the same declaration and seed always give the same order.
 */
import { canonicalJson } from "../domain/canonical-json.ts";
import { workspaceInvalid } from "../domain/errors.ts";
import type { FactorLevel, PlannedTrial } from "../domain/experiment.ts";
import { createRandom, shuffleInPlace } from "./statistics/random.ts";

/** The declaration fields realization reads (a subset of [experiments.<name>] in flameox.toml). */
export type ExperimentDesign = {
  design: string;
  blocks: number;
  /** Warm-up rounds (each treatment once per round) before the first block; default 0. */
  warmups?: number | undefined;
  factors?: Record<string, FactorLevel[]> | undefined;
  treatment_factor?: string | undefined;
  scaling_parameter?: string | undefined;
  scaling_values?: FactorLevel[] | undefined;
  variants?: FactorLevel[] | undefined;
  combination_policy?: string | undefined;
  combinations?: Record<string, FactorLevel>[] | undefined;
  exclude?: Record<string, FactorLevel>[] | undefined;
};

const levelKey = (value: FactorLevel) => `${typeof value}:${String(value)}`;
const levelText = (value: FactorLevel) => (typeof value === "string" ? value : String(value));

/** The experiment's factors and treatment factor; legacy `scaling_*` and `variants` forms map onto one factor. */
export function effectiveFactors(
  name: string,
  experiment: ExperimentDesign,
  workloadHasVariantParameter: boolean,
): { factors: Record<string, FactorLevel[]>; treatment: string } {
  if (experiment.factors) return { factors: experiment.factors, treatment: experiment.treatment_factor! };
  if (experiment.scaling_parameter && experiment.scaling_values)
    return { factors: { [experiment.scaling_parameter]: experiment.scaling_values }, treatment: experiment.scaling_parameter };
  if (experiment.variants && workloadHasVariantParameter) return { factors: { variant: experiment.variants }, treatment: "variant" };
  throw workspaceInvalid(`Experiment '${name}' declares legacy variants, but its workload has no 'variant' parameter to carry them.`, {
    details: { next_tool: "get_declared_workflow", experiment: name },
    remediation: ["Declare factors and a treatment_factor over workload parameters in [experiments.<name>]."],
    next: { tool: "get_declared_workflow", arguments: { kind: "experiment", name } },
  });
}

function combinations(experiment: ExperimentDesign, factors: Record<string, FactorLevel[]>): Record<string, FactorLevel>[] {
  let all: Record<string, FactorLevel>[];
  if (experiment.combination_policy === "explicit" && experiment.combinations) {
    all = experiment.combinations.map((combination) => ({ ...combination }));
  } else {
    all = [{}];
    for (const [factor, levels] of Object.entries(factors))
      all = all.flatMap((partial) => levels.map((level) => ({ ...partial, [factor]: level })));
  }
  const rules = experiment.exclude ?? [];
  return all.filter(
    (combination) =>
      !rules.some((rule) =>
        Object.entries(rule).every(
          ([factor, level]) => combination[factor] !== undefined && levelKey(combination[factor]!) === levelKey(level),
        ),
      ),
  );
}

/**
 * Randomized complete blocks: every block holds each treatment once at one coordinate (the values of
 * the other factors); the order inside a block is shuffled by one seeded generator for the whole plan,
 * so the same seed always gives the same realized order. fixed_order keeps the declared order. Warm-up
 * rounds come first, shaped like blocks, so each treatment's first (cold) run is never a measurement.
 */
export function realizeOrder(
  experiment: ExperimentDesign,
  factors: Record<string, FactorLevel[]>,
  treatmentFactor: string,
  seed: number,
): PlannedTrial[] {
  const coordinates = new Map<string, Record<string, FactorLevel>[]>();
  for (const combo of combinations(experiment, factors)) {
    const coordinate = canonicalJson(Object.fromEntries(Object.entries(combo).filter(([factor]) => factor !== treatmentFactor)));
    coordinates.set(coordinate, [...(coordinates.get(coordinate) ?? []), combo]);
  }
  const random = createRandom(seed);
  const trials: PlannedTrial[] = [];
  const coordinateList = [...coordinates.values()];
  const rounds = [
    ...Array.from({ length: experiment.warmups ?? 0 }, (_, index) => ({ label: `w${index + 1}`, warmup: true })),
    ...Array.from({ length: experiment.blocks }, (_, index) => ({ label: `b${index + 1}`, warmup: false })),
  ];
  for (const round of rounds) {
    coordinateList.forEach((combosAtCoordinate, coordinateIndex) => {
      const blockId = coordinateList.length > 1 ? `c${coordinateIndex + 1}-${round.label}` : round.label;
      const order = [...combosAtCoordinate];
      if (experiment.design !== "fixed_order") shuffleInPlace(order, random);
      order.forEach((combo, position) => {
        trials.push({
          ordinal: trials.length + 1,
          block_id: blockId,
          order_in_block: position + 1,
          treatment: levelText(combo[treatmentFactor]!),
          factors: combo,
          warmup: round.warmup,
        });
      });
    });
  }
  return trials;
}

/** What a realized order holds, in a few numbers: a plan shows this and the first trials, not the whole order. */
export type OrderSummary = {
  trials: number;
  warmup_trials: number;
  /** Measured blocks (warm-up rounds apart), and how many trials each holds. */
  blocks: number;
  trials_per_block: { minimum: number; maximum: number };
  /** Measured trials per treatment, in declaration order (the first `treatmentItems`). */
  trials_per_treatment: Record<string, number>;
  /** How many measured blocks each treatment opens: the randomization's balance at a glance. */
  first_in_block: Record<string, number>;
  treatments_omitted: number;
};

const treatmentItems = 20;

export function summarizeOrder(trials: readonly PlannedTrial[], treatments: readonly string[]): OrderSummary {
  const measured = trials.filter((trial) => !trial.warmup);
  const perBlock = new Map<string, number>();
  const perTreatment = new Map<string, number>(treatments.map((treatment) => [treatment, 0]));
  const opening = new Map<string, number>(treatments.map((treatment) => [treatment, 0]));
  for (const trial of measured) {
    perBlock.set(trial.block_id, (perBlock.get(trial.block_id) ?? 0) + 1);
    perTreatment.set(trial.treatment, (perTreatment.get(trial.treatment) ?? 0) + 1);
    if (trial.order_in_block === 1) opening.set(trial.treatment, (opening.get(trial.treatment) ?? 0) + 1);
  }
  const sizes = [...perBlock.values()];
  const shown = [...perTreatment.keys()].slice(0, treatmentItems);
  return {
    trials: trials.length,
    warmup_trials: trials.length - measured.length,
    blocks: perBlock.size,
    trials_per_block: { minimum: sizes.length > 0 ? Math.min(...sizes) : 0, maximum: sizes.length > 0 ? Math.max(...sizes) : 0 },
    trials_per_treatment: Object.fromEntries(shown.map((treatment) => [treatment, perTreatment.get(treatment)!])),
    first_in_block: Object.fromEntries(shown.map((treatment) => [treatment, opening.get(treatment)!])),
    treatments_omitted: Math.max(0, perTreatment.size - treatmentItems),
  };
}
