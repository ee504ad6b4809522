import { digestOf } from "../domain/canonical-json.ts";
import { artifactNotFound, runNotFound } from "../domain/errors.ts";
import { artifactResourceUri, runResourceUri } from "../domain/resource-uris.ts";
import { pageLimits } from "../domain/requests/limits.ts";
import { corpusHead } from "../store/corpus.ts";
import { listArtifacts, readArtifact, registrationsOfArtifact, type ArtifactRegistration } from "../store/artifact-registry.ts";
import { currentBundlesOfArtifact } from "../store/evidence-registry.ts";
import { listRunManifests, readRun, type RunFilter, type RunManifest } from "../store/run-store.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";
import { displayArgv, displayPath } from "./host-paths.ts";
import { keysetPage, resumeAfter } from "./keyset-page.ts";

export type { RunFilter };

export type RunSummary = {
  run_id: string;
  created_at: string;
  run_type: string;
  workload_name: string | null;
  adapter: string | null;
  execution_status: string;
  capture_status: string;
  validation_status: string;
  workload_definition_id: string | null;
  source_state_id: string | null;
  environment_id: string | null;
  artifact_kinds: string[];
  resource_uri: string;
};

export type RunListResult = {
  schema_version: 1;
  corpus_commit_id: string;
  runs: RunSummary[];
  total: number;
  returned: number;
  truncated: boolean;
  next_cursor: string | null;
  coverage: { filters_applied: string[]; population_complete: boolean };
};

export type ArtifactMetadata = {
  schema_version: 1;
  /** The content identity as one object (the contract's shape); the same facts are also top-level. */
  content: { artifact_id: string; byte_length: number; payload_name: string; integrity: { sha256: string; hashed_at: string } };
  artifact_id: string;
  byte_length: number;
  payload_name: string;
  integrity: { sha256: string; hashed_at: string };
  resource_uri: string;
  registrations: ArtifactRegistration[];
  total_registrations: number;
  registrations_truncated: boolean;
  effective_sensitivity: string;
  kinds: string[];
  evidence: { extractor: string; tables: Record<string, number>; run_id: string }[];
  total_evidence: number;
};

const shownRegistrations = 10;

const filterOrder: (keyof RunFilter)[] = [
  "workload_name",
  "adapter",
  "run_type",
  "execution_status",
  "validation_status",
  "workload_definition_id",
  "source_state_id",
  "environment_id",
  "created_after",
  "created_before",
];

const sensitivityRank: Record<string, number> = { normal: 0, internal: 1, sensitive: 2 };

export class RunService {
  constructor(private readonly workspace: WorkspaceHandle) {}

  private get database() {
    return this.workspace.state().database;
  }

  /** The manifest as recorded, with executables and interpreters outside the project shown by name. */
  getRun(runId: string): RunManifest & { resource_uri: string } {
    const manifest = readRun(this.database, runId);
    if (!manifest) throw runNotFound(runId);
    const projectRoot = this.workspace.projectRoot;
    return {
      ...manifest,
      command: manifest.command ? { ...manifest.command, argv: displayArgv(manifest.command.argv ?? [], projectRoot) } : manifest.command,
      environment: withDisplayedInterpreter(manifest.environment, projectRoot),
      resource_uri: runResourceUri(runId),
    };
  }

  /** `limit` defaults to pageLimits.runs, which keeps a default answer short; the cursor pages on. */
  listRuns(request: { limit?: number | null; filter: RunFilter | null; cursor: string | null }): RunListResult {
    const limit = request.limit ?? pageLimits.runs.default;
    const workspace = this.workspace.open();
    const database = workspace.state.database;
    const filter = request.filter ?? {};
    const applied = filterOrder.filter((key) => {
      const value = filter[key];
      return value !== undefined && value !== null && !(Array.isArray(value) && value.length === 0);
    });
    const scope = digestOf({
      query: "list_runs",
      filter: Object.fromEntries(applied.map((key) => [key, filter[key]])),
      limit: limit,
    });
    const binding = { secret: workspace.cursorSecret(), scope, snapshot: "runs" };
    const resumed = resumeAfter<{ pinned_at: string; created_at: string; run_id: string }>(binding, request.cursor);
    const pinnedAt = resumed?.pinned_at ?? new Date().toISOString();
    const position = resumed && { created_at: resumed.created_at, run_id: resumed.run_id };
    const { total, manifests } = listRunManifests(database, filter, { pinnedAt, after: position, limit: limit });
    const { page, fields } = keysetPage(binding, manifests, total, limit, (last) => ({
      pinned_at: pinnedAt,
      created_at: last.created_at,
      run_id: last.run_id,
    }));
    return {
      schema_version: 1,
      corpus_commit_id: corpusHead(database).commit_id,
      runs: page.map(summarize),
      ...fields,
      coverage: { filters_applied: applied, population_complete: true },
    };
  }

