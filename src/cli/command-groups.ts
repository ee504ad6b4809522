import type { CommandDef } from "citty";
import { captureCommand, importCommand, importXctraceCommand } from "./capture.ts";
import { artifactsCommand, recoverCommand, runsCommand } from "./runs.ts";
import { analyzeCommand, stacksCommand } from "./analyze.ts";
import { setupCommand } from "./setup.ts";
import { reportCommand } from "./report.ts";
import { exportCommand } from "./export.ts";
import { openCommand } from "./open.ts";
import { extractCommandGroup } from "./extract.ts";
import { evidenceLookupCommand, measurementsCommand, traceCommand } from "./evidence.ts";
import { experimentCommand } from "./experiment.ts";
import { comparisonAnalyzeCommands, runSetsCommand } from "./run-sets.ts";
import { hypothesesCommand, investigationsCommand } from "./investigations.ts";
import { findingsCommand } from "./findings.ts";
import { catalogCommand } from "./catalog.ts";
import { gcCommand, repairCommand } from "./retention.ts";

/** Command groups beyond the workspace basics, one file each. */
export const cliCommandGroups: Record<string, CommandDef> = {
  capture: captureCommand as CommandDef,
  import: importCommand as CommandDef,
  "import-xctrace": importXctraceCommand as CommandDef,
  runs: runsCommand as CommandDef,
  artifacts: artifactsCommand as CommandDef,
  analyze: analyzeCommand as CommandDef,
  stacks: stacksCommand as CommandDef,
  recover: recoverCommand as CommandDef,
  setup: setupCommand as CommandDef,
  report: reportCommand as CommandDef,
  export: exportCommand as CommandDef,
  open: openCommand as CommandDef,
  extract: extractCommandGroup as CommandDef,
  trace: traceCommand as CommandDef,
  measurements: measurementsCommand as CommandDef,
  experiment: experimentCommand as CommandDef,
  "run-sets": runSetsCommand as CommandDef,
  investigations: investigationsCommand as CommandDef,
  hypotheses: hypothesesCommand as CommandDef,
  findings: findingsCommand as CommandDef,
  evidence: evidenceLookupCommand as CommandDef,
  catalog: catalogCommand as CommandDef,
  gc: gcCommand as CommandDef,
  repair: repairCommand as CommandDef,
};

// analyze compare|scaling|record|record-comparison live with run sets; they join the analyze group here.
Object.assign(analyzeCommand.subCommands as Record<string, CommandDef>, comparisonAnalyzeCommands);
