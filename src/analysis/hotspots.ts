import type { StackUnit } from "../domain/evidence.ts";
import { acceleratorTrackCategories } from "../domain/trace-categories.ts";
import { totalsSql } from "./hotspot-totals.ts";
import { type EvidenceQuery, sqlString, toNumber, toNullableNumber } from "./evidence-query.ts";

/**
 * Hotspots and call edges are queries over `stacks` × `frames`. Self weight is the
 * weight of stacks whose leaf is the frame; total weight counts each stack containing the frame
 * once, so recursion is not double-counted. A ranking never mixes units.
 */
export type HotspotGrouping = "function" | "line";

export type HotspotQuery = {
  groupBy: HotspotGrouping;
  unit: StackUnit | null;
  thread: string | null;
  perThread: boolean;
  orderBy: "self" | "total";
};

export type Hotspot = { rank: number } & FrameIdentity & {
    thread: string | null;
    self_weight: number;
    total_weight: number;
    self_share: number;
    total_share: number;
    unit: StackUnit;
    /**
     * Whose clock the time is on, when the ranking holds accelerator time: `accelerator` for slices on
     * an accelerator's track (kernels, copies, device annotations), `cpu` for host threads. Each row's
     * shares are then of its own domain's total. null when the ranking has no accelerator time.
     */
    time_domain: TimeDomain | null;
  };

export type TimeDomain = "cpu" | "accelerator";

export type UnitSummary = { unit: StackUnit; total_weight: number; stack_rows: number };

const unitsSql = "SELECT unit, sum(weight) AS total_weight, count(*) AS stack_rows FROM stacks GROUP BY unit";

export async function stackUnits(evidence: EvidenceQuery): Promise<UnitSummary[]> {
  const rows = await evidence.fixedRowsFrom<{ unit: StackUnit; total_weight: unknown; stack_rows: unknown }>(
    unitsSql,
    (units) => `SELECT unit, total_weight, stack_rows FROM ${units} ORDER BY unit`,
  );
  return rows.map((row) => ({ unit: row.unit, total_weight: toNumber(row.total_weight), stack_rows: toNumber(row.stack_rows) }));
}

/** Time beats samples beats bytes when the caller did not choose: it is what "hot" usually means. */
export function chooseUnit(units: UnitSummary[], requested: StackUnit | null): StackUnit | null {
  if (requested) return units.some((unit) => unit.unit === requested) ? requested : null;
  for (const preferred of ["ns", "samples", "bytes", "retained_bytes"] as const)
    if (units.some((unit) => unit.unit === preferred)) return preferred;
  return null;
}

/**
 * The function a frame belongs to: language, name and file; a frame without a file is told apart by
 * its module (`memcpy` in libc.so.6 is not `memcpy` in libfoo.so), as its frame key is. Frames with
 * no module keep the identity they always had.
 */
export const functionIdentitySql =
  "'fn_' || substr(sha256(coalesce(language, '') || chr(0) || coalesce(function, '') || chr(0) || coalesce(file, '') || CASE WHEN file IS NULL AND module IS NOT NULL THEN chr(0) || module ELSE '' END), 1, 24)";

/** Maps each frame key to the identity hotspots group by: the frame itself, or its function. */
function frameMapSql(groupBy: HotspotGrouping): string {
  const identity = groupBy === "line" ? "frame_key" : functionIdentitySql;
  return `SELECT frame_key, ${identity} AS frame_id, any_value(function) AS function, any_value(file) AS file,
            ${groupBy === "line" ? "any_value(line)" : "min(line)"} AS line, any_value(module) AS module, any_value(language) AS language
          FROM frames GROUP BY frame_key, ${identity}`;
}

function stacksFilter(query: { unit: StackUnit; thread: string | null }): string {
  const clauses = [`unit = ${sqlString(query.unit)}`];
  if (query.thread !== null) clauses.push(`coalesce(thread, '') = ${sqlString(query.thread)}`);
  return `${clauses.join(" AND ")} AND len(frame_keys) > 0`;
}

/** The stacks of one unit (and thread), each with `stack_id`, a number of its own (two equal rows count apart). */
function stacksSql(query: { unit: StackUnit; thread: string | null }, extraColumns: string[] = []): string {
  const columns = ["frame_keys", "weight", "thread", ...extraColumns].join(", ");
  return `SELECT stack_row AS stack_id, ${columns} FROM stack_rows WHERE ${stacksFilter(query)}`;
}

/**
 * The stacks with their time domain. Only time (ns) can be on an accelerator's clock: a stack is
 * accelerator time when its root slice has an accelerator-track category, or when it lies on a track
 * (run, artifact, process) that holds such a stack (kineto draws each device as its own process).
 */
