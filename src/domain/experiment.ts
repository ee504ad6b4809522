/** The parts of an experiment that are plain data: factor levels, the realized order, trial outcomes, oracle receipts. */

/** One level of a factor: a workload parameter value. */
export type FactorLevel = string | number | boolean;

/** One trial of a realized design: its place in the randomized order and its factor levels. */
export type PlannedTrial = {
  ordinal: number;
  block_id: string;
  order_in_block: number;
  treatment: string;
  factors: Record<string, FactorLevel>;
};

export type ExperimentStatistics = {
  primary_metric: string;
  polarity: "lower_is_better" | "higher_is_better" | "neutral";
  practical_threshold: number;
  confidence_level: number;
  estimand: string;
  random_seed: number;
};

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
