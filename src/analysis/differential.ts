/**
 * Differential hotspots between two run sets: which functions gained or lost share of the time.
 * Frame keys are stable across runs (language, function, project-relative file, line), so runs from any
 * profile format line up. Shares, not absolute weights, are compared: a sampling profile's totals depend
 * on duration and rate, its shares do not. Each run weighs equally within its side (mean of per-run
 * shares), so one long run cannot dominate a side.
 */
import type { EvidenceQuery } from "./evidence-query.ts";
import { sqlString, toNumber, toNullableNumber } from "./evidence-query.ts";
import { functionIdentitySql } from "./hotspots.ts";

export type DifferentialHotspot = {
  frame_id: string;
  function: string;
  file: string | null;
  line: number | null;
  baseline_self_share: number;
  candidate_self_share: number;
  self_share_change: number;
  baseline_total_share: number;
  candidate_total_share: number;
  total_share_change: number;
  /** gained | lost | new | vanished */
  direction: "gained" | "lost" | "new" | "vanished";
};

export type DifferentialHotspots = {
  /** The unit shares are taken in; "time (ns, samples)" when sides mix sampled time in ns and in samples. */
  unit: string | null;
  baseline_runs_with_stacks: number;
  candidate_runs_with_stacks: number;
  functions_compared: number;
  gained: DifferentialHotspot[];
  lost: DifferentialHotspot[];
};

const functionIdentity = functionIdentitySql;

function list(runIds: readonly string[]): string {
  return runIds.length === 0 ? "NULL" : runIds.map(sqlString).join(", ");
}

const timeUnits = ["ns", "samples"];

/**
 * Which unit each run is ranked in. Shares are taken within a run, so runs need not share a unit, only a
 * measure: wall/CPU time in ns and sample counts are both sampled time (a sample stands for one sampling
 * interval), so a collapsed-stacks import (samples) lines up with a speedscope one (ns). Bytes are a
 * different measure and are compared only when neither side has time.
 */
export async function stackUnitsPerRun(
  evidence: EvidenceQuery,
  baseline: readonly string[],
  candidate: readonly string[],
): Promise<{ measure: "time" | "bytes"; units: Map<string, string> } | null> {
  const rows = await evidence.fixedRowsFrom<{ run_id: string; unit: string }>(
    `SELECT DISTINCT run_id, unit FROM stacks WHERE len(frame_keys) > 0 AND run_id IN (${list([...baseline, ...candidate])})`,
    (units) => `SELECT run_id, unit FROM ${units}`,
  );
  const unitsByRun = new Map<string, Set<string>>();
  for (const row of rows) {
    const units = unitsByRun.get(row.run_id) ?? new Set<string>();
    units.add(row.unit);
    unitsByRun.set(row.run_id, units);
  }
  const choose = (preferred: string[]) => {
    const units = new Map<string, string>();
    for (const [runId, available] of unitsByRun) {
      const unit = preferred.find((candidateUnit) => available.has(candidateUnit));
      if (unit) units.set(runId, unit);
    }
    const covers = (side: readonly string[]) => side.some((runId) => units.has(runId));
    return covers(baseline) && covers(candidate) ? units : null;
  };
  const time = choose(timeUnits);
  if (time) return { measure: "time", units: time };
  const bytes = choose(["bytes"]);
  return bytes ? { measure: "bytes", units: bytes } : null;
}

/** The unit to rank one group of runs in (time beats samples beats bytes), or null without stacks. */
export async function stackUnitOf(evidence: EvidenceQuery, runIds: readonly string[]): Promise<string | null> {
  const rows = await evidence.rows<{ unit: string }>(`SELECT DISTINCT unit FROM stacks WHERE run_id IN (${list(runIds)})`);
  const units = new Set(rows.map((row) => row.unit));
  for (const unit of ["ns", "samples", "bytes"]) if (units.has(unit)) return unit;
  return null;
}

