import type { Database } from "bun:sqlite";
import { runNotFound, staleInput } from "../domain/errors.ts";
import type { ExecutionStatus, ValidationStatus } from "../domain/vocabulary.ts";

export type { ExecutionStatus, ValidationStatus } from "../domain/vocabulary.ts";
export type CaptureStatus = "pending" | "running" | "registered" | "failed" | "quarantined" | "cancelled";

/** The stored run manifest; columns mirrored in `runs` are the ones filters and ordering use. */
export type RunManifest = {
  schema_version: 1;
  revision: number;
  run_id: string;
  run_type: "execution" | "import";
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  execution_status: ExecutionStatus;
  capture_status: CaptureStatus;
  validation_status: ValidationStatus;
  workload_name: string | null;
  workload_definition_id: string | null;
  adapter: string | null;
  adapter_options: Record<string, unknown>;
  parameters: Record<string, unknown>;
  source_state_id: string | null;
  environment_id: string | null;
  source: Record<string, unknown> | null;
  environment: Record<string, unknown> | null;
  command: { argv: string[]; cwd: string; timeout_seconds: number; environment_names: string[] } | null;
  process: Record<string, unknown> | null;
  lease: { pid: number; process_start_time: string | null; boot_id: string | null } | null;
  artifacts: RunArtifactReference[];
  measurements: { name: string; value: number; unit: string }[];
  unavailable_measurements: { name: string; reason: string }[];
  limitations: string[];
  limitation_details: { source: string; code: string; message: string }[];
  failure: { code: string; message: string } | null;
  /** The last Python exception the run's stderr shows (for a crash, what it died of), parsed; absent in runs recorded before it existed. */
  exception?: RunException | null;
};

/** An exception read back from a run's output: innermost frames last, host paths made project-relative. */
export type RunException = {
  language: "python";
  exception_type: string;
  message: string;
  frames: { file: string; line: number | null; function: string }[];
  frames_omitted: number;
  /** The exception it was raised from (`cause`) or while handling (`context`). */
  chained: { relation: "cause" | "context"; exception_type: string; message: string } | null;
};

export type RunArtifactReference = {
  artifact_id: string;
  registration_id: string;
  kind: string;
  role: string;
  display_name: string;
  byte_length: number;
  producer: string | null;
  format: string | null;
};

