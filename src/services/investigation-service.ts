import type { Database } from "bun:sqlite";
import { digestOf } from "../domain/canonical-json.ts";
import { decodeCursor, encodeCursor } from "../domain/cursor.ts";
import { comparisonInvalid, type FlameoxError, notFound, staleInput, workspaceInvalid } from "../domain/errors.ts";
import { corpusHead } from "../store/corpus.ts";
import type {
  Assessment,
  EvidenceReference,
  EvidenceReferenceType,
  Finding,
  Hypothesis,
  Investigation,
  ListPage,
  RecordFindingRequest,
  RecordHypothesisRequest,
} from "../domain/investigation.ts";
import { findingResourceUri, hypothesisResourceUri, investigationResourceUri, referenceResourceUri } from "../domain/resource-uris.ts";
import type { Services } from "./services.ts";

function revisionConflict(
  entity: "hypothesis" | "finding",
  id: string,
  current: number | null,
  expected: number | null | undefined,
  message: string,
): FlameoxError {
  return staleInput(message, {
    details: { entity, id, current_revision: current, expected_revision: expected ?? null },
    remediation: [
      current === null
        ? `Omit ${entity}_id and expected_revision to create a new ${entity}.`
        : `Reread the ${entity} (current revision ${current}) and retry with expected_revision=${current}.`,
    ],
    fresh: {
      tool: entity === "hypothesis" ? "get_hypothesis" : "get_finding",
      arguments: current === null ? null : { [`${entity}_id`]: id },
    },
  });
}

/**
 * Investigations, hypotheses and findings. Hypotheses and findings are append-only revisions with
 * compare-and-swap on expected_revision; every write is one transaction.
 *
 * FINDING RULES (enforced on record_finding, in this order):
 *   1. Every evidence reference must exist (run, artifact, run_set, trial, experiment, recorded
 *      analysis or comparison) → WORKSPACE_INVALID naming the missing one.
 *   2. evidence_level 'observed' must not cite an analysis or comparison (those are derived).
 *   3. assessment 'supported' needs at least one 'supports' or 'validates' reference.
 *   4. assessment 'supported' with kind 'performance' needs a supporting recorded comparison.
 *   5. Every comparison cited as 'supports' or 'validates' by a supported finding must be valid and
 *      decisive (improved, regressed or equivalent) → COMPARISON_INVALID otherwise.
 */
export class InvestigationService {
  constructor(private readonly services: Services) {}

  private get database(): Database {
    return this.services.workspace().state.database;
  }

  createInvestigation(request: { question: string; symptom?: string | null; parent_investigation_id?: string | null }): Investigation {
    const workspace = this.services.workspace();
    if (request.parent_investigation_id) this.getInvestigation(request.parent_investigation_id);
    const investigationId = crypto.randomUUID();
    const record: Investigation = {
      schema_version: 1,
      investigation_id: investigationId,
      question: request.question,
      symptom: request.symptom ?? null,
      parent_investigation_id: request.parent_investigation_id ?? null,
      status: "open",
      created_at: new Date().toISOString(),
      resource_uri: investigationResourceUri(investigationId),
    };
    workspace.state.write(() => {
      this.database
        .query("INSERT INTO investigations (investigation_id, created_at, record) VALUES (?, ?, ?)")
        .run(investigationId, record.created_at, JSON.stringify(record));
    });
    return record;
  }

  getInvestigation(investigationId: string): Investigation {
    const row = this.database
      .query<{ record: string }, [string]>("SELECT record FROM investigations WHERE investigation_id = ?")
      .get(investigationId);
    if (!row) throw notFound("investigation", investigationId, { list: { tool: "list_investigations", arguments: { limit: 100 } } });
    return JSON.parse(row.record) as Investigation;
  }

  listInvestigations(request: { limit: number; cursor: string | null }): ListPage<"investigations", Investigation> {
    return this.page(
      "investigations",
      "SELECT record, created_at, investigation_id AS id FROM investigations",
      "created_at",
      "investigation_id",
      [],
      request,
    ) as ListPage<"investigations", Investigation>;
  }

