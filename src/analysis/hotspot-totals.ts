/** How many bits the set of frame keys that share a frame id is hashed into: a key whose bit is clear shares nothing. */
const sharedBits = 1 << 20;

/**
 * Self and total weight per frame, thread and time domain in one pass over the stacks, in memory
 * bounded by the frames, not the stacks. Total weight counts a frame once per stack even under recursion:
 *   - each stack's frame keys are unnested with their positions, and a row is kept only where its key
 *     first occurs in the stack (`list_position` on the unnested row, a short scan: a lambda over the
 *     list that captures the list itself, or list_distinct's hash set per list, cost 5–10× more);
 *   - a key whose frame id is reached by no other key (every key when grouping by line; most when
 *     grouping by function) is summed per key, and only those few thousand sums meet the frame map,
 *     instead of a lookup for every frame of every stack;
 *   - a function reached by several keys (several lines of it) may still occur twice in one stack, so
 *     the rows of such keys, told apart by a bit set of their hashes and then a join that only they
 *     probe, keep their stack id and are reduced to one per (function, stack) before summing;
 *   - the first row of each stack (its root, or a NULL key) carries the stack's weight into its
 *     domain's grand total, which also counts stacks whose frames are missing from the frames table.
 * A join followed by DISTINCT over every (stack, frame) pair, or a map lookup per frame, gives the
 * same numbers but needs memory in proportion to all frames of all stacks, or minutes at 10M stacks.
 * `fmap` (frame_key → frame_id) must be defined before these clauses; they end with `totals` and `grand`.
 */
export function totalsSql(stacksWithDomain: string, options: { perThread: boolean }): string {
  const threadColumn = options.perThread ? "thread" : "NULL::VARCHAR";
  const bit = (key: string) => `CAST(hash(${key}) % ${sharedBits} AS INTEGER)`;
  return `keys AS (SELECT frame_key, frame_id, count(*) OVER (PARTITION BY frame_id) > 1 AS shared FROM fmap),
    sharers AS MATERIALIZED (
      SELECT frame_key, frame_id, row_number() OVER (PARTITION BY frame_key ORDER BY frame_id) AS pair FROM keys
      WHERE frame_key IN (SELECT frame_key FROM keys WHERE shared)
    ),
    shared_bits AS (SELECT bitstring_agg(${bit("frame_key")}, 0, ${sharedBits - 1}) AS bits FROM sharers),
    ${firstsSql(stacksWithDomain, threadColumn)},
    flagged AS (SELECT f.*, get_bit((SELECT bits FROM shared_bits), ${bit("key")}) = 1 AS maybe_shared FROM firsts f),
    per_group AS (
      SELECT CASE WHEN x.frame_id IS NULL THEN f.key END AS key, x.frame_id, f.thread, f.domain, CASE WHEN x.frame_id IS NOT NULL THEN f.stack_id END AS stack_id,
             CASE WHEN x.frame_id IS NULL THEN sum(f.weight) ELSE any_value(f.weight) END AS total_weight,
             coalesce(sum(f.weight) FILTER (WHERE f.is_leaf), 0) AS self_weight,
             coalesce(sum(f.weight) FILTER (WHERE f.position = 1 AND coalesce(x.pair, 1) = 1), 0) AS stack_weight
      FROM flagged f LEFT JOIN sharers x ON x.frame_key = CASE WHEN f.maybe_shared THEN f.key END
      GROUP BY 1, 2, 3, 4, 5
    ),
    per_identity AS (
      SELECT key, frame_id, thread, domain, sum(total_weight) AS total_weight, sum(self_weight) AS self_weight, sum(stack_weight) AS stack_weight
      FROM per_group GROUP BY ALL
    ),
    totals AS (
      SELECT coalesce(p.frame_id, m.frame_id) AS frame_id, p.thread, p.domain, sum(p.total_weight) AS total_weight, sum(p.self_weight) AS self_weight
      FROM per_identity p LEFT JOIN fmap m ON m.frame_key = p.key
      WHERE p.frame_id IS NOT NULL OR m.frame_id IS NOT NULL GROUP BY ALL
    ),
    grand AS (SELECT domain, sum(stack_weight) AS total FROM per_identity GROUP BY domain)`;
}

/** Each stack's keys where they first occur in it, with their 1-based position in `members`; the row at position 1 is kept even when its key is NULL. */
function firstsSql(stacksWithDomain: string, threadColumn: string): string {
  return `s AS (SELECT stack_id, frame_keys AS members, frame_keys[-1] AS leaf, weight, ${threadColumn} AS thread, domain
        FROM (${stacksWithDomain})),
    exploded AS (SELECT stack_id, leaf, weight, thread, domain, members, unnest(members) AS key, generate_subscripts(members, 1) AS position FROM s),
    firsts AS (
      SELECT stack_id, weight, thread, domain, key, position, key = leaf AS is_leaf FROM exploded
      WHERE position = 1 OR (key IS NOT NULL AND list_position(members, key) = position)
    )`;
}
