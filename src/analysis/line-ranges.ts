/**
 * Line numbers as a reader writes them ("12-15, 40"), the way coverage.py's own report does: with the
 * file's statements known, a range runs over consecutive statements (blank lines and comments between
 * them do not break it); without them, over consecutive numbers.
 */

/** Ranges of `lines` (sorted or not); `statements`, when given, decides which lines are adjacent. */
export function lineRanges(lines: readonly number[], statements?: readonly number[]): string[] {
  const wanted = new Set(lines);
  if (wanted.size === 0) return [];
  const order = [...new Set([...(statements ?? []), ...wanted])].sort((left, right) => left - right);
  const ranges: string[] = [];
  let start: number | null = null;
  let end: number | null = null;
  const close = () => {
    if (start !== null) ranges.push(start === end ? String(start) : `${start}-${end}`);
    start = null;
    end = null;
  };
  let previous: number | null = null;
  for (const line of order) {
    const adjacent = statements !== undefined || (previous !== null && line === previous + 1);
    if (wanted.has(line)) {
      if (start === null || !adjacent) {
        close();
        start = line;
      }
      end = line;
    } else {
      close();
    }
    previous = line;
  }
  close();
  return ranges;
}

/**
 * The ranges joined with ", ", cut at a range boundary to fit `characters`; a cut list ends with how
 * many ranges were left out ("… +12 more").
 */
export function boundedRangeText(ranges: readonly string[], characters: number): string {
  const full = ranges.join(", ");
  if (full.length <= characters) return full;
  const kept: string[] = [];
  let length = 0;
  for (const range of ranges) {
    const suffix = ` … +${ranges.length - kept.length - 1} more`;
    if (length + range.length + 2 + suffix.length > characters) break;
    kept.push(range);
    length += range.length + 2;
  }
  const more = `… +${ranges.length - kept.length} more`;
  return kept.length > 0 ? `${kept.join(", ")}, ${more}` : more;
}
