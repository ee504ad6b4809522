/** Versioned, append-only schema migrations of state.sqlite. Never edit a released entry. */
export type Migration = { version: number; name: string; sql: string };

export const migrations: Migration[] = [
  {
    version: 1,
    name: "workspace metadata",
    sql: `
      CREATE TABLE workspace_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      -- Every publication bumps the corpus sequence; cursors and snapshots pin it.
      CREATE TABLE corpus_commits (
        sequence INTEGER PRIMARY KEY AUTOINCREMENT,
        commit_id TEXT NOT NULL UNIQUE,
        reason TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
    `,
  },
  {
    version: 2,
    name: "runs, artifacts, plans, evidence bundles",
    sql: `
      CREATE TABLE runs (
        run_id TEXT PRIMARY KEY,
        run_type TEXT NOT NULL CHECK (run_type IN ('execution', 'import')),
        created_at TEXT NOT NULL,
        revision INTEGER NOT NULL,
        workload_name TEXT,
        workload_definition_id TEXT,
        adapter TEXT,
        execution_status TEXT NOT NULL,
        capture_status TEXT NOT NULL,
        validation_status TEXT NOT NULL,
        source_state_id TEXT,
        environment_id TEXT,
        lease_pid INTEGER,
        lease_start_time TEXT,
        lease_boot_id TEXT,
        manifest TEXT NOT NULL
      );
      CREATE INDEX runs_by_created ON runs (created_at DESC, run_id ASC);
      -- Append-only history: a run's state only ever moves forward by a new revision.
      CREATE TABLE run_revisions (
        run_id TEXT NOT NULL REFERENCES runs (run_id),
        revision INTEGER NOT NULL,
        recorded_at TEXT NOT NULL,
        reason TEXT NOT NULL,
        manifest TEXT NOT NULL,
        PRIMARY KEY (run_id, revision)
      );
      CREATE TABLE artifacts (
        artifact_id TEXT PRIMARY KEY,
        byte_length INTEGER NOT NULL,
        payload_name TEXT NOT NULL,
        stored_path TEXT NOT NULL,
        hashed_at TEXT NOT NULL
      );
      CREATE TABLE artifact_registrations (
        registration_id TEXT PRIMARY KEY,
        artifact_id TEXT NOT NULL REFERENCES artifacts (artifact_id),
        run_id TEXT NOT NULL REFERENCES runs (run_id),
        display_name TEXT NOT NULL,
        kind TEXT NOT NULL,
        media_type TEXT,
        sensitivity TEXT NOT NULL,
        role TEXT NOT NULL,
        producer TEXT,
        producer_version TEXT,
        format TEXT,
        registered_at TEXT NOT NULL
      );
      CREATE INDEX registrations_by_run ON artifact_registrations (run_id);
      CREATE INDEX registrations_by_artifact ON artifact_registrations (artifact_id);
      CREATE TABLE capture_plans (
        token_hash TEXT PRIMARY KEY,
        plan_id TEXT NOT NULL UNIQUE,
        run_id TEXT NOT NULL,
        request_digest TEXT NOT NULL,
        bound_intent TEXT NOT NULL,
        created_at TEXT NOT NULL,
        expires_at_ms INTEGER NOT NULL,
        consumed_at TEXT
      );
      CREATE TABLE detached_captures (
        idempotency_key TEXT PRIMARY KEY,
        plan_id TEXT NOT NULL,
        run_id TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE TABLE evidence_bundles (
        bundle_id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES runs (run_id),
        artifact_id TEXT NOT NULL,
        extractor TEXT NOT NULL,
        extractor_version TEXT NOT NULL,
        tables TEXT NOT NULL,
        created_at TEXT NOT NULL,
        corpus_sequence INTEGER NOT NULL,
        superseded_by TEXT
      );
      CREATE INDEX bundles_by_run ON evidence_bundles (run_id);
      CREATE INDEX bundles_by_artifact ON evidence_bundles (artifact_id);
    `,
  },
  {
    version: 4,
    name: "experiments, trials, run sets, investigations, hypotheses, findings, recorded evidence",
    sql: `
      -- Experiment plans: single-use tokens like capture plans; the realized order is in bound_intent.
      CREATE TABLE experiment_plans (
        token_hash TEXT PRIMARY KEY,
        plan_id TEXT NOT NULL UNIQUE,
        experiment_name TEXT NOT NULL,
        bound_intent TEXT NOT NULL,
        created_at TEXT NOT NULL,
        expires_at_ms INTEGER NOT NULL,
        consumed_at TEXT
      );
      CREATE TABLE experiments (
        experiment_id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        investigation_id TEXT,
        hypothesis_id TEXT,
        status TEXT NOT NULL,
        created_at TEXT NOT NULL,
        record TEXT NOT NULL
      );
      CREATE INDEX experiments_by_created ON experiments (created_at DESC, experiment_id);
      -- Trial ids are unique per experiment execution; (experiment_id, ordinal) is the realized order.
      CREATE TABLE trials (
        trial_id TEXT PRIMARY KEY,
        experiment_id TEXT NOT NULL REFERENCES experiments (experiment_id),
        ordinal INTEGER NOT NULL,
        block_id TEXT NOT NULL,
        treatment TEXT NOT NULL,
        run_id TEXT,
        outcome TEXT NOT NULL,
        record TEXT NOT NULL,
        UNIQUE (experiment_id, ordinal)
      );
      CREATE INDEX trials_by_run ON trials (run_id);
      CREATE TABLE run_sets (
        run_set_id TEXT PRIMARY KEY,
        membership_digest TEXT NOT NULL,
        corpus_commit_id TEXT NOT NULL,
        experiment_id TEXT,
        created_at TEXT NOT NULL,
        record TEXT NOT NULL
      );
      CREATE TABLE investigations (
        investigation_id TEXT PRIMARY KEY,
        created_at TEXT NOT NULL,
        record TEXT NOT NULL
      );
      CREATE INDEX investigations_by_created ON investigations (created_at DESC, investigation_id);
      -- Hypotheses and findings are append-only revisions; the highest revision is current.
      CREATE TABLE hypotheses (
        hypothesis_id TEXT NOT NULL,
        revision INTEGER NOT NULL,
        investigation_id TEXT NOT NULL,
        created_at TEXT NOT NULL,
        record TEXT NOT NULL,
        PRIMARY KEY (hypothesis_id, revision)
      );
      CREATE TABLE findings (
        finding_id TEXT NOT NULL,
        revision INTEGER NOT NULL,
        investigation_id TEXT,
        first_created_at TEXT NOT NULL,
        created_at TEXT NOT NULL,
        record TEXT NOT NULL,
        PRIMARY KEY (finding_id, revision)
      );
      CREATE INDEX findings_by_created ON findings (first_created_at DESC, finding_id);
      -- Recorded analyses and comparisons: exact inputs, pinned corpus commit, result digest.
      CREATE TABLE evidence_records (
        ref_type TEXT NOT NULL CHECK (ref_type IN ('analysis', 'comparison')),
        ref_id TEXT NOT NULL,
        recipe TEXT NOT NULL,
        corpus_commit_id TEXT NOT NULL,
        result_digest TEXT NOT NULL,
        created_at TEXT NOT NULL,
        record TEXT NOT NULL,
        PRIMARY KEY (ref_type, ref_id)
      );
      CREATE TABLE evidence_references (
        owner_type TEXT NOT NULL,
        owner_id TEXT NOT NULL,
        owner_revision INTEGER NOT NULL,
        ref_type TEXT NOT NULL,
        ref_id TEXT NOT NULL,
        relation TEXT NOT NULL
      );
      CREATE INDEX evidence_references_by_owner ON evidence_references (owner_type, owner_id, owner_revision);
    `,
  },
  {
    version: 5,
    name: "evidence bundle limitations",
    sql: `
      -- What an extractor recorded about its input (values left out, tables missing, clamps), kept with
      -- the bundle so every analysis that reads the bundle can repeat it.
      ALTER TABLE evidence_bundles ADD COLUMN limitations TEXT NOT NULL DEFAULT '[]';
    `,
  },
  {
    version: 6,
    name: "capability setup operations",
    sql: `
      -- Durable managed-provider setup: one row per idempotency key (operation_id is derived from it), the
      -- latest status as JSON and the process that owns it, so a restart reports an orphan instead of "running".
      CREATE TABLE capability_operations (
        operation_id TEXT PRIMARY KEY,
        request_digest TEXT NOT NULL,
        revision INTEGER NOT NULL,
        state TEXT NOT NULL,
        owner_pid INTEGER NOT NULL,
        owner_start_time TEXT,
        owner_boot_id TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        status TEXT NOT NULL
      );
      CREATE INDEX capability_operations_by_created ON capability_operations (created_at DESC, operation_id);
    `,
  },
  {
    version: 7,
    name: "artifact pipelines, reductions",
    sql: `
      -- A producer's pipeline registered as stage evidence; the record holds the stages as registered.
      CREATE TABLE artifact_pipelines (
        pipeline_id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL,
        pipeline_name TEXT NOT NULL,
        created_at TEXT NOT NULL,
        record TEXT NOT NULL
      );
      CREATE INDEX pipelines_by_run ON artifact_pipelines (run_id);
      -- Reduction plans: single-use tokens like capture plans; the bound identities are in bound_intent.
      CREATE TABLE reduction_plans (
        token_hash TEXT PRIMARY KEY,
        plan_id TEXT NOT NULL UNIQUE,
        reduction_id TEXT NOT NULL,
        original_artifact_id TEXT NOT NULL,
        bound_intent TEXT NOT NULL,
        created_at TEXT NOT NULL,
        expires_at_ms INTEGER NOT NULL,
        consumed_at TEXT
      );
      -- plan_digest is the plan's public id (a digest of its token); the token itself is never stored.
      CREATE TABLE reductions (
        reduction_id TEXT PRIMARY KEY,
        plan_digest TEXT NOT NULL,
        original_artifact_id TEXT NOT NULL,
        disposition TEXT NOT NULL,
        created_at TEXT NOT NULL,
        record TEXT NOT NULL
      );
      -- Every predicate attempt, in order; (reduction_id, ordinal) pages them.
      CREATE TABLE reduction_attempts (
        reduction_id TEXT NOT NULL REFERENCES reductions (reduction_id),
        ordinal INTEGER NOT NULL,
        record TEXT NOT NULL,
        PRIMARY KEY (reduction_id, ordinal)
      );
    `,
  },
];
