import { sha256Hex } from "../domain/canonical-json.ts";
import type { FrameRow, StackRow, StackUnit } from "../domain/evidence.ts";
import { acceleratorTrackCategories } from "../domain/trace-categories.ts";
import type { Hotspot, HotspotPage, UnitSummary } from "./hotspots.ts";

/**
 * The default hotspot question (functions ranked by self weight, all threads) answered from the rows an
 * extraction just wrote, still in memory, instead of a DuckDB query over the Parquet they became: a
 * capture's first answer then costs about a millisecond instead of a query plan over a fresh view.
 * It is the same arithmetic as `queryHotspots` (test/unit/analysis/hotspots-in-memory.test.ts holds it
 * equal to the SQL on published bundles) and declines (null) whatever it does not mirror exactly:
 * weights that are not exact integers, a frame key with two different frames, one function seen with
 * two modules, stack keys with no frame, and time on an accelerator's clock.
 */
export type RecordedStacks = { frames: readonly FrameRow[]; stacks: readonly StackRow[] };

/** `stackUnits` over the recorded rows: weight and row count per unit, ordered by unit. */
export function recordedStackUnits(recorded: RecordedStacks): UnitSummary[] | null {
  const units = new Map<StackUnit, UnitSummary>();
  for (const stack of recorded.stacks) {
    if (!Number.isSafeInteger(stack.weight)) return null;
    const unit = units.get(stack.unit) ?? { unit: stack.unit, total_weight: 0, stack_rows: 0 };
    unit.total_weight += stack.weight;
    unit.stack_rows += 1;
    units.set(stack.unit, unit);
  }
  return [...units.values()].sort((left, right) => (left.unit < right.unit ? -1 : left.unit > right.unit ? 1 : 0));
}

type FunctionEntry = Omit<
  Hotspot,
  "rank" | "thread" | "self_weight" | "total_weight" | "self_share" | "total_share" | "unit" | "time_domain"
> & {
  self: number;
  total: number;
};

/** The SQL's function identity (`functionIdentitySql`), computed the same way. */
function functionIdentity(frame: FrameRow): string {
  const moduleSuffix = frame.file === null && frame.module !== null ? `\u0000${frame.module}` : "";
  return `fn_${sha256Hex(`${frame.language}\u0000${frame.function}\u0000${frame.file ?? ""}${moduleSuffix}`).slice(0, 24)}`;
}

/** frame key → its function's entry; null when a key or a function is ambiguous. */
function functionsOf(frames: readonly FrameRow[]): Map<string, FunctionEntry> | null {
  const byKey = new Map<string, FunctionEntry>();
  const byId = new Map<string, FunctionEntry>();
  const seen = new Map<string, FrameRow>();
  for (const frame of frames) {
    const earlier = seen.get(frame.frame_key);
    if (earlier) {
      const same =
        earlier.function === frame.function &&
        earlier.file === frame.file &&
        earlier.line === frame.line &&
        earlier.module === frame.module &&
        earlier.language === frame.language;
      if (!same) return null;
      continue;
    }
    seen.set(frame.frame_key, frame);
    const frameId = functionIdentity(frame);
    let entry = byId.get(frameId);
    if (!entry) {
      entry = {
        frame_id: frameId,
        function: frame.function,
        file: frame.file,
        line: frame.line,
        module: frame.module,
        language: frame.language,
        self: 0,
        total: 0,
      };
      byId.set(frameId, entry);
    } else if (entry.module !== frame.module) {
      // The SQL keeps any one of the modules; which one is not defined, so this path does not guess.
      return null;
    } else if (frame.line !== null && (entry.line === null || frame.line < entry.line)) {
      entry.line = frame.line;
    }
    byKey.set(frame.frame_key, entry);
  }
  return byKey;
}

/**
 * One page of the default ranking (group by function, order by self, every thread) over the recorded
 * rows in `unit`, or null where it would not equal the SQL's answer.
 */
export function recordedHotspots(recorded: RecordedStacks, unit: StackUnit, page: { offset: number; limit: number }): HotspotPage | null {
  const functions = functionsOf(recorded.frames);
  if (!functions) return null;
  if (unit === "ns" && recorded.frames.some((frame) => frame.module !== null && acceleratorTrackCategories.includes(frame.module)))
    return null;
  let grand = 0;
  const ranked = new Set<FunctionEntry>();
  for (const stack of recorded.stacks) {
    if (stack.unit !== unit || stack.frame_keys.length === 0) continue;
    if (!Number.isSafeInteger(stack.weight)) return null;
    grand += stack.weight;
    const inStack = new Set<FunctionEntry>();
    for (const key of stack.frame_keys) {
      const entry = functions.get(key);
      if (!entry) return null;
      inStack.add(entry);
    }
    for (const entry of inStack) {
      entry.total += stack.weight;
      ranked.add(entry);
    }
    functions.get(stack.frame_keys[stack.frame_keys.length - 1]!)!.self += stack.weight;
  }
  const order = [...ranked].sort(
    (left, right) =>
      right.self - left.self || right.total - left.total || (left.frame_id < right.frame_id ? -1 : left.frame_id > right.frame_id ? 1 : 0),
  );
  let running = 0;
  for (const entry of order.slice(0, page.offset + page.limit)) running += entry.self;
  const hotspots = order.slice(page.offset, page.offset + page.limit).map(
    (entry, index): Hotspot => ({
      rank: page.offset + index + 1,
      frame_id: entry.frame_id,
      function: entry.function,
      file: entry.file,
      line: entry.line,
      module: entry.module,
      language: entry.language,
      thread: null,
      self_weight: entry.self,
      total_weight: entry.total,
      self_share: grand > 0 ? entry.self / grand : 0,
      total_share: grand > 0 ? entry.total / grand : 0,
      unit,
      time_domain: null,
    }),
  );
  // As queryHotspots: what this page and the earlier ones did not show is hidden; past the end nothing new is.
  const shownRunning = hotspots.length > 0 ? running : 0;
  const hidden = grand > 0 ? Math.max(0, 1 - shownRunning / grand) : 0;
  return {
    hotspots,
    total: order.length,
    total_weight: grand,
    hidden_self_share: hotspots.length > 0 ? hidden : page.offset === 0 ? 0 : hidden,
    domain_totals: null,
  };
}
