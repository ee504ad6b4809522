import { resolve } from "node:path";
import { workspaceNotFound } from "../domain/errors.ts";
import { defaultWorkspaceRoot, openWorkspace, type Workspace } from "../store/workspace.ts";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { WorkspaceService } from "./workspace-service.ts";
import { WorkloadService } from "./workload-service.ts";
import { CapabilityService } from "./capability-service.ts";
import { RunService } from "./run-service.ts";
import { ImportService } from "./import-service.ts";
import { CaptureService } from "./capture-service.ts";
import { AnalysisService } from "./analysis-service.ts";
import { RecoveryService } from "./recovery-service.ts";
import { CatalogService } from "./catalog-service.ts";
import { DetachedCaptureService } from "./detached-capture-service.ts";
import { ExperimentService } from "./experiment-service.ts";
import { RunSetService } from "./run-set-service.ts";
import { ComparisonService } from "./comparison-service.ts";
import { InvestigationService } from "./investigation-service.ts";
import { AnalysisRecordService } from "./analysis-record-service.ts";
import { ExtractionService } from "./extraction-service.ts";
import { EvidenceAnalysisService } from "./evidence-analysis-service.ts";
import { ReportService } from "./report-service.ts";

export type ServicesOptions = {
  projectRoot: string;
  /** Defaults to <projectRoot>/.diagnostics; an explicit one may live outside the project. */
  workspaceRoot?: string;
};

/**
 * The application services over one fixed project root. Transports hold one of these and call
 * nothing else; it opens the workspace lazily so an absent workspace is a typed error per call.
 */
export class Services {
  readonly projectRoot: string;
  readonly workspaceRoot: string;
  private opened: Workspace | undefined;
  private cache = new Map<string, unknown>();

  constructor(options: ServicesOptions) {
    this.projectRoot = resolve(options.projectRoot);
    this.workspaceRoot = resolve(options.workspaceRoot ?? defaultWorkspaceRoot(this.projectRoot));
  }

  get location(): { projectRoot: string; workspaceRoot: string } {
    return { projectRoot: this.projectRoot, workspaceRoot: this.workspaceRoot };
  }

  hasWorkspace(): boolean {
    return this.opened !== undefined || existsSync(join(this.workspaceRoot, "workspace.json"));
  }

  workspace(): Workspace {
    if (this.opened) return this.opened;
    if (!existsSync(join(this.workspaceRoot, "workspace.json"))) throw workspaceNotFound(this.projectRoot);
    this.opened = openWorkspace(this.location);
    return this.opened;
  }

  adoptWorkspace(workspace: Workspace): void {
    if (this.opened && this.opened !== workspace) this.opened.close();
    this.opened = workspace;
  }

  private service<T>(name: string, create: () => T): T {
    let existing = this.cache.get(name) as T | undefined;
    if (existing === undefined) {
      existing = create();
      this.cache.set(name, existing);
    }
    return existing;
  }

  get workspaces(): WorkspaceService {
    return this.service("workspaces", () => new WorkspaceService(this));
  }

  get workloads(): WorkloadService {
    return this.service("workloads", () => new WorkloadService(this));
  }

  get capabilities(): CapabilityService {
    return this.service("capabilities", () => new CapabilityService(this));
  }

  get runs(): RunService {
    return this.service("runs", () => new RunService(this));
  }

  get imports(): ImportService {
    return this.service("imports", () => new ImportService(this));
  }

  get captures(): CaptureService {
    return this.service("captures", () => new CaptureService(this));
  }

  get analysis(): AnalysisService {
    return this.service("analysis", () => new AnalysisService(this));
  }

  get detachedCaptures(): DetachedCaptureService {
    return this.service("detachedCaptures", () => new DetachedCaptureService(this));
  }

  get catalog(): CatalogService {
    return this.service("catalog", () => new CatalogService(this));
  }

  get recovery(): RecoveryService {
    return this.service("recovery", () => new RecoveryService(this));
  }

  get reports(): ReportService {
    return this.service("reports", () => new ReportService(this));
  }

  get extraction(): ExtractionService {
    return this.service("extraction", () => new ExtractionService(this));
  }

  get experiments(): ExperimentService {
    return this.service("experiments", () => new ExperimentService(this));
  }

  get runSets(): RunSetService {
    return this.service("runSets", () => new RunSetService(this));
  }

  get comparisons(): ComparisonService {
    return this.service("comparisons", () => new ComparisonService(this));
  }

  get investigations(): InvestigationService {
    return this.service("investigations", () => new InvestigationService(this));
  }

  get analysisRecords(): AnalysisRecordService {
    return this.service("analysisRecords", () => new AnalysisRecordService(this));
  }

  get evidenceAnalysis(): EvidenceAnalysisService {
    return this.service("evidenceAnalysis", () => new EvidenceAnalysisService(this));
  }

  close(): void {
    this.opened?.close();
    this.opened = undefined;
  }
}