  getHypothesis(hypothesisId: string): Hypothesis {
    const row = this.database
      .query<{ record: string }, [string]>("SELECT record FROM hypotheses WHERE hypothesis_id = ? ORDER BY revision DESC LIMIT 1")
      .get(hypothesisId);
    if (!row) throw notFound("hypothesis", hypothesisId, { list: { tool: "list_investigations", arguments: { limit: 100 } } });
    return JSON.parse(row.record) as Hypothesis;
  }

  recordHypothesis(request: RecordHypothesisRequest): Hypothesis {
    const workspace = this.services.workspace();
    this.getInvestigation(request.investigation_id);
    return workspace.state.write(() => {
      const now = new Date().toISOString();
      let revision = 1;
      let hypothesisId: string;
      let firstCreatedAt = now;
      if (!request.hypothesis_id) {
        if (request.expected_revision != null) {
          throw revisionConflict(
            "hypothesis",
            "(new)",
            null,
            request.expected_revision,
            "A new hypothesis has no revision yet; omit expected_revision (pass hypothesis_id and expected_revision only to revise).",
          );
        }
        hypothesisId = crypto.randomUUID();
      } else {
        hypothesisId = request.hypothesis_id;
        const current = this.database
          .query<{ record: string }, [string]>("SELECT record FROM hypotheses WHERE hypothesis_id = ? ORDER BY revision DESC LIMIT 1")
          .get(hypothesisId);
        if (!current) throw notFound("hypothesis", hypothesisId, { list: { tool: "list_investigations", arguments: { limit: 100 } } });
        const previous = JSON.parse(current.record) as Hypothesis;
        if (request.expected_revision == null || request.expected_revision !== previous.revision) {
          throw revisionConflict(
            "hypothesis",
            hypothesisId,
            previous.revision,
            request.expected_revision,
            request.expected_revision == null
              ? `Revising hypothesis ${hypothesisId} needs expected_revision (it is at revision ${previous.revision}).`
              : `Hypothesis ${hypothesisId} is at revision ${previous.revision}, not ${request.expected_revision}: someone revised it since you read it.`,
          );
        }
        if (previous.investigation_id !== request.investigation_id) {
          throw workspaceInvalid(
            `Hypothesis ${hypothesisId} belongs to investigation ${previous.investigation_id}; a hypothesis cannot move to another investigation.`,
            {
              details: { hypothesis_id: hypothesisId, investigation_id: previous.investigation_id },
              remediation: ["Pass the hypothesis's own investigation_id, or record a new hypothesis in the other investigation."],
            },
          );
        }
        revision = previous.revision + 1;
        firstCreatedAt = previous.first_created_at;
      }
      const record: Hypothesis = {
        schema_version: 1,
        hypothesis_id: hypothesisId,
        investigation_id: request.investigation_id,
        revision,
        claim: request.claim,
        prediction: request.prediction,
        discriminating_condition: request.discriminating_condition,
        assessment: request.assessment ?? "unassessed",
        lifecycle: request.lifecycle ?? "active",
        created_at: now,
        first_created_at: firstCreatedAt,
        resource_uri: hypothesisResourceUri(hypothesisId),
      };
      this.database
        .query("INSERT INTO hypotheses (hypothesis_id, revision, investigation_id, created_at, record) VALUES (?, ?, ?, ?, ?)")
        .run(hypothesisId, revision, request.investigation_id, now, JSON.stringify(record));
      return record;
    });
  }

  getFinding(findingId: string): Finding {
    const row = this.database
      .query<{ record: string }, [string]>("SELECT record FROM findings WHERE finding_id = ? ORDER BY revision DESC LIMIT 1")
      .get(findingId);
    if (!row) throw notFound("finding", findingId, { list: { tool: "list_findings", arguments: { limit: 100 } } });
    return JSON.parse(row.record) as Finding;
  }