export function insertRun(database: Database, manifest: RunManifest, reason: string): void {
  database
    .query(
      `INSERT INTO runs (run_id, run_type, created_at, revision, workload_name, workload_definition_id, adapter, execution_status, capture_status,
        validation_status, source_state_id, environment_id, lease_pid, lease_start_time, lease_boot_id, manifest)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(
      manifest.run_id,
      manifest.run_type,
      manifest.created_at,
      manifest.revision,
      manifest.workload_name,
      manifest.workload_definition_id,
      manifest.adapter,
      manifest.execution_status,
      manifest.capture_status,
      manifest.validation_status,
      manifest.source_state_id,
      manifest.environment_id,
      manifest.lease?.pid ?? null,
      manifest.lease?.process_start_time ?? null,
      manifest.lease?.boot_id ?? null,
      JSON.stringify(manifest),
    );
  appendRevisionRow(database, manifest, reason);
}

/** Writes the next revision; the caller's expected revision guards against lost updates. */
export function reviseRun(
  database: Database,
  runId: string,
  expectedRevision: number,
  change: (manifest: RunManifest) => RunManifest,
  reason: string,
): RunManifest {
  const current = readRun(database, runId);
  if (!current) throw runNotFound(runId);
  if (current.revision !== expectedRevision) {
    throw staleInput(`Run ${runId} is at revision ${current.revision}, not ${expectedRevision}.`, {
      details: { run_id: runId, current_revision: current.revision },
      remediation: ["Reread the run with get_run and retry."],
      fresh: { tool: "get_run", arguments: { run_id: runId } },
    });
  }
  const next = { ...change(structuredClone(current)), revision: current.revision + 1 };
  database
    .query(
      `UPDATE runs SET revision = ?, execution_status = ?, capture_status = ?, validation_status = ?, source_state_id = ?, environment_id = ?,
        lease_pid = ?, lease_start_time = ?, lease_boot_id = ?, manifest = ? WHERE run_id = ?`,
    )
    .run(
      next.revision,
      next.execution_status,
      next.capture_status,
      next.validation_status,
      next.source_state_id,
      next.environment_id,
      next.lease?.pid ?? null,
      next.lease?.process_start_time ?? null,
      next.lease?.boot_id ?? null,
      JSON.stringify(next),
      runId,
    );
  appendRevisionRow(database, next, reason);
  return next;
}

function appendRevisionRow(database: Database, manifest: RunManifest, reason: string): void {
  database
    .query("INSERT INTO run_revisions (run_id, revision, recorded_at, reason, manifest) VALUES (?, ?, ?, ?, ?)")
    .run(manifest.run_id, manifest.revision, new Date().toISOString(), reason, JSON.stringify(manifest));
}

export function readRun(database: Database, runId: string): RunManifest | null {
  const row = database.query<{ manifest: string }, [string]>("SELECT manifest FROM runs WHERE run_id = ?").get(runId);
  return row ? (JSON.parse(row.manifest) as RunManifest) : null;
}

export function blankManifest(runId: string, runType: "execution" | "import", createdAt: string): RunManifest {
  return {
    schema_version: 1,
    revision: 1,
    run_id: runId,
    run_type: runType,
    created_at: createdAt,
    started_at: null,
    finished_at: null,
    execution_status: runType === "import" ? "not_applicable" : "planned",
    capture_status: "pending",
    validation_status: "not_requested",
    workload_name: null,
    workload_definition_id: null,
    adapter: null,
    adapter_options: {},
    parameters: {},
    source_state_id: null,
    environment_id: null,
    source: null,
    environment: null,
    command: null,
    process: null,
    lease: null,
    artifacts: [],
    measurements: [],
    unavailable_measurements: [],
    limitations: [],
    limitation_details: [],
    failure: null,
    exception: null,
  };
}

/** What list_runs (and analyze_failures) can narrow runs by; every filter is an exact match on a mirrored column. */
export type RunFilter = {
  workload_name?: string | null;
  adapter?: string | null;
  run_type?: "execution" | "import" | null;
  execution_status?: string[] | null;
  validation_status?: string[] | null;
  workload_definition_id?: string | null;
  source_state_id?: string | null;
  environment_id?: string | null;
  created_after?: string | null;
  created_before?: string | null;
};

/**
 * Runs newest first, created no later than `pinnedAt`, after the keyset position `after`; `limit + 1`
 * manifests tell whether more follow. `total` counts every match at the pinned time.
 */
export function listRunManifests(
  database: Database,
  filter: RunFilter,
  page: { pinnedAt: string; after: { created_at: string; run_id: string } | null; limit: number },
): { total: number; manifests: RunManifest[] } {
  const clauses: string[] = ["created_at <= ?"];
  const values: (string | number)[] = [page.pinnedAt];
  for (const column of ["workload_name", "adapter", "run_type", "workload_definition_id", "source_state_id", "environment_id"] as const) {
    const value = filter[column];
    if (typeof value === "string") {
      clauses.push(`${column} = ?`);
      values.push(value);
    }
  }
  for (const column of ["execution_status", "validation_status"] as const) {
    const list = filter[column];
    if (list && list.length > 0) {
      clauses.push(`${column} IN (${list.map(() => "?").join(", ")})`);
      values.push(...list);
    }
  }
  if (filter.created_after) {
    clauses.push("created_at > ?");
    values.push(filter.created_after);
  }
  if (filter.created_before) {
    clauses.push("created_at < ?");
    values.push(filter.created_before);
  }
  const where = clauses.join(" AND ");
  const total =
    database.query<{ count: number }, (string | number)[]>(`SELECT COUNT(*) AS count FROM runs WHERE ${where}`).get(...values)?.count ?? 0;
  const pageClauses = [...clauses];
  const pageValues = [...values];
  if (page.after) {
    pageClauses.push("(created_at < ? OR (created_at = ? AND run_id > ?))");
    pageValues.push(page.after.created_at, page.after.created_at, page.after.run_id);
  }
  const rows = database
    .query<{ manifest: string }, (string | number)[]>(
      `SELECT manifest FROM runs WHERE ${pageClauses.join(" AND ")} ORDER BY created_at DESC, run_id ASC LIMIT ?`,
    )
    .all(...pageValues, page.limit + 1);
  return { total, manifests: rows.map((row) => JSON.parse(row.manifest) as RunManifest) };
}

/** Runs not yet finished: planned, running, or still capturing. Crash recovery and status look at these. */
export function openRunManifests(database: Database): RunManifest[] {
  return database
    .query<{ manifest: string }, []>(
      "SELECT manifest FROM runs WHERE execution_status IN ('planned', 'running') OR capture_status = 'running'",
    )
    .all()
    .map((row) => JSON.parse(row.manifest) as RunManifest);
}

/**
 * The longest wall time, in seconds, of a workload's recent finished execution runs (the newest
 * `recent`), or null when it has none: how long its next capture may take.
 */
export function longestRecentRunSeconds(database: Database, workloadName: string, recent = 20): number | null {
  const row = database
    .query<{ seconds: number | null }, [string, number]>(
      `SELECT MAX(seconds) AS seconds FROM (
         SELECT (julianday(json_extract(manifest, '$.finished_at')) - julianday(json_extract(manifest, '$.started_at'))) * 86400.0 AS seconds
         FROM runs
         WHERE run_type = 'execution' AND workload_name = ?
           AND json_extract(manifest, '$.started_at') IS NOT NULL AND json_extract(manifest, '$.finished_at') IS NOT NULL
         ORDER BY created_at DESC LIMIT ?
       )`,
    )
    .get(workloadName, recent);
  return row?.seconds ?? null;
}
