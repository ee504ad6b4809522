import { digestOf } from "../domain/canonical-json.ts";
import { type FlameoxError, notFound, staleInput, workspaceInvalid } from "../domain/errors.ts";
import type {
  Assessment,
  EvidenceReference,
  Finding,
  Hypothesis,
  Investigation,
  ListPage,
  RecordFindingRequest,
  RecordHypothesisRequest,
} from "../domain/investigation.ts";
import { findingResourceUri, hypothesisResourceUri, investigationResourceUri, referenceResourceUri } from "../domain/resource-uris.ts";
import { corpusHead } from "../store/corpus.ts";
import type { EvidenceRecordStore } from "../store/evidence-record-store.ts";
import type { InvestigationStore, ListedRecords, ListPosition } from "../store/investigation-store.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";
import { checkFindingRules } from "./finding-rules.ts";
import { keysetPage, resumeAfter } from "./keyset-page.ts";

const listAgain = { limit: 100 };

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
    // A new record has nothing to reread: the remedy (omit expected_revision) is the caller's to apply.
    fresh:
      current === null ? null : { tool: entity === "hypothesis" ? "get_hypothesis" : "get_finding", arguments: { [`${entity}_id`]: id } },
  });
}

/**
 * The revision after `current`: a new record needs no expected_revision, a revision needs the
 * current one (compare-and-swap). Returns the next revision number and the first creation time.
 */
function nextRevision(
  entity: "hypothesis" | "finding",
  requestedId: string | null | undefined,
  expected: number | null | undefined,
  current: { revision: number; first_created_at: string } | null,
  now: string,
): { revision: number; firstCreatedAt: string } {
  const label = entity === "hypothesis" ? "Hypothesis" : "Finding";
  if (!requestedId) {
    if (expected != null) {
      throw revisionConflict(
        entity,
        "(new)",
        null,
        expected,
        `A new ${entity} has no revision yet; omit expected_revision (pass ${entity}_id and expected_revision only to revise).`,
      );
    }
    return { revision: 1, firstCreatedAt: now };
  }
  if (!current) {
    throw entity === "hypothesis"
      ? notFound("hypothesis", requestedId, { list: { tool: "list_investigations", arguments: listAgain } })
      : notFound("finding", requestedId, { list: { tool: "list_findings", arguments: listAgain } });
  }
  if (expected == null || expected !== current.revision) {
    throw revisionConflict(
      entity,
      requestedId,
      current.revision,
      expected,
      expected == null
        ? `Revising ${entity} ${requestedId} needs expected_revision (it is at revision ${current.revision}).`
        : `${label} ${requestedId} is at revision ${current.revision}, not ${expected}: someone revised it since you read it.`,
    );
  }
  return { revision: current.revision + 1, firstCreatedAt: current.first_created_at };
}

/**
 * Investigations, hypotheses and findings. Hypotheses and findings are append-only revisions with
 * compare-and-swap on expected_revision; every write is one transaction. The rules a finding must
 * satisfy are in finding-rules.ts.
 */
export class InvestigationService {
  constructor(
    private readonly workspace: WorkspaceHandle,
    private readonly investigations: InvestigationStore,
    private readonly evidenceRecords: EvidenceRecordStore,
  ) {}

  createInvestigation(request: { question: string; symptom?: string | null; parent_investigation_id?: string | null }): Investigation {
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
    this.investigations.insertInvestigation(record);
    return record;
  }

  getInvestigation(investigationId: string): Investigation {
    const found = this.investigations.findInvestigation(investigationId);
    if (!found) throw notFound("investigation", investigationId, { list: { tool: "list_investigations", arguments: listAgain } });
    return found;
  }

  listInvestigations(request: { limit: number; cursor: string | null }): ListPage<"investigations", Investigation> {
    return this.page("investigations", {}, request, (query) => this.investigations.listInvestigations(query));
  }

