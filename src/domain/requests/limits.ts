/**
 * Every listing's page size: the most a caller may ask for and what an omitted limit means. MCP tools
 * and CLI commands read the same entry, so their bounds agree. The defaults keep a default answer under
 * 8,000 characters (measured on a 100-run workspace by test/e2e/result-sizes.test.ts): a run row with its
 * identities is up to ~600 characters, a pytest measurement ~400, a trace event ~350, a trial ~600.
 */
import type { LimitSpec } from "./fields.ts";

export const pageLimits = {
  hotspots: { maximum: 1000, default: 20 },
  frameDrillDown: { maximum: 1000, default: 20 },
  memory: { maximum: 1000, default: 20 },
  execution: { maximum: 1000, default: 50 },
  pytorch: { maximum: 1000, default: 20 },
  acceleratorLaunches: { maximum: 1000, default: 20 },
  traceWindow: { maximum: 1000, default: 15 },
  failures: { maximum: 1000, default: 20 },
  measurements: { maximum: 1000, default: 10 },
  runs: { maximum: 1000, default: 10 },
  artifacts: { maximum: 1000, default: 20 },
  investigations: { maximum: 1000, default: 20 },
  findings: { maximum: 1000, default: 10 },
  trials: { maximum: 1000, default: 10 },
  declaredWorkflows: { maximum: 100, default: 50 },
  pipelineStages: { maximum: 100, default: 25 },
  reductionAttempts: { maximum: 15, default: 10 },
} as const satisfies Record<string, LimitSpec>;
