import { CapabilitySetupStore } from "../store/capability-setup-store.ts";
import { DetachedCaptureStore } from "../store/detached-capture-store.ts";
import { ProviderEnvironments } from "../store/provider-environments.ts";
import { EvidenceRecordStore } from "../store/evidence-record-store.ts";
import { ExperimentStore } from "../store/experiment-store.ts";
import { InvestigationStore } from "../store/investigation-store.ts";
import { PipelineStore } from "../store/pipeline-store.ts";
import { PlanTokenStore } from "../store/plan-tokens.ts";
import { ReductionStore } from "../store/reduction-store.ts";
import { RunSetStore } from "../store/run-set-store.ts";
import type { StateSource } from "../store/sqlite.ts";
import { WorkspaceHandle } from "../store/workspace-handle.ts";
import type { Workspace, WorkspaceLocation } from "../store/workspace.ts";
import { AdapterApprovalService } from "./adapter-approval-service.ts";
import { AnalysisRecordService } from "./analysis-record-service.ts";
import { AnalysisService } from "./analysis-service.ts";
import { CapabilityService } from "./capability-service.ts";
import { cancelAllCapabilitySetups, CapabilitySetupService } from "./capability-setup-service.ts";
import { CaptureRunner } from "./capture-runner.ts";
import { CaptureService, type ConsumedPlan } from "./capture-service.ts";
import { CatalogService } from "./catalog-service.ts";
import { ComparisonService } from "./comparison-service.ts";
import { cancelAllDetachedCaptures, DetachedCaptureService } from "./detached-capture-service.ts";
import { EvidenceService } from "./evidence-service.ts";
import { ExecutionAnalysisService } from "./execution-analysis-service.ts";
import { ExperimentExecution, type ExperimentIntent } from "./experiment-execution.ts";
import { ExperimentService } from "./experiment-service.ts";
import { ExtractionService } from "./extraction-service.ts";
import { FailureAnalysisService } from "./failure-analysis-service.ts";
import { ImportService } from "./import-service.ts";
import { InvestigationService } from "./investigation-service.ts";
import { ManagedProviders } from "./managed-providers.ts";
import { MeasurementService } from "./measurement-service.ts";
import { MemoryAnalysisService } from "./memory-analysis-service.ts";
import { OracleRunner } from "./oracle-runner.ts";
import { QuarantineService } from "./quarantine-service.ts";
import { PipelineService } from "./pipeline-service.ts";
import { ReductionRunner } from "./reduction-runner.ts";
import type { ReductionIntent } from "../domain/reductions.ts";
import { ReductionService } from "./reduction-service.ts";
import { RecoveryService } from "./recovery-service.ts";
import { ReceiptAnalysisService } from "./receipt-analysis.ts";
import { RepairService } from "./repair-service.ts";
import { RetentionService } from "./retention-service.ts";
import { ReportService } from "./report-service.ts";
import { RunService } from "./run-service.ts";
import { RunSetService } from "./run-set-service.ts";
import { ScalingService } from "./scaling-service.ts";
import { TraceAnalysisService } from "./trace-analysis-service.ts";
import { TrialRunner } from "./trial-runner.ts";
import { WorkloadDependencyService } from "./workload-dependency-service.ts";
import { WorkloadService } from "./workload-service.ts";
import { WorkspaceService } from "./workspace-service.ts";
import { XctraceImportService } from "./xctrace-import-service.ts";
import { defaultHeartbeatIntervalMs } from "./progress.ts";

export type ServicesOptions = {
  projectRoot: string;
  /** Defaults to <projectRoot>/.diagnostics; an explicit one may live outside the project. */
  workspaceRoot?: string;
  /** How often captures and experiments repeat their progress while running (tests make it short). */
  progressHeartbeatMs?: number;
};

/**
 * The composition root: every repository and application service over one fixed project root,
 * built once in dependency order, each given exactly what it uses. Transports hold one of these and
 * call its services; the workspace opens lazily, so an absent workspace is a typed error per call.
 */
export class Services {
  readonly handle: WorkspaceHandle;

  readonly workspaces: WorkspaceService;
  readonly workloads: WorkloadService;
  readonly capabilities: CapabilityService;
  readonly capabilitySetups: CapabilitySetupService;
  readonly adapterApprovals: AdapterApprovalService;
  readonly workloadDependencies: WorkloadDependencyService;
  readonly runs: RunService;
  readonly imports: ImportService;
  readonly xctraceImports: XctraceImportService;
  readonly captures: CaptureService;
  readonly detachedCaptures: DetachedCaptureService;
  readonly catalog: CatalogService;
  readonly recovery: RecoveryService;
  readonly retention: RetentionService;
  readonly repair: RepairService;
  readonly quarantine: QuarantineService;
  readonly extraction: ExtractionService;
  readonly analysis: AnalysisService;
  readonly memoryAnalysis: MemoryAnalysisService;
  readonly executionAnalysis: ExecutionAnalysisService;
  readonly traceAnalysis: TraceAnalysisService;
  readonly failureAnalysis: FailureAnalysisService;
  readonly measurements: MeasurementService;
  readonly evidence: EvidenceService;
  readonly runSets: RunSetService;
  readonly investigations: InvestigationService;
  readonly comparisons: ComparisonService;
  readonly scaling: ScalingService;
  readonly experiments: ExperimentService;
  readonly analysisRecords: AnalysisRecordService;
  readonly reports: ReportService;
  readonly pipelines: PipelineService;
  readonly reductions: ReductionService;

