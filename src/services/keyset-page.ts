/**
 * Keyset paging for listings: a cursor holds the position of the last row returned, bound to the query
 * (scope) and to what it reads (snapshot), so a page resumes exactly after it or is refused as stale.
 */
import { decodeCursor, encodeCursor } from "../domain/cursor.ts";

export type CursorBinding = { secret: string; scope: string; snapshot: string };

/** The position a cursor resumes after; null on the first page. */
export function resumeAfter<Position>(binding: CursorBinding, cursor: string | null): Position | null {
  return cursor ? (decodeCursor(binding.secret, cursor, { scope: binding.scope, snapshot: binding.snapshot }) as Position) : null;
}

/**
 * Cuts rows read one past `limit` (or all that remain) to the page, with the paging fields of the
 * result: the cursor resumes after the page's last row.
 */
export function keysetPage<Row, Position>(
  binding: CursorBinding,
  rows: readonly Row[],
  total: number,
  limit: number,
  positionOf: (last: Row) => Position,
): { page: Row[]; fields: { total: number; returned: number; truncated: boolean; next_cursor: string | null } } {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const truncated = rows.length > page.length;
  const next_cursor =
    truncated && last !== undefined
      ? encodeCursor(binding.secret, { scope: binding.scope, snapshot: binding.snapshot, position: positionOf(last) })
      : null;
  return { page, fields: { total, returned: page.length, truncated, next_cursor } };
}
