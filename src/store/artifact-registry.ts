import type { Database } from "bun:sqlite";
import type { StoredArtifact } from "./artifact-store.ts";
import type { RunArtifactReference } from "./run-store.ts";

export type RegistrationInput = {
  runId: string;
  artifact: StoredArtifact;
  displayName: string;
  kind: string;
  role: string;
  mediaType: string | null;
  sensitivity: string;
  producer: string | null;
  producerVersion: string | null;
  format: string | null;
};

/** Inside a write transaction, after the run row exists: the artifact object (once) and this run's registration of it. */
export function registerArtifact(
  database: Database,
  input: RegistrationInput,
  registrationId = `reg-${crypto.randomUUID()}`,
): RunArtifactReference {
  const now = new Date().toISOString();
  database
    .query("INSERT OR IGNORE INTO artifacts (artifact_id, byte_length, payload_name, stored_path, hashed_at) VALUES (?, ?, ?, ?, ?)")
    .run(input.artifact.artifact_id, input.artifact.byte_length, input.artifact.payload_name, input.artifact.stored_path, now);
  database
    .query(
      `INSERT INTO artifact_registrations (registration_id, artifact_id, run_id, display_name, kind, media_type, sensitivity, role, producer, producer_version, format, registered_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(
      registrationId,
      input.artifact.artifact_id,
      input.runId,
      input.displayName,
      input.kind,
      input.mediaType,
      input.sensitivity,
      input.role,
      input.producer,
      input.producerVersion,
      input.format,
      now,
    );
  return artifactReference(input, registrationId);
}

/** The manifest's view of a registration, known before the rows are written. */
export function artifactReference(input: RegistrationInput, registrationId: string): RunArtifactReference {
  return {
    artifact_id: input.artifact.artifact_id,
    registration_id: registrationId,
    kind: input.kind,
    role: input.role,
    display_name: input.displayName,
    byte_length: input.artifact.byte_length,
    producer: input.producer,
    format: input.format,
  };
}

/** A run's registration of an artifact, as the artifact's metadata lists it. */
export type ArtifactRegistration = {
  registration_id: string;
  run_id: string;
  display_name: string;
  kind: string;
  media_type: string | null;
  sensitivity: string;
  role: string;
  producer: string | null;
  producer_version: string | null;
  format: string | null;
  registered_at: string;
};

export type StoredArtifactRow = { artifact_id: string; byte_length: number; payload_name: string; stored_path: string; hashed_at: string };

/** What an extractor needs to pick a run's artifacts: kind, format, producer and where the bytes are. */
export type RunArtifactFile = {
  artifact_id: string;
  kind: string;
  format: string | null;
  producer: string | null;
  display_name: string;
  role: string;
  stored_path: string;
};

export function artifactExists(database: Database, artifactId: string): boolean {
  return database.query("SELECT 1 FROM artifacts WHERE artifact_id = ?").get(artifactId) !== null;
}

export function readArtifact(database: Database, artifactId: string): StoredArtifactRow | null {
  return database
    .query<StoredArtifactRow, [string]>(
      "SELECT artifact_id, byte_length, payload_name, stored_path, hashed_at FROM artifacts WHERE artifact_id = ?",
    )
    .get(artifactId);
}

/** Every stored artifact object, for integrity checks. */
export function storedArtifacts(database: Database): { artifact_id: string; stored_path: string }[] {
  return database.query<{ artifact_id: string; stored_path: string }, []>("SELECT artifact_id, stored_path FROM artifacts").all();
}

export function registrationsOfArtifact(database: Database, artifactId: string): ArtifactRegistration[] {
  return database
    .query<ArtifactRegistration, [string]>(
      "SELECT registration_id, run_id, display_name, kind, media_type, sensitivity, role, producer, producer_version, format, registered_at FROM artifact_registrations WHERE artifact_id = ? ORDER BY registered_at, registration_id",
    )
    .all(artifactId);
}

/** The runs' registrations, for deciding which extractor or capture would provide missing evidence. */
export function registrationsOfRuns(
  database: Database,
  runIds: string[],
): { run_id: string; artifact_id: string; kind: string; producer: string | null; format: string | null }[] {
  if (runIds.length === 0) return [];
  return database
    .query<{ run_id: string; artifact_id: string; kind: string; producer: string | null; format: string | null }, string[]>(
      `SELECT run_id, artifact_id, kind, producer, format FROM artifact_registrations WHERE run_id IN (${runIds.map(() => "?").join(", ")})`,
    )
    .all(...runIds);
}

/** The run that first registered an artifact. */
export function firstRunOfArtifact(database: Database, artifactId: string): string | null {
  return (
    database
      .query<{ run_id: string }, [string]>("SELECT run_id FROM artifact_registrations WHERE artifact_id = ? ORDER BY registered_at LIMIT 1")
      .get(artifactId)?.run_id ?? null
  );
}

export function runArtifactFiles(database: Database, runId: string): RunArtifactFile[] {
  return database
    .query<RunArtifactFile, [string]>(
      `SELECT r.artifact_id, r.kind, r.format, r.producer, r.display_name, r.role, a.stored_path
       FROM artifact_registrations r JOIN artifacts a ON a.artifact_id = r.artifact_id
       WHERE r.run_id = ? ORDER BY r.registered_at, r.registration_id`,
    )
    .all(runId);
}

export type ArtifactListing = {
  artifact_id: string;
  byte_length: number;
  kinds: string[];
  registration_count: number;
  sensitivities: string[];
};

/** Artifacts in id order after `after`, optionally of one run or kind; `limit + 1` rows tell whether more follow. */
export function listArtifacts(
  database: Database,
  filter: { runId: string | null; kind: string | null },
  page: { after: string | null; limit: number },
): { total: number; artifacts: ArtifactListing[] } {
  const clauses: string[] = [];
  const values: string[] = [];
  if (filter.runId) {
    clauses.push("r.run_id = ?");
    values.push(filter.runId);
  }
  if (filter.kind) {
    clauses.push("r.kind = ?");
    values.push(filter.kind);
  }
  const where = clauses.length > 0 ? `WHERE ${clauses.join(" AND ")}` : "";
  const total =
    database
      .query<{ count: number }, string[]>(
        `SELECT COUNT(DISTINCT a.artifact_id) AS count FROM artifacts a JOIN artifact_registrations r ON r.artifact_id = a.artifact_id ${where}`,
      )
      .get(...values)?.count ?? 0;
  const pageWhere = page.after ? `${where ? `${where} AND` : "WHERE"} a.artifact_id > ?` : where;
  const rows = database
    .query<{ artifact_id: string; byte_length: number; kinds: string; registration_count: number; sensitivities: string }, string[]>(
      `SELECT a.artifact_id, a.byte_length, group_concat(DISTINCT r.kind) AS kinds, COUNT(r.registration_id) AS registration_count,
              group_concat(DISTINCT r.sensitivity) AS sensitivities
       FROM artifacts a JOIN artifact_registrations r ON r.artifact_id = a.artifact_id ${pageWhere}
       GROUP BY a.artifact_id ORDER BY a.artifact_id LIMIT ?`,
    )
    .all(...values, ...(page.after ? [page.after] : []), String(page.limit + 1));
  return {
    total,
    artifacts: rows.map((row) => ({
      artifact_id: row.artifact_id,
      byte_length: row.byte_length,
      kinds: row.kinds.split(",").sort(),
      registration_count: row.registration_count,
      sensitivities: row.sensitivities.split(","),
    })),
  };
}

/** One registration with its artifact's size, or null when no registration has this id. */
export function readRegistration(
  database: Database,
  registrationId: string,
): (ArtifactRegistration & { artifact_id: string; byte_length: number }) | null {
  return database
    .query<ArtifactRegistration & { artifact_id: string; byte_length: number }, [string]>(
      `SELECT r.registration_id, r.run_id, r.display_name, r.kind, r.media_type, r.sensitivity, r.role, r.producer, r.producer_version,
              r.format, r.registered_at, r.artifact_id, a.byte_length
       FROM artifact_registrations r JOIN artifacts a ON a.artifact_id = r.artifact_id WHERE r.registration_id = ?`,
    )
    .get(registrationId);
}
