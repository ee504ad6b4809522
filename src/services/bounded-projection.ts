/**
 * A result cut down to fit beside something else in one tool result: every list keeps its first
 * items, long strings are shortened, named fields are left out, and what was cut is said. The cut is
 * by shape, not by field name, so a field a service adds later (a new ranking) comes through as well.
 */

export type Projection = { value: Record<string, unknown> | null; omitted: string[] };

const maximumStringCharacters = 300;
const maximumDepth = 6;

function project(value: unknown, path: string, items: number, drop: ReadonlySet<string>, omitted: string[], depth: number): unknown {
  if (typeof value === "string") return value.length > maximumStringCharacters ? `${value.slice(0, maximumStringCharacters - 1)}…` : value;
  if (value === null || typeof value !== "object") return value;
  if (depth >= maximumDepth) {
    omitted.push(`${path}: nested too deep`);
    return null;
  }
  if (Array.isArray(value)) {
    if (value.length > items) omitted.push(`${path}: first ${items} of ${value.length}`);
    return value.slice(0, items).map((item, index) => project(item, `${path}[${index}]`, items, drop, omitted, depth + 1));
  }
  const projected: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    if (drop.has(key)) continue;
    projected[key] = project(field, path ? `${path}.${key}` : key, items, drop, omitted, depth + 1);
  }
  return projected;
}

/**
 * The largest projection (at most `items` per list, fewer if needed) whose JSON fits in `characters`;
 * `value` is null when even one item per list does not fit.
 */
export function boundedProjection(
  value: Record<string, unknown>,
  options: { items: number; characters: number; drop: ReadonlySet<string> },
): Projection {
  for (let items = options.items; items >= 1; items = items > 3 ? 3 : items - 1) {
    const omitted: string[] = [];
    const projected = project(value, "", items, options.drop, omitted, 0) as Record<string, unknown>;
    if (JSON.stringify(projected).length + JSON.stringify(omitted).length <= options.characters) return { value: projected, omitted };
  }
  return { value: null, omitted: [`the answer does not fit in ${options.characters} characters; call the next tool for it`] };
}
