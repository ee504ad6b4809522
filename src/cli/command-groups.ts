import type { CommandDef } from "citty";

type LazyCommand = () => Promise<CommandDef>;

/**
 * Command groups beyond the workspace basics, one file each, loaded only when their word is used (or
 * help and the option check walk to them): a command pays for its own group, not for every group.
 */
export const cliCommandGroups: Record<string, LazyCommand> = {
  workload: async () => (await import("./workload.ts")).workloadCommand as CommandDef,
  mcp: async () => (await import("./mcp.ts")).mcpCommand as CommandDef,
  capture: async () => (await import("./capture.ts")).captureCommand as CommandDef,
  import: async () => (await import("./capture.ts")).importCommand as CommandDef,
  "import-xctrace": async () => (await import("./capture.ts")).importXctraceCommand as CommandDef,
  runs: async () => (await import("./runs.ts")).runsCommand as CommandDef,
  artifacts: async () => (await import("./runs.ts")).artifactsCommand as CommandDef,
  analyze: analyzeGroup,
  stacks: async () => (await import("./analyze.ts")).stacksCommand as CommandDef,
  recover: async () => (await import("./runs.ts")).recoverCommand as CommandDef,
  setup: async () => (await import("./setup.ts")).setupCommand as CommandDef,
  report: async () => (await import("./report.ts")).reportCommand as CommandDef,
  export: async () => (await import("./export.ts")).exportCommand as CommandDef,
  open: async () => (await import("./open.ts")).openCommand as CommandDef,
  extract: async () => (await import("./extract.ts")).extractCommandGroup as CommandDef,
  trace: async () => (await import("./evidence.ts")).traceCommand as CommandDef,
  measurements: async () => (await import("./evidence.ts")).measurementsCommand as CommandDef,
  experiment: async () => (await import("./experiment.ts")).experimentCommand as CommandDef,
  "run-sets": async () => (await import("./run-sets.ts")).runSetsCommand as CommandDef,
  investigations: async () => (await import("./investigations.ts")).investigationsCommand as CommandDef,
  hypotheses: async () => (await import("./investigations.ts")).hypothesesCommand as CommandDef,
  findings: async () => (await import("./findings.ts")).findingsCommand as CommandDef,
  evidence: async () => (await import("./evidence.ts")).evidenceLookupCommand as CommandDef,
  catalog: async () => (await import("./catalog.ts")).catalogCommand as CommandDef,
  gc: async () => (await import("./retention.ts")).gcCommand as CommandDef,
  repair: async () => (await import("./retention.ts")).repairCommand as CommandDef,
};

/** analyze compare|scaling|record|record-comparison live with run sets; they join the analyze group here. */
async function analyzeGroup(): Promise<CommandDef> {
  const [{ analyzeCommand }, { comparisonAnalyzeCommands }] = await Promise.all([import("./analyze.ts"), import("./run-sets.ts")]);
  return {
    ...analyzeCommand,
    subCommands: { ...(analyzeCommand.subCommands as Record<string, CommandDef>), ...comparisonAnalyzeCommands },
  } as CommandDef;
}
