import type { EvidenceTable } from "../domain/evidence.ts";

/**
 * Versioned Parquet schemas of the evidence tables (docs/architecture.md). Every bundle adds `run_id` and
 * `artifact_id` to each row so bundles from many runs and workspaces can be unioned directly.
 */
export const evidenceSchemaVersion = 1;

export const evidenceColumns: Record<EvidenceTable, Record<string, string>> = {
  frames: {
    frame_key: "VARCHAR",
    function: "VARCHAR",
    file: "VARCHAR",
    line: "BIGINT",
    module: "VARCHAR",
    language: "VARCHAR",
  },
  stacks: {
    run_id: "VARCHAR",
    artifact_id: "VARCHAR",
    thread: "VARCHAR",
    process: "VARCHAR",
    frame_keys: "VARCHAR[]",
    weight: "DOUBLE",
    unit: "VARCHAR",
    sample_count: "BIGINT",
  },
  trace_events: {
    run_id: "VARCHAR",
    artifact_id: "VARCHAR",
    event_id: "BIGINT",
    parent_id: "BIGINT",
    depth: "INTEGER",
    name: "VARCHAR",
    category: "VARCHAR",
    ts_ns: "BIGINT",
    dur_ns: "BIGINT",
    pid: "VARCHAR",
    tid: "VARCHAR",
    args: "VARCHAR",
    correlation: "VARCHAR",
    device: "VARCHAR",
    stream: "VARCHAR",
    phase: "VARCHAR",
  },
  measurements: {
    run_id: "VARCHAR",
    artifact_id: "VARCHAR",
    name: "VARCHAR",
    value: "DOUBLE",
    unit: "VARCHAR",
    aggregation: "VARCHAR",
    is_warmup: "BOOLEAN",
    worker: "VARCHAR",
    run_index: "BIGINT",
    value_index: "BIGINT",
    phase: "VARCHAR",
    dimensions: "VARCHAR",
  },
  observations: {
    run_id: "VARCHAR",
    artifact_id: "VARCHAR",
    kind: "VARCHAR",
    name: "VARCHAR",
    file: "VARCHAR",
    lines: "VARCHAR",
    context: "VARCHAR",
    value: "VARCHAR",
  },
};

export const evidenceTables = Object.keys(evidenceColumns) as EvidenceTable[];

export function duckdbColumnsLiteral(table: EvidenceTable): string {
  return `{${Object.entries(evidenceColumns[table])
    .map(([name, type]) => `'${name}': '${type}'`)
    .join(", ")}}`;
}

/** A typed, empty relation for a table no bundle has, so queries need no special cases. */
export function emptyRelation(table: EvidenceTable): string {
  return `SELECT ${Object.entries(evidenceColumns[table])
    .map(([name, type]) => `CAST(NULL AS ${type}) AS "${name}"`)
    .join(", ")} WHERE false`;
}
