/**
 * Every listing's page size: the most a caller may ask for and what an omitted limit means. MCP tools
 * and CLI commands read the same entry, so their bounds agree.
 */
import type { LimitSpec } from "./fields.ts";

export const pageLimits = {
  hotspots: { maximum: 1000, default: 20 },
  frameDrillDown: { maximum: 1000, default: 20 },
  memory: { maximum: 1000, default: 20 },
  execution: { maximum: 1000, default: 50 },
  pytorch: { maximum: 1000, default: 20 },
  acceleratorLaunches: { maximum: 1000, default: 20 },
  traceWindow: { maximum: 1000, default: 100 },
  failures: { maximum: 1000, default: 20 },
  measurements: { maximum: 1000, default: 100 },
  runs: { maximum: 1000, default: 100 },
  artifacts: { maximum: 1000, default: 100 },
  investigations: { maximum: 1000, default: 100 },
  findings: { maximum: 1000, default: 100 },
  trials: { maximum: 1000, default: 1000 },
  declaredWorkflows: { maximum: 100, default: 50 },
  pipelineStages: { maximum: 100, default: 25 },
  reductionAttempts: { maximum: 15, default: 10 },
} as const satisfies Record<string, LimitSpec>;
