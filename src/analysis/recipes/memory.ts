/** Memory measurements: memray peaks and allocations, and process RSS. Pure SQL over EvidenceQuery; services decide what an absence means. */
import { type EvidenceQuery, toNumber } from "../evidence-query.ts";

export type MemoryMeasurement = {
  name: string;
  value: number;
  unit: string;
  aggregation: string | null;
  run_id: string;
  artifact_id: string;
};

export async function memoryMeasurements(evidence: EvidenceQuery): Promise<MemoryMeasurement[]> {
  const rows = await evidence.rows<Record<string, unknown>>(
    `SELECT name, value, unit, aggregation, run_id, artifact_id FROM measurements
     WHERE NOT is_warmup AND (name LIKE 'memory.%' OR name LIKE '%rss_bytes' OR name LIKE '%max_rss')
     ORDER BY name, run_id, artifact_id, value DESC`,
  );
  return rows.map((row) => ({
    name: String(row.name),
    value: toNumber(row.value),
    unit: String(row.unit),
    aggregation: (row.aggregation as string | null) ?? null,
    run_id: String(row.run_id),
    artifact_id: String(row.artifact_id),
  }));
}