function stacksWithDomainSql(query: { unit: StackUnit; thread: string | null }): string {
  if (query.unit !== "ns") return `SELECT base.*, 'cpu' AS domain FROM (${stacksSql(query)}) base`;
  const categories = acceleratorTrackCategories.map(sqlString).join(", ");
  return `WITH base AS (${stacksSql(query, ["run_id", "artifact_id", "process"])}),
      device_roots AS (SELECT DISTINCT frame_key FROM frames WHERE module IN (${categories})),
      rooted AS (SELECT base.*, base.frame_keys[1] IN (SELECT frame_key FROM device_roots) AS device_root FROM base),
      tracks AS (SELECT DISTINCT run_id, artifact_id, process FROM rooted WHERE device_root AND process IS NOT NULL)
    SELECT r.stack_id, r.frame_keys, r.weight, r.thread,
           CASE WHEN r.device_root OR t.process IS NOT NULL THEN 'accelerator' ELSE 'cpu' END AS domain
    FROM rooted r LEFT JOIN tracks t ON t.run_id = r.run_id AND t.artifact_id = r.artifact_id AND t.process = r.process`;
}

/** The whole ranking, one row per (frame, thread, domain) with its position, the grand totals and the running self weight. */
function rankingSql(query: HotspotQuery & { unit: StackUnit }): string {
  const [first, second] = query.orderBy === "self" ? ["self_weight", "total_weight"] : ["total_weight", "self_weight"];
  return `WITH fmap AS MATERIALIZED (${frameMapSql(query.groupBy)}),
    ${totalsSql(stacksWithDomainSql(query), { perThread: query.perThread })},
    identity AS (SELECT frame_id, any_value(function) AS function, any_value(file) AS file, min(line) AS line, any_value(module) AS module, any_value(language) AS language FROM fmap GROUP BY frame_id),
    ranked AS (
      SELECT t.frame_id, t.thread, t.domain, t.self_weight, t.total_weight, i.function, i.file, i.line, i.module, i.language
      FROM totals t JOIN identity i ON i.frame_id = t.frame_id
    )
    SELECT r.*, (SELECT coalesce(sum(total), 0) FROM grand) AS grand_total,
           (SELECT coalesce(sum(total), 0) FROM grand WHERE domain = 'cpu') AS cpu_total,
           (SELECT coalesce(sum(total), 0) FROM grand WHERE domain = 'accelerator') AS accelerator_total,
           count(*) OVER () AS row_total,
           row_number() OVER ranking AS position,
           sum(self_weight) OVER (ranking ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running_self
    FROM ranked r
    WINDOW ranking AS (ORDER BY ${first} DESC, ${second} DESC, frame_id, thread, domain)`;
}

export type HotspotPage = {
  hotspots: Hotspot[];
  total: number;
  total_weight: number;
  hidden_self_share: number;
  /** Each domain's total weight, the denominator of its rows' shares; null when there is no accelerator time. */
  domain_totals: Record<TimeDomain, number> | null;
};

/**
 * One page of the ranking. The ranking is computed once per pinned bundle set and question, so a
 * repeated question or the next page reads rows back by position.
 */
export async function queryHotspots(
  evidence: EvidenceQuery,
  query: HotspotQuery & { unit: StackUnit },
  page: { offset: number; limit: number },
): Promise<HotspotPage> {
  const rows = await evidence.rowsFrom<Record<string, unknown>>(
    rankingSql(query),
    (ranked) => `SELECT * FROM ${ranked} WHERE position > $1 ORDER BY position LIMIT $2`,
    [page.offset, page.limit],
  );
  const totals = rows.length > 0 ? rows[0]! : await domainTotals(evidence, query);
  const grand = toNumber(totals.grand_total);
  const byDomain: Record<TimeDomain, number> = { cpu: toNumber(totals.cpu_total), accelerator: toNumber(totals.accelerator_total) };
  const split = byDomain.accelerator > 0;
  const total = rows.length > 0 ? toNumber(rows[0]!.row_total) : 0;
  const lastRunning = rows.length > 0 ? toNumber(rows[rows.length - 1]!.running_self) : 0;
  const hotspots = rows.map((row, index) => {
    const domain = row.domain as TimeDomain;
    const denominator = split ? byDomain[domain] : grand;
    return {
      rank: page.offset + index + 1,
      ...frameIdentityOf(row),
      thread: query.perThread ? ((row.thread as string | null) ?? null) : null,
      self_weight: toNumber(row.self_weight),
      total_weight: toNumber(row.total_weight),
      self_share: denominator > 0 ? toNumber(row.self_weight) / denominator : 0,
      total_share: denominator > 0 ? toNumber(row.total_weight) / denominator : 0,
      unit: query.unit,
      time_domain: split ? domain : null,
    };
  });
  // Self weights partition the grand total, so whatever this page and the earlier ones did not show is hidden.
  const hidden = grand > 0 ? Math.max(0, 1 - lastRunning / grand) : 0;
  return {
    hotspots,
    total,
    total_weight: grand,
    hidden_self_share: rows.length > 0 ? hidden : page.offset === 0 ? 0 : hidden,
    domain_totals: split ? byDomain : null,
  };
}

