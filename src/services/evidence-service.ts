import { digestOf } from "../domain/canonical-json.ts";
import { invalidInput, notFound, runNotFound } from "../domain/errors.ts";
import type { EvidenceRecordStore } from "../store/evidence-record-store.ts";
import type { ExperimentStore } from "../store/experiment-store.ts";
import type { InvestigationStore } from "../store/investigation-store.ts";
import type { RunSetStore } from "../store/run-set-store.ts";
import { corpusHead } from "../store/corpus.ts";
import { currentBundles, readBundleRow } from "../store/evidence-registry.ts";
import { readRun, type RunManifest } from "../store/run-store.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";
import type { RunService } from "./run-service.ts";

export type EvidenceRefType = "analysis" | "artifact" | "comparison" | "generation" | "observation" | "run" | "run_set" | "trial";
export type EvidenceLookupResult = {
  schema_version: 1;
  corpus_commit_id: string;
  ref_type: EvidenceRefType;
  ref_id: string;
  data: Record<string, unknown>;
};
export type EvidenceSummaryRequest = {
  baseline_run_id?: string | null;
  candidate_run_id?: string | null;
  run_ids?: string[] | null;
  comparison_ids?: string[] | null;
  analysis_ids?: string[] | null;
  finding_ids?: string[] | null;
  output_excerpts?: "none" | "internal";
  sensitive_context?: "redact" | "include";
};
export type EvidenceSummaryBundle = {
  schema_version: 1;
  corpus_commit_id: string;
  summary_digest: string;
  summary: Record<string, unknown>;
  markdown: string;
};

type RunSummaryRow = Record<string, unknown> & { run_id: string; evidence_tables: Record<string, number> };

/** One run as summarize_evidence shows it: statuses, exit, wall time, the evidence tables it has. */
function summarizeRun(
  run: RunManifest,
  tables: Record<string, number>,
  extractors: string[],
  role: string,
  includeSensitive: boolean,
): RunSummaryRow {
  const process = (run.process ?? {}) as Record<string, unknown>;
  return {
    run_id: run.run_id,
    role,
    run_type: run.run_type,
    workload_name: run.workload_name,
    adapter: run.adapter,
    created_at: run.created_at,
    execution_status: run.execution_status,
    capture_status: run.capture_status,
    validation_status: run.validation_status,
    exit_code: process.exit_code ?? null,
    wall_time_ns: process.wall_time_ns ?? null,
    measurements: run.measurements.slice(0, 10),
    artifact_kinds: [...new Set(run.artifacts.map((artifact) => artifact.kind))].sort(),
    evidence_tables: tables,
    extractors,
    limitations: includeSensitive ? run.limitations : run.limitations.map((limitation) => limitation.slice(0, 200)),
  };
}

/** The Markdown of a summary: a table of runs, then one line per recorded analysis, comparison and finding. */
function summaryMarkdown(
  commitId: string,
  digest: string,
  runs: RunSummaryRow[],
  records: Record<string, unknown>[],
  findings: Record<string, unknown>[],
): string {
  const lines = [`# Evidence summary`, "", `Corpus commit \`${commitId}\` · digest \`${digest}\``, ""];
  if (runs.length > 0) {
    lines.push(
      "## Runs",
      "",
      "| run | role | workload | adapter | status | exit | wall (ms) | evidence |",
      "| --- | --- | --- | --- | --- | --- | --- | --- |",
    );
    for (const run of runs) {
      const wall = typeof run.wall_time_ns === "number" ? (run.wall_time_ns / 1e6).toFixed(1) : "–";
      const evidence =
        Object.entries(run.evidence_tables)
          .map(([table, count]) => `${table} ${count}`)
          .join(", ") || "none";
      lines.push(
        `| \`${String(run.run_id)}\` | ${String(run.role)} | ${String(run.workload_name ?? "import")} | ${String(run.adapter ?? "–")} | ${String(run.execution_status)} / ${String(run.validation_status)} | ${String(run.exit_code ?? "–")} | ${wall} | ${evidence} |`,
      );
    }
    lines.push("");
  }
  for (const record of records)
    lines.push(
      `- ${String(record.ref_type)} \`${String(record.ref_id)}\`: ${String(record.recipe ?? "")} (result ${String(record.result_digest ?? "")})`,
    );
  for (const finding of findings)
    lines.push(
      `- finding \`${String(finding.finding_id ?? "")}\`: ${String(finding.claim ?? finding.title ?? "")} — ${String(finding.assessment ?? "")}`,
    );
  return `${lines.join("\n").trimEnd()}\n`;
}

/** get_evidence and summarize_evidence: one piece of evidence by type and id, and a summary of several for a report. */
export class EvidenceService {
  constructor(
    private readonly workspace: WorkspaceHandle,
    private readonly runs: RunService,
    private readonly evidenceRecords: EvidenceRecordStore,
    private readonly runSets: RunSetStore,
    private readonly experiments: ExperimentStore,
    private readonly investigations: InvestigationStore,
  ) {}