  listFindings(request: {
    limit: number;
    cursor: string | null;
    investigation_id?: string | null;
    assessment?: Assessment | null;
  }): ListPage<"findings", Finding> {
    const clauses: string[] = ["f.revision = (SELECT max(revision) FROM findings g WHERE g.finding_id = f.finding_id)"];
    const values: string[] = [];
    if (request.investigation_id) {
      clauses.push("f.investigation_id = ?");
      values.push(request.investigation_id);
    }
    if (request.assessment) {
      clauses.push("json_extract(f.record, '$.assessment') = ?");
      values.push(request.assessment);
    }
    return this.page(
      "findings",
      `SELECT f.record, f.first_created_at AS created_at, f.finding_id AS id FROM findings f WHERE ${clauses.join(" AND ")}`,
      "created_at",
      "id",
      values,
      request,
      { investigation_id: request.investigation_id ?? null, assessment: request.assessment ?? null },
    ) as ListPage<"findings", Finding>;
  }

  recordFinding(request: RecordFindingRequest): { finding: Finding; evidence: EvidenceReference[]; corpus_commit_id: string } {
    const workspace = this.services.workspace();
    if (request.investigation_id) this.getInvestigation(request.investigation_id);
    if (request.hypothesis_id) {
      const hypothesis = this.getHypothesis(request.hypothesis_id);
      if (request.investigation_id && hypothesis.investigation_id !== request.investigation_id) {
        throw workspaceInvalid(
          `Hypothesis ${request.hypothesis_id} belongs to investigation ${hypothesis.investigation_id}, not ${request.investigation_id}.`,
          { details: { hypothesis_id: request.hypothesis_id }, remediation: ["Cite a hypothesis of the same investigation."] },
        );
      }
    }
    const evidence = (request.evidence ?? []).map((reference) => ({
      ...reference,
      resource_uri: referenceResourceUri(reference.ref_type, reference.ref_id),
    }));
    this.validateFinding(request, evidence);
    return workspace.state.write(() => {
      const now = new Date().toISOString();
      let findingId: string;
      let revision = 1;
      let firstCreatedAt = now;
      if (!request.finding_id) {
        if (request.expected_revision != null) {
          throw revisionConflict(
            "finding",
            "(new)",
            null,
            request.expected_revision,
            "A new finding has no revision yet; omit expected_revision (pass finding_id and expected_revision only to revise).",
          );
        }
        findingId = crypto.randomUUID();
      } else {
        findingId = request.finding_id;
        const current = this.database
          .query<{ record: string }, [string]>("SELECT record FROM findings WHERE finding_id = ? ORDER BY revision DESC LIMIT 1")
          .get(findingId);
        if (!current) throw notFound("finding", findingId, { list: { tool: "list_findings", arguments: { limit: 100 } } });
        const previous = JSON.parse(current.record) as Finding;
        if (request.expected_revision == null || request.expected_revision !== previous.revision) {
          throw revisionConflict(
            "finding",
            findingId,
            previous.revision,
            request.expected_revision,
            request.expected_revision == null
              ? `Revising finding ${findingId} needs expected_revision (it is at revision ${previous.revision}).`
              : `Finding ${findingId} is at revision ${previous.revision}, not ${request.expected_revision}: someone revised it since you read it.`,
          );
        }
        revision = previous.revision + 1;
        firstCreatedAt = previous.first_created_at;
      }
      const finding: Finding = {
        schema_version: 1,
        finding_id: findingId,
        revision,
        investigation_id: request.investigation_id ?? null,
        hypothesis_id: request.hypothesis_id ?? null,
        kind: request.kind,
        title: request.title,
        claim: request.claim,
        evidence_level: request.evidence_level,
        confidence: request.confidence,
        assessment: request.assessment,
        lifecycle: request.lifecycle ?? "active",
        limitations: request.limitations ?? [],
        next_experiments: request.next_experiments ?? [],
        evidence,
        created_at: now,
        first_created_at: firstCreatedAt,
        resource_uri: findingResourceUri(findingId),
      };
      this.database
        .query(
          "INSERT INTO findings (finding_id, revision, investigation_id, first_created_at, created_at, record) VALUES (?, ?, ?, ?, ?, ?)",
        )
        .run(findingId, revision, finding.investigation_id, firstCreatedAt, now, JSON.stringify(finding));
      const insert = this.database.query(
        "INSERT INTO evidence_references (owner_type, owner_id, owner_revision, ref_type, ref_id, relation) VALUES ('finding', ?, ?, ?, ?, ?)",
      );
      for (const reference of evidence) insert.run(findingId, revision, reference.ref_type, reference.ref_id, reference.relation);
      return { finding, evidence, corpus_commit_id: corpusHead(this.database).commit_id };
    });
  }

