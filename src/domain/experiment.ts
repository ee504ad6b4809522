/** The parts of an experiment that are plain data: factor levels, the realized order, trial outcomes, oracle receipts. */

/** One level of a factor: a workload parameter value. */
export type FactorLevel = string | number | boolean;

/** One trial of a realized design: its place in the randomized order and its factor levels. */
export type PlannedTrial = {
  ordinal: number;
  /** `b<k>` (`c<i>-b<k>` with several coordinates); warm-up rounds are `w<k>`. */
  block_id: string;
  order_in_block: number;
  treatment: string;
  factors: Record<string, FactorLevel>;
  /** A warm-up trial runs and is recorded like the others but never enters a run set's measurements. */
  warmup: boolean;
};

export type Polarity = "lower_is_better" | "higher_is_better" | "neutral";

export type ExperimentStatistics = {
  primary_metric: string;
  polarity: Polarity;
  practical_threshold: number;
  confidence_level: number;
  estimand: string;
  random_seed: number;
};

/**
 * The direction that is better for a metric, read from its name when nobody declared one: less is better
 * for times and sizes (`*_ns`, `*_seconds`, `*_bytes`, the process runtime measurements), more free memory
 * is better; null for a name that says nothing (a benchmark's own name, a ratio).
 */
export function polarityOfMetric(metric: string): Polarity | null {
  if (/(^|[._])minimum_free_bytes$/.test(metric)) return "higher_is_better";
  if (metric === "categorical_outcome" || /^runtime(_resource)?\./.test(metric) || /_(ns|us|ms|seconds|bytes)$/.test(metric))
    return "lower_is_better";
  return null;
}

export type { TrialOutcome } from "./vocabulary.ts";

/** What an oracle reports about one trial; it is authoritative over comparing output bytes. */
export type OracleReceipt = {
  status: "pass" | "fail" | "inconclusive" | "unsupported";
  case_id: string;
  reason: string | null;
  expected: unknown;
  observed: unknown;
  raw_artifact_id: string | null;
};
