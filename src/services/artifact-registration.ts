import type { Database } from "bun:sqlite";
import type { StoredArtifact } from "../store/artifact-store.ts";
import type { RunArtifactReference } from "../store/run-store.ts";

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