/**
 * Shares per function and side: each run's self and total weight of a function over the run's total
 * (in the run's own unit), averaged over the side's runs, so every run counts equally.
 */
function differentialSql(units: Map<string, string>, baseline: readonly string[], candidate: readonly string[]): string {
  const runUnits = [...units].map(([runId, runUnit]) => `(${sqlString(runId)}, ${sqlString(runUnit)})`).join(", ");
  return `
    WITH fmap AS (
      SELECT frame_key, ${functionIdentity} AS frame_id, any_value(function) AS function, any_value(file) AS file, min(line) AS line FROM frames GROUP BY frame_key, frame_id
    ),
    run_units(run_id, unit) AS (VALUES ${runUnits}),
    s AS (
      SELECT st.stack_row AS stack_id, st.run_id, st.frame_keys, st.weight,
             CASE WHEN st.run_id IN (${list(baseline)}) THEN 'b' ELSE 'c' END AS side
      FROM stack_rows st JOIN run_units ru ON ru.run_id = st.run_id AND ru.unit = st.unit
      WHERE len(st.frame_keys) > 0 AND st.run_id IN (${list([...baseline, ...candidate])})
    ),
    run_totals AS (SELECT run_id, side, sum(weight) AS total FROM s GROUP BY run_id, side HAVING sum(weight) > 0),
    runs_per_side AS (SELECT side, count(*) AS runs FROM run_totals GROUP BY side),
    self AS (
      SELECT s.run_id, m.frame_id, sum(s.weight) AS weight FROM s JOIN fmap m ON m.frame_key = s.frame_keys[len(s.frame_keys)] GROUP BY ALL
    ),
    members AS (SELECT DISTINCT s.stack_id, s.run_id, s.weight, m.frame_id FROM s, unnest(s.frame_keys) AS u(key) JOIN fmap m ON m.frame_key = u.key),
    total AS (SELECT run_id, frame_id, sum(weight) AS weight FROM members GROUP BY ALL),
    per_run AS (
      SELECT t.run_id, rt.side, t.frame_id, coalesce(se.weight, 0) / rt.total AS self_share, t.weight / rt.total AS total_share
      FROM total t JOIN run_totals rt ON rt.run_id = t.run_id LEFT JOIN self se ON se.run_id = t.run_id AND se.frame_id = t.frame_id
    ),
    per_side AS (
      SELECT p.frame_id, p.side, sum(p.self_share) / any_value(r.runs) AS self_share, sum(p.total_share) / any_value(r.runs) AS total_share
      FROM per_run p JOIN runs_per_side r ON r.side = p.side GROUP BY p.frame_id, p.side
    ),
    identity AS (SELECT frame_id, any_value(function) AS function, any_value(file) AS file, min(line) AS line FROM fmap GROUP BY frame_id)
    SELECT i.frame_id, i.function, i.file, i.line,
           coalesce(b.self_share, 0) AS b_self, coalesce(c.self_share, 0) AS c_self,
           coalesce(b.total_share, 0) AS b_total, coalesce(c.total_share, 0) AS c_total,
           (SELECT runs FROM runs_per_side WHERE side = 'b') AS b_runs, (SELECT runs FROM runs_per_side WHERE side = 'c') AS c_runs
    FROM identity i
    LEFT JOIN (SELECT * FROM per_side WHERE side = 'b') b ON b.frame_id = i.frame_id
    LEFT JOIN (SELECT * FROM per_side WHERE side = 'c') c ON c.frame_id = i.frame_id
    WHERE b.frame_id IS NOT NULL OR c.frame_id IS NOT NULL`;
}