  getHypothesis(hypothesisId: string): Hypothesis {
    const found = this.investigations.findHypothesis(hypothesisId);
    if (!found) throw notFound("hypothesis", hypothesisId, { list: { tool: "list_investigations", arguments: listAgain } });
    return found;
  }

  recordHypothesis(request: RecordHypothesisRequest): Hypothesis {
    this.getInvestigation(request.investigation_id);
    return this.investigations.appendHypothesis(request.hypothesis_id ?? null, (current) => {
      const now = new Date().toISOString();
      const { revision, firstCreatedAt } = nextRevision("hypothesis", request.hypothesis_id, request.expected_revision, current, now);
      if (current && current.investigation_id !== request.investigation_id) {
        throw workspaceInvalid(
          `Hypothesis ${current.hypothesis_id} belongs to investigation ${current.investigation_id}; a hypothesis cannot move to another investigation.`,
          {
            details: { hypothesis_id: current.hypothesis_id, investigation_id: current.investigation_id },
            remediation: ["Pass the hypothesis's own investigation_id, or record a new hypothesis in the other investigation."],
          },
        );
      }
      const hypothesisId = current?.hypothesis_id ?? crypto.randomUUID();
      return {
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
    });
  }

  getFinding(findingId: string): Finding {
    const found = this.investigations.findFinding(findingId);
    if (!found) throw notFound("finding", findingId, { list: { tool: "list_findings", arguments: listAgain } });
    return found;
  }

  listFindings(request: {
    limit: number;
    cursor: string | null;
    investigation_id?: string | null;
    assessment?: Assessment | null;
  }): ListPage<"findings", Finding> {
    const filter = { investigation_id: request.investigation_id ?? null, assessment: request.assessment ?? null };
    return this.page("findings", filter, request, (query) =>
      this.investigations.listFindings({ investigationId: filter.investigation_id, assessment: filter.assessment }, query),
    );
  }

  recordFinding(request: RecordFindingRequest): { finding: Finding; evidence: EvidenceReference[]; corpus_commit_id: string } {
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
    checkFindingRules(request, evidence, {
      referenceExists: (refType, refId) => this.investigations.referenceExists(refType, refId),
      comparison: (refId) => this.evidenceRecords.find("comparison", refId),
    });
    const finding = this.investigations.appendFinding(request.finding_id ?? null, (current) => {
      const now = new Date().toISOString();
      const { revision, firstCreatedAt } = nextRevision("finding", request.finding_id, request.expected_revision, current, now);
      const findingId = current?.finding_id ?? crypto.randomUUID();
      return {
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
    });
    return { finding, evidence, corpus_commit_id: corpusHead(this.workspace.state().database).commit_id };
  }

  /** A newest-first page pinned at the first page's time, so later records never shift the pages already read. */
  private page<Key extends "investigations" | "findings", Item>(
    key: Key,
    filter: Record<string, unknown>,
    request: { limit: number; cursor: string | null },
    list: (query: { pinnedAt: string; after: ListPosition | null; limit: number }) => ListedRecords<Item>,
  ): ListPage<Key, Item> {
    const workspace = this.workspace.open();
    const scope = digestOf({ query: `list_${key}`, filter, limit: request.limit });
    const binding = { secret: workspace.cursorSecret(), scope, snapshot: key };
    const resumed = resumeAfter<ListPosition & { pinned_at: string }>(binding, request.cursor);
    const pinnedAt = resumed?.pinned_at ?? new Date().toISOString();
    const after = resumed && { created_at: resumed.created_at, id: resumed.id };
    const { total, rows } = list({ pinnedAt, after, limit: request.limit });
    const { page, fields } = keysetPage(binding, rows, total, request.limit, (last) => ({
      pinned_at: pinnedAt,
      created_at: last.created_at,
      id: last.id,
    }));
    return {
      schema_version: 1,
      corpus_commit_id: corpusHead(workspace.state.database).commit_id,
      [key]: page.map((row) => row.record),
      ...fields,
    } as ListPage<Key, Item>;
  }
}
