/** Measurements by name prefix, keyset-paged in a total order. Pure SQL over EvidenceQuery; services decide what an absence means. */
import type { MeasurementRow } from "../../domain/evidence.ts";
import { type EvidenceQuery, sqlString, toNullableNumber, toNumber } from "../evidence-query.ts";
import { keysetAfter } from "./keyset.ts";

/** A stored measurement row with where it came from, its dimensions parsed from their JSON text. */
export type MeasurementRecord = { run_id: string; artifact_id: string } & Omit<MeasurementRow, "dimensions"> & {
    dimensions: Record<string, unknown> | null;
  };

const measurementKey = [
  "run_id",
  "artifact_id",
  "name",
  "coalesce(run_index, -1)",
  "coalesce(value_index, -1)",
  "is_warmup::INTEGER",
  "coalesce(phase, '')",
  "coalesce(worker, '')",
  "coalesce(dimensions, '')",
  "value",
];
export type MeasurementKey = (string | number)[];

export async function queryMeasurementRows(
  evidence: EvidenceQuery,
  query: { namePrefix: string | null; includeWarmups: boolean; after: MeasurementKey | null; limit: number },
): Promise<{ rows: MeasurementRecord[]; total: number; lastKey: MeasurementKey | null }> {
  const clauses = ["TRUE"];
  if (query.namePrefix) clauses.push(`starts_with(name, ${sqlString(query.namePrefix)})`);
  if (!query.includeWarmups) clauses.push("NOT is_warmup");
  const where = clauses.join(" AND ");
  const totalRows = await evidence.rows<{ total: unknown }>(`SELECT count(*) AS total FROM measurements WHERE ${where}`);
  const after = query.after ? ` AND ${keysetAfter(measurementKey, query.after)}` : "";
  const rows = await evidence.rows<Record<string, unknown>>(
    `SELECT *, ${measurementKey.map((column, index) => `${column} AS k${index}`).join(", ")} FROM measurements WHERE ${where}${after}
     ORDER BY ${measurementKey.join(", ")} LIMIT ${query.limit}`,
  );
  const last = rows[rows.length - 1];
  return {
    total: toNumber(totalRows[0]?.total),
    lastKey: last
      ? measurementKey.map((_, index) => {
          const value = last[`k${index}`];
          return typeof value === "string" ? value : toNumber(value);
        })
      : null,
    rows: rows.map((row) => {
      let dimensions: Record<string, unknown> | null = null;
      if (typeof row.dimensions === "string") {
        try {
          dimensions = JSON.parse(row.dimensions) as Record<string, unknown>;
        } catch {
          dimensions = { raw: row.dimensions };
        }
      }
      return {
        run_id: String(row.run_id),
        artifact_id: String(row.artifact_id),
        name: String(row.name),
        value: toNumber(row.value),
        unit: String(row.unit),
        aggregation: (row.aggregation as string | null) ?? null,
        is_warmup: Boolean(row.is_warmup),
        worker: (row.worker as string | null) ?? null,
        run_index: toNullableNumber(row.run_index),
        value_index: toNullableNumber(row.value_index),
        phase: (row.phase as string | null) ?? null,
        dimensions,
      };
    }),
  };
}