async function domainTotals(evidence: EvidenceQuery, query: HotspotQuery & { unit: StackUnit }): Promise<Record<string, unknown>> {
  const rows = await evidence.rowsFrom<Record<string, unknown>>(
    `SELECT coalesce(sum(weight), 0) AS grand_total, coalesce(sum(weight) FILTER (WHERE domain = 'cpu'), 0) AS cpu_total,
            coalesce(sum(weight) FILTER (WHERE domain = 'accelerator'), 0) AS accelerator_total
     FROM (${stacksWithDomainSql(query)})`,
    (totals) => `SELECT grand_total, cpu_total, accelerator_total FROM ${totals}`,
  );
  return rows[0] ?? {};
}

export type CallEdge = {
  frame_id: string | null;
  function: string;
  file: string | null;
  line: number | null;
  weight: number;
  share_of_frame: number;
  stack_count: number;
};

export type FrameIdentity = {
  frame_id: string;
  function: string;
  file: string | null;
  line: number | null;
  module: string | null;
  language: string;
};

/** A frame's identity from a query row; hotspot rows and resolved frames describe frames the same way. */
function frameIdentityOf(row: Record<string, unknown>): FrameIdentity {
  return {
    frame_id: String(row.frame_id),
    function: String(row.function ?? "<unknown>"),
    file: (row.file as string | null) ?? null,
    line: toNullableNumber(row.line),
    module: (row.module as string | null) ?? null,
    language: String(row.language ?? "unknown"),
  };
}

export async function resolveFrame(
  evidence: EvidenceQuery,
  frameId: string,
): Promise<{ groupBy: HotspotGrouping; identity: FrameIdentity } | null> {
  const groupBy: HotspotGrouping = frameId.startsWith("fn_") ? "function" : "line";
  const rows = await evidence.rows<Record<string, unknown>>(
    `SELECT frame_id, any_value(function) AS function, any_value(file) AS file, min(line) AS line, any_value(module) AS module, any_value(language) AS language
     FROM (${frameMapSql(groupBy)}) WHERE frame_id = ${sqlString(frameId)} GROUP BY frame_id`,
  );
  const row = rows[0];
  if (!row) return null;
  return {
    groupBy,
    identity: frameIdentityOf(row),
  };
}

/** The units of the stacks that contain a frame, so a drill-down without a unit reads the frame's own evidence (a leak's retained bytes). */
export async function frameStackUnits(evidence: EvidenceQuery, frameId: string, groupBy: HotspotGrouping): Promise<UnitSummary[]> {
  const rows = await evidence.rows<{ unit: StackUnit }>(
    `WITH fmap AS (${frameMapSql(groupBy)}), keys AS (SELECT list(frame_key) AS keys FROM fmap WHERE frame_id = ${sqlString(frameId)})
     SELECT DISTINCT s.unit FROM stacks s, keys k WHERE list_has_any(s.frame_keys, k.keys) ORDER BY s.unit`,
  );
  return rows.map((row) => ({ unit: row.unit, total_weight: 0, stack_rows: 0 }));
}

/**
 * Callers (direction -1) or callees (+1) of a frame: the neighbouring frame in each stack that
 * contains it, each stack counted once per neighbour. A root frame's caller and a leaf's callee
 * are reported as `<root>` and `<self>`.
 */