function differentialEntry(row: Record<string, unknown>): DifferentialHotspot {
  const baselineSelf = toNumber(row.b_self);
  const candidateSelf = toNumber(row.c_self);
  const baselineTotal = toNumber(row.b_total);
  const candidateTotal = toNumber(row.c_total);
  const change = candidateSelf - baselineSelf;
  return {
    frame_id: String(row.frame_id),
    function: String(row.function ?? "<unknown>"),
    file: (row.file as string | null) ?? null,
    line: toNullableNumber(row.line),
    baseline_self_share: baselineSelf,
    candidate_self_share: candidateSelf,
    self_share_change: change,
    baseline_total_share: baselineTotal,
    candidate_total_share: candidateTotal,
    total_share_change: candidateTotal - baselineTotal,
    direction: baselineTotal === 0 ? "new" : candidateTotal === 0 ? "vanished" : change >= 0 ? "gained" : "lost",
  };
}

export async function differentialHotspots(
  evidence: EvidenceQuery,
  baseline: readonly string[],
  candidate: readonly string[],
  limit: number,
): Promise<DifferentialHotspots> {
  const chosen = await stackUnitsPerRun(evidence, baseline, candidate);
  if (chosen === null)
    return { unit: null, baseline_runs_with_stacks: 0, candidate_runs_with_stacks: 0, functions_compared: 0, gained: [], lost: [] };
  const distinctUnits = [...new Set(chosen.units.values())].sort();
  const unit = distinctUnits.length === 1 ? distinctUnits[0]! : `time (${distinctUnits.join(", ")})`;
  const rows = await evidence.rowsFrom<Record<string, unknown>>(
    differentialSql(chosen.units, baseline, candidate),
    (shares) => `SELECT * FROM ${shares}`,
  );
  const entries = rows.map(differentialEntry);
  const byChange = (left: DifferentialHotspot, right: DifferentialHotspot) =>
    Math.abs(right.self_share_change) - Math.abs(left.self_share_change) ||
    Math.abs(right.total_share_change) - Math.abs(left.total_share_change) ||
    (left.frame_id < right.frame_id ? -1 : 1);
  const gained = entries
    .filter((entry) => entry.self_share_change > 0 || (entry.self_share_change === 0 && entry.total_share_change > 0))
    .sort(byChange)
    .slice(0, limit);
  const lost = entries
    .filter((entry) => entry.self_share_change < 0 || (entry.self_share_change === 0 && entry.total_share_change < 0))
    .sort(byChange)
    .slice(0, limit);
  const first = rows[0];
  return {
    unit,
    baseline_runs_with_stacks: first ? toNumber(first.b_runs) : 0,
    candidate_runs_with_stacks: first ? toNumber(first.c_runs) : 0,
    functions_compared: entries.length,
    gained,
    lost,
  };
}

/** Per run and function: self weight and the run's total, for scaling's growth ranking. */
export async function selfWeightsPerRun(
  evidence: EvidenceQuery,
  runIds: readonly string[],
  unit: string,
): Promise<{ run_id: string; frame_id: string; function: string; file: string | null; self_weight: number; total_weight: number }[]> {
  const rows = await evidence.rows<Record<string, unknown>>(`
    WITH fmap AS (SELECT frame_key, ${functionIdentity} AS frame_id, any_value(function) AS function, any_value(file) AS file FROM frames GROUP BY frame_key, frame_id),
    s AS (SELECT run_id, frame_keys, weight FROM stacks WHERE unit = ${sqlString(unit)} AND len(frame_keys) > 0 AND run_id IN (${list(runIds)})),
    self AS (SELECT s.run_id, m.frame_id, any_value(m.function) AS function, any_value(m.file) AS file, sum(s.weight) AS self_weight FROM s JOIN fmap m ON m.frame_key = s.frame_keys[len(s.frame_keys)] GROUP BY s.run_id, m.frame_id),
    totals AS (SELECT run_id, sum(weight) AS total FROM s GROUP BY run_id)
    SELECT self.*, totals.total AS total_weight FROM self JOIN totals USING (run_id)`);
  return rows.map((row) => ({
    run_id: String(row.run_id),
    frame_id: String(row.frame_id),
    function: String(row.function ?? "<unknown>"),
    file: (row.file as string | null) ?? null,
    self_weight: toNumber(row.self_weight),
    total_weight: toNumber(row.total_weight),
  }));
}