  get(request: { ref_type: EvidenceRefType; ref_id: string }): EvidenceLookupResult {
    const database = this.workspace.state().database;
    const head = corpusHead(database);
    if (request.ref_type === "run") {
      const run = readRun(database, request.ref_id);
      if (!run) throw runNotFound(request.ref_id);
      const data = { ...run, evidence_bundles: currentBundles(database, { runId: request.ref_id }) };
      return { schema_version: 1, corpus_commit_id: head.commit_id, ref_type: request.ref_type, ref_id: request.ref_id, data };
    }
    const data = this.lookup(request.ref_type, request.ref_id);
    if (!data) {
      // The id may name a record of another type (an analysis asked for as a comparison): then that read is the recovery.
      const other = this.typeOf(request.ref_id, request.ref_type);
      if (other) {
        throw notFound(request.ref_type, request.ref_id, {
          field: "ref_id",
          message: `No ${request.ref_type} evidence with id ${request.ref_id} exists in this workspace; it is a ${other}.`,
          details: { ref_type: request.ref_type, actual_ref_type: other },
          remediation: [`Read it with ref_type '${other}'.`],
          list: { tool: "get_evidence", arguments: { ref_type: other, ref_id: request.ref_id } },
        });
      }
      throw notFound(request.ref_type, request.ref_id, {
        field: "ref_id",
        message: `No ${request.ref_type} evidence with id ${request.ref_id} exists in this workspace.`,
        details: { ref_type: request.ref_type },
        remediation: [
          request.ref_type === "artifact"
            ? "Call list_artifacts to choose an existing artifact."
            : `Pass the ${request.ref_type} id exactly as a receipt returned it.`,
        ],
        list: request.ref_type === "artifact" ? { tool: "list_artifacts" } : null,
      });
    }
    return { schema_version: 1, corpus_commit_id: head.commit_id, ref_type: request.ref_type, ref_id: request.ref_id, data };
  }

  /** The evidence type, other than `except`, under which `refId` names a record; null when none does. */
  private typeOf(refId: string, except: EvidenceRefType): EvidenceRefType | null {
    if (except !== "run" && readRun(this.workspace.state().database, refId)) return "run";
    const types = ["analysis", "comparison", "artifact", "run_set", "trial"] as const;
    return types.find((type) => type !== except && this.lookup(type, refId) !== null) ?? null;
  }

  /** Observations have no addressable id of their own yet, so an observation lookup finds nothing. */
  private lookup(refType: Exclude<EvidenceRefType, "run">, refId: string): Record<string, unknown> | null {
    switch (refType) {
      case "artifact":
        try {
          return this.runs.getArtifact(refId) as unknown as Record<string, unknown>;
        } catch {
          return null;
        }
      case "generation":
        return readBundleRow(this.workspace.state().database, refId);
      case "analysis":
      case "comparison": {
        const record = this.evidenceRecords.find(refType, refId);
        return record
          ? {
              recipe: record.recipe,
              corpus_commit_id: record.corpus_commit_id,
              result_digest: record.result_digest,
              created_at: record.created_at,
              record,
            }
          : null;
      }
      case "run_set":
        return this.runSets.find(refId) as Record<string, unknown> | null;
      case "trial":
        return this.experiments.findTrial(refId) as Record<string, unknown> | null;
      case "observation":
        return null;
    }
  }

  async summarize(request: EvidenceSummaryRequest): Promise<EvidenceSummaryBundle> {
    const runIds = [
      ...new Set(
        [request.baseline_run_id, request.candidate_run_id, ...(request.run_ids ?? [])].filter(
          (id): id is string => typeof id === "string" && id.length > 0,
        ),
      ),
    ];
    const references =
      runIds.length + (request.comparison_ids?.length ?? 0) + (request.analysis_ids?.length ?? 0) + (request.finding_ids?.length ?? 0);
    if (references === 0 || references > 50) {
      throw invalidInput(
        references === 0
          ? "Name at least one run, comparison, analysis or finding to summarize."
          : "At most 50 references can be summarized at once.",
        [
          {
            field: "request",
            message: references === 0 ? "at least one reference is required" : "at most 50 references",
            type: "value_error",
          },
        ],
        { remediation: ["Pass run_ids (≤20), comparison_ids (≤10), analysis_ids (≤20) or finding_ids (≤20)."] },
      );
    }
    const database = this.workspace.state().database;
    const head = corpusHead(database);
    const runs = runIds.map((runId) => {
      const run = readRun(database, runId);
      if (!run) throw runNotFound(runId);
      const bundles = currentBundles(database, { runId, maxSequence: head.sequence });
      const tables: Record<string, number> = {};
      for (const bundle of bundles)
        for (const [table, count] of Object.entries(bundle.tables)) tables[table] = (tables[table] ?? 0) + count;
      const role = run.run_id === request.baseline_run_id ? "baseline" : run.run_id === request.candidate_run_id ? "candidate" : "run";
      const extractors = [...new Set(bundles.map((bundle) => bundle.extractor))].sort();
      return summarizeRun(run, tables, extractors, role, request.sensitive_context === "include");
    });
    const records: Record<string, unknown>[] = [];
    for (const [type, ids] of [
      ["comparison", request.comparison_ids ?? []],
      ["analysis", request.analysis_ids ?? []],
    ] as const) {
      for (const id of ids) records.push({ ref_type: type, ref_id: id, ...this.get({ ref_type: type, ref_id: id }).data });
    }
    const findings = (request.finding_ids ?? []).map((id) => {
      const finding = this.investigations.findFinding(id);
      if (!finding)
        throw notFound("finding", id, {
          message: `No finding ${id} exists.`,
          remediation: ["Call list_findings to choose an existing finding."],
          list: { tool: "list_findings", arguments: { limit: 100 } },
        });
      return finding as unknown as Record<string, unknown>;
    });
    const summary = { corpus_commit_id: head.commit_id, runs, records, findings };
    const summaryDigest = digestOf(summary);
    return {
      schema_version: 1,
      corpus_commit_id: head.commit_id,
      summary_digest: summaryDigest,
      summary,
      markdown: summaryMarkdown(head.commit_id, summaryDigest, runs, records, findings),
    };
  }
}