  /** True when a typed reference names something that exists in this workspace. */
  referenceExists(refType: EvidenceReferenceType, refId: string): boolean {
    const database = this.database;
    const table: Record<EvidenceReferenceType, [string, string]> = {
      run: ["runs", "run_id"],
      artifact: ["artifacts", "artifact_id"],
      run_set: ["run_sets", "run_set_id"],
      trial: ["trials", "trial_id"],
      experiment: ["experiments", "experiment_id"],
      analysis: ["evidence_records", "ref_id"],
      comparison: ["evidence_records", "ref_id"],
    };
    const [name, column] = table[refType];
    const extra = refType === "analysis" || refType === "comparison" ? ` AND ref_type = '${refType}'` : "";
    return database.query(`SELECT 1 FROM ${name} WHERE ${column} = ?${extra}`).get(refId) !== null;
  }

  private validateFinding(request: RecordFindingRequest, evidence: EvidenceReference[]): void {
    const missing = evidence.filter((reference) => !this.referenceExists(reference.ref_type, reference.ref_id));
    if (missing.length > 0) {
      const first = missing[0]!;
      const nextTool =
        first.ref_type === "comparison" ? "record_comparison" : first.ref_type === "analysis" ? "record_analysis" : "list_runs";
      // A finding citing nothing is an invalid finding, so WORKSPACE_INVALID (not a lookup's not-found).
      throw workspaceInvalid(
        `Evidence reference ${first.ref_type} ${first.ref_id} does not exist${missing.length > 1 ? ` (and ${missing.length - 1} more)` : ""}; a finding may only cite evidence that exists.`,
        {
          next: { tool: nextTool },
          details: {
            missing: missing.map((reference) => ({ ref_type: reference.ref_type, ref_id: reference.ref_id })),
            next_tool: nextTool,
          },
          remediation: [
            first.ref_type === "comparison"
              ? "Persist the comparison with record_comparison and cite the comparison_id it returns (compare_run_sets results are not persisted)."
              : first.ref_type === "analysis"
                ? "Persist the analysis with record_analysis and cite the analysis id it returns."
                : "Cite ids returned by list_runs, freeze_run_set, get_experiment or list_experiment_trials.",
          ],
        },
      );
    }
    if (request.evidence_level === "observed") {
      const derived = evidence.filter((reference) => reference.ref_type === "analysis" || reference.ref_type === "comparison");
      if (derived.length > 0) {
        throw workspaceInvalid(
          `An 'observed' finding cites only direct evidence (runs, artifacts, trials, run sets); ${derived[0]!.ref_type} ${derived[0]!.ref_id} is derived.`,
          {
            details: { evidence_level: "observed", derived: derived.map((reference) => reference.ref_id) },
            remediation: ["Use evidence_level='derived' when the finding rests on an analysis or comparison."],
          },
        );
      }
    }
    if (request.assessment !== "supported") return;
    const supporting = evidence.filter((reference) => reference.relation === "supports" || reference.relation === "validates");
    if (supporting.length === 0) {
      throw workspaceInvalid("A 'supported' finding needs at least one evidence reference with relation 'supports' or 'validates'.", {
        details: { assessment: "supported", next_tool: "record_comparison" },
        remediation: [
          "Cite the evidence that supports the claim (for a performance claim: a recorded valid comparison), or record the finding as 'unassessed' or 'inconclusive'.",
        ],
        next: { tool: "record_comparison" },
      });
    }
    const comparisons = supporting.filter((reference) => reference.ref_type === "comparison");
    if (request.kind === "performance" && comparisons.length === 0) {
      throw comparisonInvalid(
        "A supported performance finding needs a supporting recorded comparison: runs alone do not show that a difference is real.",
        {
          details: { kind: "performance", next_tool: "record_comparison" },
          remediation: [
            "Record a comparison of the baseline and candidate run sets with record_comparison and cite it with relation 'supports'.",
          ],
          next: { tool: "record_comparison" },
        },
      );
    }
    for (const reference of comparisons) {
      const row = this.database
        .query<{ record: string }, [string]>("SELECT record FROM evidence_records WHERE ref_type = 'comparison' AND ref_id = ?")
        .get(reference.ref_id);
      const result = row
        ? (
            JSON.parse(row.record) as {
              result: {
                validity: string;
                decision: string;
                mismatches: { code: string; message: string }[];
                reasons: { code: string; message: string }[];
              };
            }
          ).result
        : null;
      if (!result) continue;
      const decisive = result.decision === "improved" || result.decision === "regressed" || result.decision === "equivalent";
      if (result.validity !== "valid" || !decisive) {
        throw comparisonInvalid(
          `Comparison ${reference.ref_id} cannot support a finding: it is ${result.validity} and ${result.decision}${result.validity !== "valid" && result.mismatches[0] ? ` (${result.mismatches[0].message})` : !decisive && result.reasons[0] ? ` (${result.reasons[0].message})` : ""}.`,
          {
            details: {
              comparison_id: reference.ref_id,
              validity: result.validity,
              decision: result.decision,
              mismatches: result.mismatches.map((mismatch) => mismatch.code),
              reasons: result.reasons.map((reason) => reason.code),
            },
            remediation: [
              "Collect more or cleaner trials (plan_experiment/run_experiment) and record a new comparison, or record the finding as 'inconclusive'.",
            ],
            next: { tool: "plan_experiment" },
          },
        );
      }
    }
  }