  listArtifacts(request: { limit?: number | null; cursor: string | null; run_id: string | null; kind: string | null }): {
    schema_version: 1;
    corpus_commit_id: string;
    artifacts: {
      artifact_id: string;
      byte_length: number;
      kinds: string[];
      registration_count: number;
      effective_sensitivity: string;
      resource_uri: string;
    }[];
    total: number;
    returned: number;
    truncated: boolean;
    next_cursor: string | null;
  } {
    const limit = request.limit ?? pageLimits.artifacts.default;
    const workspace = this.workspace.open();
    const database = workspace.state.database;
    const scope = digestOf({ query: "list_artifacts", run_id: request.run_id, kind: request.kind, limit: limit });
    const binding = { secret: workspace.cursorSecret(), scope, snapshot: "artifacts" };
    const after = resumeAfter<string>(binding, request.cursor);
    const { total, artifacts } = listArtifacts(database, { runId: request.run_id, kind: request.kind }, { after, limit: limit });
    const { page, fields } = keysetPage(binding, artifacts, total, limit, (last) => last.artifact_id);
    return {
      schema_version: 1,
      corpus_commit_id: corpusHead(database).commit_id,
      artifacts: page.map((row) => ({
        artifact_id: row.artifact_id,
        byte_length: row.byte_length,
        kinds: row.kinds,
        registration_count: row.registration_count,
        effective_sensitivity: maxSensitivity(row.sensitivities),
        resource_uri: artifactResourceUri(row.artifact_id),
      })),
      ...fields,
    };
  }

  getArtifact(artifactId: string, runId: string | null = null): ArtifactMetadata {
    const database = this.database;
    const artifact = readArtifact(database, artifactId);
    if (!artifact) throw artifactNotFound(artifactId);
    const registrations = registrationsOfArtifact(database, artifactId).filter(
      (registration) => runId === null || registration.run_id === runId,
    );
    const bundles = currentBundlesOfArtifact(database, artifactId).filter((bundle) => runId === null || bundle.run_id === runId);
    const integrity = { sha256: artifact.artifact_id.slice("sha256:".length), hashed_at: artifact.hashed_at };
    return {
      schema_version: 1,
      content: { artifact_id: artifact.artifact_id, byte_length: artifact.byte_length, payload_name: artifact.payload_name, integrity },
      artifact_id: artifact.artifact_id,
      byte_length: artifact.byte_length,
      payload_name: artifact.payload_name,
      integrity,
      resource_uri: artifactResourceUri(artifactId),
      // An artifact imported many times has a registration (and a bundle) per run: the newest few are shown.
      registrations: registrations.slice(-shownRegistrations).reverse(),
      total_registrations: registrations.length,
      registrations_truncated: registrations.length > shownRegistrations,
      effective_sensitivity: maxSensitivity(registrations.map((registration) => registration.sensitivity)),
      kinds: [...new Set(registrations.map((registration) => registration.kind))].sort(),
      evidence: bundles.slice(0, shownRegistrations),
      total_evidence: bundles.length,
    };
  }
}

/** The environment identity with its interpreter paths shown as agents see them. */
function withDisplayedInterpreter(environment: RunManifest["environment"], projectRoot: string): RunManifest["environment"] {
  const interpreter = (environment as { interpreter?: Record<string, unknown> } | null)?.interpreter;
  if (!environment || !interpreter) return environment;
  const shown = (value: unknown) => (typeof value === "string" ? displayPath(value, projectRoot) : value);
  const python = interpreter.python as Record<string, unknown> | undefined;
  return {
    ...environment,
    interpreter: {
      ...interpreter,
      requested: shown(interpreter.requested),
      path: shown(interpreter.path),
      real_path: shown(interpreter.real_path),
      ...(python ? { python: { ...python, executable_real_path: shown(python.executable_real_path) } } : {}),
    },
  };
}

function summarize(manifest: RunManifest): RunSummary {
  return {
    run_id: manifest.run_id,
    created_at: manifest.created_at,
    run_type: manifest.run_type,
    workload_name: manifest.workload_name,
    adapter: manifest.adapter,
    execution_status: manifest.execution_status,
    capture_status: manifest.capture_status,
    validation_status: manifest.validation_status,
    workload_definition_id: manifest.workload_definition_id,
    source_state_id: manifest.source_state_id,
    environment_id: manifest.environment_id,
    artifact_kinds: [...new Set(manifest.artifacts.map((artifact) => artifact.kind))].sort(),
    resource_uri: runResourceUri(manifest.run_id),
  };
}

function maxSensitivity(values: string[]): string {
  return values.reduce((highest, value) => ((sensitivityRank[value] ?? 0) > (sensitivityRank[highest] ?? 0) ? value : highest), "normal");
}
