/**
 * Synthetic timings shaped like this machine's noise. Measured while writing these tests (40 runs of a
 * ~190 ms CPU-bound Python subprocess on the shared 2-core box): robust CV (1.4826·MAD/median) ≈ 8 %,
 * σ/μ ≈ 15 %, extremes 0.65×–1.37× the median. Modelled as lognormal noise with 8 % CV, 5 % slow outliers
 * (×1.1–1.6) and a slow random-walk drift of 0.5 % per block shared by both treatments of a block.
 */
import type { Sample } from "../../../../src/analysis/statistics/compare.ts";
import { createRandom } from "../../../../src/analysis/statistics/random.ts";

export type NoiseModel = { cv: number; outlierProbability: number; driftPerBlock: number };

export const thisMachine: NoiseModel = { cv: 0.08, outlierProbability: 0.05, driftPerBlock: 0.005 };
export const quietMachine: NoiseModel = { cv: 0.03, outlierProbability: 0.02, driftPerBlock: 0.002 };

export function syntheticRuns(options: {
  seed: number;
  perSide: number;
  /** Work of the candidate relative to the baseline (1.2 = 20 % more work). */
  workFactor: number;
  blocks: boolean;
  noise?: NoiseModel;
  baseNs?: number;
}): { baseline: Sample[]; candidate: Sample[] } {
  const noise = options.noise ?? thisMachine;
  const random = createRandom(options.seed);
  const sigma = Math.sqrt(Math.log(1 + noise.cv * noise.cv));
  const draw = (): number =>
    Math.exp(sigma * random.nextGaussian()) * (random.nextFloat() < noise.outlierProbability ? 1.1 + 0.5 * random.nextFloat() : 1);
  const base = options.baseNs ?? 100_000_000;
  const baseline: Sample[] = [];
  const candidate: Sample[] = [];
  let drift = 1;
  for (let index = 0; index < options.perSide; index += 1) {
    drift *= Math.exp(noise.driftPerBlock * random.nextGaussian());
    const block = options.blocks ? `block-${index}` : null;
    baseline.push({ run_id: `baseline-${index}`, value: base * drift * draw(), block });
    candidate.push({ run_id: `candidate-${index}`, value: base * options.workFactor * drift * draw(), block });
  }
  return { baseline, candidate };
}
