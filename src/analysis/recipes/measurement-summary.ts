/** Measurements summarized per name (and optionally per one dimension's value). Pure SQL over EvidenceQuery; services decide what an absence means. */
import { type EvidenceQuery, sqlString, toNullableNumber, toNumber } from "../evidence-query.ts";

export type MeasurementGroup = {
  name: string;
  /** The value of the grouping dimension (a package, a benchmark), or null when grouped by name only. */
  group: string | null;
  unit: string;
  count: number;
  sum: number;
  mean: number;
  median: number;
  stdev: number | null;
  minimum: number;
  maximum: number;
};

export type MeasurementSummaryQuery = {
  namePrefix: string;
  /** A key of the rows' dimensions JSON (letters, digits and underscores). */
  groupBy: string | null;
  /** `sum`: the largest totals first (where time goes); `name`: alphabetical (a set of benchmarks). */
  orderBy: "sum" | "name";
  limit: number;
};

export async function summarizeMeasurements(
  evidence: EvidenceQuery,
  query: MeasurementSummaryQuery,
): Promise<{ groups: MeasurementGroup[]; total: number }> {
  if (query.groupBy !== null && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(query.groupBy)) throw new Error(`bad dimension key ${query.groupBy}`);
  const group = query.groupBy === null ? "NULL" : `json_extract_string(dimensions, ${sqlString(`$.${query.groupBy}`)})`;
  const order = query.orderBy === "sum" ? "value_sum DESC, name, grouped" : "name, grouped";
  const rows = await evidence.rows<Record<string, unknown>>(
    `WITH summary AS (
       SELECT name, ${group} AS grouped, unit, count(*) AS value_count, sum(value) AS value_sum, avg(value) AS mean, median(value) AS median,
              stddev_samp(value) AS stdev, min(value) AS minimum, max(value) AS maximum
       FROM measurements WHERE NOT is_warmup AND starts_with(name, ${sqlString(query.namePrefix)})
       GROUP BY name, grouped, unit)
     SELECT *, count(*) OVER () AS group_total FROM summary ORDER BY ${order} LIMIT ${query.limit}`,
  );
  return {
    total: toNumber(rows[0]?.group_total),
    groups: rows.map((row) => ({
      name: String(row.name),
      group: (row.grouped as string | null) ?? null,
      unit: String(row.unit),
      count: toNumber(row.value_count),
      sum: toNumber(row.value_sum),
      mean: toNumber(row.mean),
      median: toNumber(row.median),
      stdev: toNullableNumber(row.stdev),
      minimum: toNumber(row.minimum),
      maximum: toNumber(row.maximum),
    })),
  };
}