export async function queryCallEdges(
  evidence: EvidenceQuery,
  request: { frameId: string; groupBy: HotspotGrouping; direction: -1 | 1; unit: StackUnit; thread: string | null },
  page: { offset: number; limit: number },
): Promise<{ edges: CallEdge[]; total: number; frame_weight: number }> {
  const neighbour =
    request.direction === -1
      ? "CASE WHEN h.i = 1 THEN NULL ELSE h.frame_keys[h.i - 1] END"
      : "CASE WHEN h.i = len(h.frame_keys) THEN NULL ELSE h.frame_keys[h.i + 1] END";
  const sql = `
    WITH fmap AS (${frameMapSql(request.groupBy)}),
    s AS (${stacksSql(request)}),
    positions AS (SELECT stack_id, weight, frame_keys, generate_subscripts(frame_keys, 1) AS i FROM s),
    hits AS (SELECT p.stack_id, p.weight, p.frame_keys, p.i FROM positions p JOIN fmap m ON m.frame_key = p.frame_keys[p.i] WHERE m.frame_id = ${sqlString(request.frameId)}),
    frame_weight AS (SELECT coalesce(sum(weight), 0) AS weight FROM (SELECT DISTINCT stack_id, weight FROM hits)),
    neighbours AS (SELECT DISTINCT h.stack_id, h.weight, m.frame_id AS neighbour_id FROM hits h LEFT JOIN fmap m ON m.frame_key = ${neighbour}),
    grouped AS (SELECT neighbour_id, sum(weight) AS weight, count(*) AS stack_count FROM neighbours GROUP BY neighbour_id),
    identity AS (SELECT frame_id, any_value(function) AS function, any_value(file) AS file, min(line) AS line FROM fmap GROUP BY frame_id)
    SELECT g.neighbour_id, g.weight, g.stack_count, i.function, i.file, i.line, (SELECT weight FROM frame_weight) AS frame_weight, count(*) OVER () AS row_total
    FROM grouped g LEFT JOIN identity i ON i.frame_id = g.neighbour_id
    ORDER BY g.weight DESC, g.neighbour_id NULLS LAST
    LIMIT ${page.limit} OFFSET ${page.offset}`;
  const rows = await evidence.rows<Record<string, unknown>>(sql);
  const frameWeight = rows.length > 0 ? toNumber(rows[0]!.frame_weight) : 0;
  return {
    total: rows.length > 0 ? toNumber(rows[0]!.row_total) : 0,
    frame_weight: frameWeight,
    edges: rows.map((row) => ({
      frame_id: (row.neighbour_id as string | null) ?? null,
      function: row.neighbour_id === null ? (request.direction === -1 ? "<root>" : "<self>") : String(row.function ?? "<unknown>"),
      file: (row.file as string | null) ?? null,
      line: toNullableNumber(row.line),
      weight: toNumber(row.weight),
      share_of_frame: frameWeight > 0 ? toNumber(row.weight) / frameWeight : 0,
      stack_count: toNumber(row.stack_count),
    })),
  };
}

export type StackExample = {
  weight: number;
  share: number;
  thread: string | null;
  frames: { frame_id: string; function: string; file: string | null; line: number | null }[];
  truncated_frames: number;
};

/** The heaviest distinct stacks through a frame, root first, each bounded to 64 frames nearest the leaf. */
export async function queryStackExamples(
  evidence: EvidenceQuery,
  request: { frameId: string; groupBy: HotspotGrouping; unit: StackUnit; thread: string | null },
  page: { offset: number; limit: number },
): Promise<{ examples: StackExample[]; total: number }> {
  const sql = `
    WITH fmap AS (${frameMapSql(request.groupBy)}),
    s AS (${stacksSql(request)}),
    grand AS (SELECT coalesce(sum(weight), 0) AS total FROM s),
    containing AS (
      SELECT s.frame_keys, s.thread, s.weight FROM s
      WHERE EXISTS (SELECT 1 FROM unnest(s.frame_keys) AS u(key) JOIN fmap m ON m.frame_key = u.key WHERE m.frame_id = ${sqlString(request.frameId)})
    ),
    grouped AS (SELECT frame_keys, thread, sum(weight) AS weight FROM containing GROUP BY frame_keys, thread)
    SELECT frame_keys, thread, weight, (SELECT total FROM grand) AS grand_total, count(*) OVER () AS row_total
    FROM grouped ORDER BY weight DESC, thread NULLS FIRST, array_to_string(frame_keys, ',')
    LIMIT ${page.limit} OFFSET ${page.offset}`;
  const rows = await evidence.rows<{
    frame_keys: string[];
    thread: string | null;
    weight: unknown;
    grand_total: unknown;
    row_total: unknown;
  }>(sql);
  const keys = new Set<string>();
  for (const row of rows) for (const key of row.frame_keys.slice(-64)) keys.add(key);
  const identities = new Map<string, { frame_id: string; function: string; file: string | null; line: number | null }>();
  if (keys.size > 0) {
    const list = [...keys].map(sqlString).join(", ");
    for (const row of await evidence.rows<Record<string, unknown>>(
      `SELECT frame_key, frame_id, function, file, line FROM (${frameMapSql(request.groupBy)}) WHERE frame_key IN (${list})`,
    )) {
      identities.set(String(row.frame_key), {
        frame_id: String(row.frame_id),
        function: String(row.function ?? "<unknown>"),
        file: (row.file as string | null) ?? null,
        line: toNullableNumber(row.line),
      });
    }
  }
  return {
    total: rows.length > 0 ? toNumber(rows[0]!.row_total) : 0,
    examples: rows.map((row) => {
      const grand = toNumber(row.grand_total);
      const shown = row.frame_keys.slice(-64);
      return {
        weight: toNumber(row.weight),
        share: grand > 0 ? toNumber(row.weight) / grand : 0,
        thread: row.thread,
        frames: shown.map((key) => identities.get(key) ?? { frame_id: key, function: "<unknown>", file: null, line: null }),
        truncated_frames: row.frame_keys.length - shown.length,
      };
    }),
  };
}
