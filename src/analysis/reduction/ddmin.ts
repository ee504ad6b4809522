/**
 * Delta debugging (Zeller and Hildebrandt's ddmin), sequential and deterministic: the same units,
 * dependencies and predicate answers give the same attempts in the same order. Pure: the predicate is
 * a callback, so the service decides how a candidate is run, cached, budgeted and recorded.
 */

/** What the caller's predicate said about one candidate. */
export type DdminVerdict =
  /** The candidate keeps the property: it becomes the current configuration. */
  | "interesting"
  /** It does not (or could not be decided safely, e.g. a timeout): try the next candidate. */
  | "rejected"
  /** The predicate cannot be trusted any more (it failed to run): stop without claiming anything. */
  | "unresolved"
  /** A budget ran out or the caller cancelled: stop and keep the best configuration found. */
  | "stop";

export type DdminCandidate = {
  /** Ascending unit indices, closed under the dependencies. */
  kept: number[];
  /** Units the split asked to remove, and those the dependency closure had to put back. */
  requestedRemoved: number;
  dependencyAdded: number;
};

export type DdminResult = {
  kept: number[];
  /** one_minimal: removing any single remaining unit was tried and rejected. */
  minimality: "one_minimal" | "not_claimed";
  stoppedBy: "unresolved" | "stop" | null;
  /** Candidates the dependency closure turned back into the current configuration; never tested. */
  dependencyNoOps: number;
};

export async function ddmin(
  unitCount: number,
  requires: ReadonlyMap<number, readonly number[]>,
  test: (candidate: DdminCandidate) => Promise<DdminVerdict>,
): Promise<DdminResult> {
  let current = Array.from({ length: unitCount }, (_, index) => index);
  let granularity = 2;
  let dependencyNoOps = 0;
  const close = (wanted: number[]): DdminCandidate | null => {
    const kept = closure(wanted, requires, unitCount);
    if (kept.length >= current.length) {
      dependencyNoOps += 1;
      return null;
    }
    return { kept, requestedRemoved: current.length - wanted.length, dependencyAdded: kept.length - wanted.length };
  };
  while (current.length >= 2) {
    const chunks = split(current, granularity);
    let next: { kept: number[]; granularity: number } | null = null;
    // Complements first: removing one chunk keeps most of the input, the likeliest to stay interesting.
    for (let index = 0; index < chunks.length && !next; index++) {
      const removed = new Set(chunks[index]);
      const candidate = close(current.filter((unit) => !removed.has(unit)));
      if (!candidate) continue;
      const verdict = await test(candidate);
      if (verdict === "interesting") next = { kept: candidate.kept, granularity: Math.max(granularity - 1, 2) };
      else if (verdict !== "rejected") return { kept: current, minimality: "not_claimed", stoppedBy: verdict, dependencyNoOps };
    }
    // With two chunks each subset is the other's complement, already tried.
    for (let index = 0; granularity > 2 && index < chunks.length && !next; index++) {
      const candidate = close(chunks[index]!);
      if (!candidate) continue;
      const verdict = await test(candidate);
      if (verdict === "interesting") next = { kept: candidate.kept, granularity: 2 };
      else if (verdict !== "rejected") return { kept: current, minimality: "not_claimed", stoppedBy: verdict, dependencyNoOps };
    }
    if (next) {
      current = next.kept;
      granularity = Math.min(next.granularity, Math.max(current.length, 2));
      continue;
    }
    if (granularity >= current.length) break;
    granularity = Math.min(granularity * 2, current.length);
  }
  return { kept: current, minimality: "one_minimal", stoppedBy: null, dependencyNoOps };
}

/** `items` in `parts` contiguous chunks whose sizes differ by at most one. */
function split(items: number[], parts: number): number[][] {
  const chunks: number[][] = [];
  for (let index = 0; index < parts; index++) {
    const chunk = items.slice(Math.floor((index * items.length) / parts), Math.floor(((index + 1) * items.length) / parts));
    if (chunk.length > 0) chunks.push(chunk);
  }
  return chunks;
}

/** `wanted` plus everything it requires, transitively, in ascending order. */
function closure(wanted: number[], requires: ReadonlyMap<number, readonly number[]>, unitCount: number): number[] {
  if (requires.size === 0) return wanted;
  const keep = new Uint8Array(unitCount);
  const pending = [...wanted];
  for (const unit of wanted) keep[unit] = 1;
  while (pending.length > 0) {
    for (const needed of requires.get(pending.pop()!) ?? []) {
      if (keep[needed]) continue;
      keep[needed] = 1;
      pending.push(needed);
    }
  }
  const kept: number[] = [];
  for (let unit = 0; unit < unitCount; unit++) if (keep[unit]) kept.push(unit);
  return kept;
}