  // Long by design: the whole service graph, built in dependency order, is readable in one place; splitting it would hide that order.
  constructor(options: ServicesOptions) {
    const workspace = new WorkspaceHandle(options);
    this.handle = workspace;
    const state: StateSource = () => workspace.state();

    const capturePlans = new PlanTokenStore<"capture", ConsumedPlan>(state, "capture");
    const experimentPlans = new PlanTokenStore<"experiment", ExperimentIntent>(state, "experiment");
    const experimentStore = new ExperimentStore(state);
    const runSetStore = new RunSetStore(state);
    const investigationStore = new InvestigationStore(state);
    const evidenceRecords = new EvidenceRecordStore(state);

    this.catalog = new CatalogService(workspace);
    this.recovery = new RecoveryService(workspace);
    this.retention = new RetentionService(workspace, this.recovery);
    this.repair = new RepairService(workspace, this.recovery);
    this.quarantine = new QuarantineService(workspace);
    this.workspaces = new WorkspaceService(workspace, this.catalog, this.recovery);
    const providerEnvironments = new ProviderEnvironments();
    const managedProviders = new ManagedProviders(providerEnvironments);
    this.capabilitySetups = new CapabilitySetupService(workspace, new CapabilitySetupStore(state), providerEnvironments, managedProviders);
    this.adapterApprovals = new AdapterApprovalService(workspace);
    this.capabilities = new CapabilityService(workspace, managedProviders, this.capabilitySetups, this.adapterApprovals);
    this.workloads = new WorkloadService(workspace, this.capabilities);
    this.workloadDependencies = new WorkloadDependencyService(workspace, this.workloads);
    this.runs = new RunService(workspace);
    this.imports = new ImportService(workspace);
    this.xctraceImports = new XctraceImportService(workspace, this.imports);
    const heartbeatMs = options.progressHeartbeatMs ?? defaultHeartbeatIntervalMs;
    this.analysis = new AnalysisService(workspace);
    this.memoryAnalysis = new MemoryAnalysisService(workspace);
    this.executionAnalysis = new ExecutionAnalysisService(workspace);
    this.traceAnalysis = new TraceAnalysisService(workspace);
    this.failureAnalysis = new FailureAnalysisService(workspace, this.runs);
    this.measurements = new MeasurementService(workspace);
    const receipts = new ReceiptAnalysisService({
      hotspots: this.analysis,
      memory: this.memoryAnalysis,
      execution: this.executionAnalysis,
      traces: this.traceAnalysis,
      failures: this.failureAnalysis,
      measurements: this.measurements,
      runs: this.runs,
    });

    this.captures = new CaptureService(
      workspace,
      this.workloads,
      this.capabilities,
      capturePlans,
      new CaptureRunner(workspace),
      receipts,
      heartbeatMs,
    );
    this.detachedCaptures = new DetachedCaptureService(workspace, this.captures, capturePlans, new DetachedCaptureStore(state), receipts);
    this.extraction = new ExtractionService(workspace);
    this.evidence = new EvidenceService(workspace, this.runs, evidenceRecords, runSetStore, experimentStore, investigationStore);

    this.runSets = new RunSetService(workspace, runSetStore, experimentStore);
    this.investigations = new InvestigationService(workspace, investigationStore, evidenceRecords);
    this.comparisons = new ComparisonService(workspace, this.runSets, experimentStore, evidenceRecords);
    this.scaling = new ScalingService(workspace, this.runSets, experimentStore);
    const trials = new TrialRunner(workspace, this.captures, new OracleRunner(workspace));
    const execution = new ExperimentExecution(workspace, experimentStore, trials, this.runSets, this.comparisons);
    this.experiments = new ExperimentService(
      workspace,
      this.workloads,
      this.captures,
      this.investigations,
      experimentPlans,
      experimentStore,
      execution,
      heartbeatMs,
    );
    this.analysisRecords = new AnalysisRecordService(
      {
        workspace,
        analysis: this.analysis,
        memory: this.memoryAnalysis,
        execution: this.executionAnalysis,
        traces: this.traceAnalysis,
        failures: this.failureAnalysis,
        scaling: this.scaling,
      },
      evidenceRecords,
    );
    this.reports = new ReportService(workspace, runSetStore);
    this.pipelines = new PipelineService(workspace, new PipelineStore(state));
    const reductionStore = new ReductionStore(state);
    this.reductions = new ReductionService(
      workspace,
      this.workloads,
      new PlanTokenStore<"reduction", ReductionIntent>(state, "reduction"),
      reductionStore,
      new ReductionRunner(workspace, reductionStore),
      { managed: managedProviders, setupNumber: () => this.capabilitySetups.recordedCount() + 1 },
    );
  }

  get projectRoot(): string {
    return this.handle.projectRoot;
  }

  get workspaceRoot(): string {
    return this.handle.workspaceRoot;
  }

  get location(): WorkspaceLocation {
    return this.handle.location;
  }

  hasWorkspace(): boolean {
    return this.handle.exists();
  }

  workspace(): Workspace {
    return this.handle.open();
  }

  adoptWorkspace(workspace: Workspace): void {
    this.handle.adopt(workspace);
  }

  close(): void {
    this.handle.close();
  }

  /** What a CLI command does once it is done: the workspace closes without waiting on SQLite's closing checkpoint. */
  closeBeforeExit(): void {
    this.handle.closeKeepingLog();
  }

  /** What a server does before exiting: no owned work is left running, then the workspace closes. */
  async shutdown(): Promise<void> {
    await Promise.all([cancelAllDetachedCaptures(), cancelAllCapabilitySetups()]);
    this.close();
  }
}