  private page(
    key: string,
    baseSql: string,
    createdColumn: string,
    idColumn: string,
    values: string[],
    request: { limit: number; cursor: string | null },
    filter: Record<string, unknown> = {},
  ): Record<string, unknown> {
    const workspace = this.services.workspace();
    const database = this.database;
    const scope = digestOf({ query: `list_${key}`, filter, limit: request.limit });
    let pinnedAt = new Date().toISOString();
    let position: { created_at: string; id: string } | null = null;
    if (request.cursor) {
      const decoded = decodeCursor(workspace.cursorSecret(), request.cursor, { scope, snapshot: key }) as {
        pinned_at: string;
        created_at: string;
        id: string;
      };
      pinnedAt = decoded.pinned_at;
      position = { created_at: decoded.created_at, id: decoded.id };
    }
    const outer = `SELECT * FROM (${baseSql}) WHERE ${createdColumn} <= ?`;
    const total =
      database.query<{ count: number }, string[]>(`SELECT count(*) AS count FROM (${outer})`).get(...values, pinnedAt)?.count ?? 0;
    const keyset = position ? ` AND (${createdColumn} < ? OR (${createdColumn} = ? AND ${idColumn === "id" ? "id" : "id"} > ?))` : "";
    const rows = database
      .query<{ record: string; created_at: string; id: string }, (string | number)[]>(
        `${outer}${keyset} ORDER BY ${createdColumn} DESC, id ASC LIMIT ?`,
      )
      .all(...values, pinnedAt, ...(position ? [position.created_at, position.created_at, position.id] : []), request.limit + 1);
    const truncated = rows.length > request.limit;
    const page = rows.slice(0, request.limit);
    const last = page[page.length - 1];
    return {
      schema_version: 1,
      corpus_commit_id: corpusHead(database).commit_id,
      [key]: page.map((row) => JSON.parse(row.record) as unknown),
      total,
      returned: page.length,
      truncated,
      next_cursor:
        truncated && last
          ? encodeCursor(workspace.cursorSecret(), {
              scope,
              snapshot: key,
              position: { pinned_at: pinnedAt, created_at: last.created_at, id: last.id },
            })
          : null,
    };
  }
}
