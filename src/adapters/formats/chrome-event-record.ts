/**
 * One Chrome trace event as the extractor needs it, whichever reader built it: the fast text
 * scanner (chrome-event-scanner.ts) or `recordFromObject` over a parsed object. Both must give the
 * same record. Timestamps are integer nanoseconds relative to the trace's first whole microsecond
 * (`TraceClock`), computed from the number's decimal text where there is one: epoch microseconds
 * (~1.7e15) times 1000 exceed 2^53, so `Math.round(ts * 1000)` would round slice edges by up to
 * 128 ns and nest back-to-back slices.
 */
import { isDigit, MINUS, DOT } from "./json-grammar.ts";

/** Upper bound of the JSON text kept for an event's args. */
export const maxArgsBytes = 4096;

export const correlationKeys = ["correlation", "correlationId", "correlation_id", "Correlation ID", "External id", "external id"];
export const deviceKeys = ["device", "deviceId", "Device"];
export const streamKeys = ["stream", "streamId", "Stream"];
export const torchTopLevelKeys = new Set(["schemaVersion", "deviceProperties", "distributedInfo", "baseTimeNanoseconds", "trace_id"]);

export class TraceEventRecord {
  // Ordering key: timestamp, B/E before X before others, longer X first, arrival.
  ts = 0;
  group = 2;
  sub = 0;
  seq = 0;
  /** null when the event had no string `ph`. */
  ph: string | null = null;
  /** The row name (`name` as text, or ""). */
  name = "";
  /** `name` when it is a JSON string. */
  nameString: string | null = null;
  category: string | null = null;
  /** Nanoseconds since the clock's base (exact while the trace spans less than ~104 days). */
  tsNs: number | null = null;
  durNs: number | null = null;
  pid: string | null = null;
  tid: string | null = null;
  scope = "t";
  idDefined = false;
  idText: string | null = null;
  bindIdText: string | null = null;
  /** Bounded JSON text of `args` (any JSON type). */
  argsJson: string | null = null;
  /** Whether `args` is a non-array object. */
  argsIsObject = false;
  /** The args object's JSON text (fast path) or the parsed object (fallback), for B/E merges. */
  argsText: string | null = null;
  argsParsed: Record<string, unknown> | null = null;
  correlation: string | null = null;
  device: string | null = null;
  stream: string | null = null;
  /** args.filename / args.file (strings), args.line (finite number), args.name (string). */
  file: string | null = null;
  line: number | null = null;
  metaName: string | null = null;
  /** Bytes this record stands for while it waits to be ordered (its text, or an estimate). */
  size = 0;

  argsObject(): Record<string, unknown> | null {
    if (!this.argsIsObject) return null;
    this.argsParsed ??= JSON.parse(this.argsText as string) as Record<string, unknown>;
    return this.argsParsed;
  }
}

/**
 * Beyond 4e15 µs (127 years of epoch microseconds, 4e18 ns) a timestamp or duration is no clock's:
 * in ns it would not fit the int64 columns, even added to another.
 */
export const maxTraceMicroseconds = 4e15;

/**
 * Turns JSON timestamps (µs) into integer ns relative to the first whole microsecond it saw, and
 * durations into integer ns, rounding half up like `Math.round`. A value beyond
 * `maxTraceMicroseconds` gives null and is counted in `outOfRange`, which the reader takes and
 * resets per event (it leaves the event out); it never becomes the base.
 */
export class TraceClock {
  outOfRange = 0;
  private base: number | null = null;
  private baseBig: bigint | null = null;
  // Scratch of `split`: whole microseconds (digit count, text past 15 digits, value), nanoseconds past them, sign.
  private wholeDigits = 0;
  private wholeText = "";
  private whole = 0;
  private fraction = 0;
  private negative = false;

  /** ns since the base of a timestamp given as JSON number text; null when it is not finite. */
  relativeNs(text: string, start: number, end: number): number | null {
    if (!this.split(text, start, end)) return this.relativeNsOf(Number(text.slice(start, end)));
    if (this.beyondRange()) return null;
    const fraction = this.negative ? -this.fraction : this.fraction;
    if (this.wholeDigits > 15) {
      // Beyond 2^53 µs only BigInt holds the whole part exactly.
      const wholeBig = BigInt(this.negative ? `-${this.wholeText}` : this.wholeText);
      if (this.base === null) this.setBase(Number(wholeBig), wholeBig);
      return Number((wholeBig - (this.baseBig as bigint)) * 1000n) + fraction;
    }
    const whole = this.negative ? -this.whole : this.whole;
    if (this.base === null) this.setBase(whole);
    return (whole - (this.base as number)) * 1000 + fraction;
  }

  /** ns since the base of a parsed timestamp (a number or numeric string). */
  relativeNsOf(value: unknown): number | null {
    if (typeof value === "string") {
      const trimmed = value.trim();
      if (/^-?\d+(\.\d+)?$/.test(trimmed)) return this.relativeNs(trimmed, 0, trimmed.length);
    }
    const number = typeof value === "number" ? value : typeof value === "string" ? Number(value) : Number.NaN;
    if (!Number.isFinite(number)) return null;
    if (Math.abs(number) > maxTraceMicroseconds) {
      this.outOfRange++;
      return null;
    }
    if (this.base === null) this.setBase(Math.trunc(number));
    return Math.round((number - (this.base as number)) * 1000);
  }

  /** A duration (µs) as JSON number text → integer ns. */
  durationNs(text: string, start: number, end: number): number | null {
    if (!this.split(text, start, end)) return this.durationNsOf(Number(text.slice(start, end)));
    if (this.beyondRange()) return null;
    const ns = this.whole * 1000 + this.fraction;
    return this.negative ? -ns : ns;
  }

  durationNsOf(value: unknown): number | null {
    if (typeof value === "string") {
      const trimmed = value.trim();
      if (/^-?\d+(\.\d+)?$/.test(trimmed)) return this.durationNs(trimmed, 0, trimmed.length);
    }
    const number = typeof value === "number" ? value : typeof value === "string" ? Number(value) : Number.NaN;
    if (!Number.isFinite(number)) return null;
    if (Math.abs(number) > maxTraceMicroseconds) {
      this.outOfRange++;
      return null;
    }
    return Math.round(number * 1000);
  }

  /** After `split`: whether the whole microseconds pass the range (counted). */
  private beyondRange(): boolean {
    if (this.wholeDigits <= 15 || Number(this.wholeText) <= maxTraceMicroseconds) return false;
    this.outOfRange++;
    return true;
  }

  /** Absolute ns of a relative timestamp (the nearest double beyond 2^53). */
  absoluteNs(relative: number): number {
    return this.base === null ? relative : this.base * 1000 + relative;
  }

  private setBase(whole: number, exact?: bigint): void {
    this.base = whole;
    this.baseBig = exact ?? BigInt(whole);
  }

  /** Reads `-?digits(.digits)?` exactly; false for exponents or anything else. */
  private split(text: string, start: number, end: number): boolean {
    let i = start;
    this.negative = text.charCodeAt(i) === MINUS;
    if (this.negative) i++;
    const wholeStart = i;
    // Up to 15 digits the value accumulates exactly (below 2^53); longer ones keep their text.
    let whole = 0;
    for (let code = text.charCodeAt(i); i < end && isDigit(code); code = text.charCodeAt(++i)) whole = whole * 10 + (code - 0x30);
    if (i === wholeStart) return false;
    const wholeEnd = i;
    let fraction = 0;
    let roundUp = false;
    if (i < end && text.charCodeAt(i) === DOT) {
      i++;
      let digits = 0;
      let rest = 0; // 0: zeros past the ns digit so far, 1: exactly one half so far, 2: above one half
      for (; i < end; i++, digits++) {
        const code = text.charCodeAt(i);
        if (!isDigit(code)) return false;
        const digit = code - 0x30;
        if (digits < 3) fraction = fraction * 10 + digit;
        else if (digits === 3) rest = digit > 5 ? 2 : digit === 5 ? 1 : digit > 0 ? -1 : 0;
        else if (digit > 0 && rest === 1) rest = 2;
      }
      for (let pad = digits; pad < 3; pad++) fraction *= 10;
      // Math.round rounds halves toward +∞: up for positive values, toward zero for negative ones.
      roundUp = rest === 2 || (rest === 1 && !this.negative);
    }
    if (i !== end) return false;
    this.wholeDigits = wholeEnd - wholeStart;
    if (this.wholeDigits > 15) {
      this.wholeText = text.slice(wholeStart, wholeEnd);
      this.whole = Number.NaN;
    } else this.whole = whole;
    this.fraction = fraction + (roundUp ? 1 : 0);
    return true;
  }
}

function byteLength(text: string): number {
  return /^[\x00-\x7f]*$/.test(text) ? text.length : Buffer.byteLength(text);
}

const maxArgValueBytes = 1024;

/** Args that cannot be re-serialized (nested deeper than the call stack allows). */
export const unserializableArgs = '{"…truncated":true,"reason":"nested too deeply"}';

/**
 * JSON text of args, at most `maxArgsBytes`: oversized values become a truncated string preview,
 * and keys that no longer fit are dropped with `"…truncated": true`, so the text stays valid JSON
 * and small args (`Input Dims`, `Bytes`) survive whole.
 */
export function boundedArgsJson(args: unknown): string | null {
  if (args === undefined || args === null) return null;
  let whole: string | undefined;
  try {
    whole = JSON.stringify(args);
  } catch (error) {
    if (error instanceof RangeError) return unserializableArgs;
    throw error;
  }
  if (whole === undefined) return null;
  if (byteLength(whole) <= maxArgsBytes) return whole;
  if (typeof args !== "object" || Array.isArray(args)) {
    return JSON.stringify({ "…truncated": true, preview: whole.slice(0, maxArgValueBytes) });
  }
  const kept: string[] = [];
  let used = 2 + 20; // braces and the truncation marker
  for (const [key, value] of Object.entries(args as Record<string, unknown>)) {
    let text = JSON.stringify(value);
    if (text === undefined) continue;
    if (byteLength(text) > maxArgValueBytes) text = JSON.stringify(`${text.slice(0, maxArgValueBytes / 2)}…`);
    const member = `${JSON.stringify(key)}:${text}`;
    const size = byteLength(member) + 1;
    if (used + size > maxArgsBytes) continue;
    used += size;
    kept.push(member);
  }
  kept.push('"…truncated":true');
  return `{${kept.join(",")}}`;
}

export function asText(value: unknown): string | null {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "bigint") return String(value);
  return null;
}

export function pick(args: Record<string, unknown> | null, keys: readonly string[]): string | null {
  if (!args) return null;
  for (const key of keys) {
    const text = asText(args[key]);
    if (text !== null) return text;
  }
  return null;
}

/** The decimal texts of an event's own `ts` and `dur`, when the parser kept them. */
export type NumberSources = { ts?: string; dur?: string };

/**
 * A JSON.parse reviver that keeps the source text of every `ts` and `dur` number by holder object,
 * so parsed events get exact timestamps too.
 */
export function timestampSourceReviver(sources: WeakMap<object, NumberSources>) {
  return function (this: unknown, key: string, value: unknown, context?: { source?: string }): unknown {
    if ((key === "ts" || key === "dur") && typeof value === "number" && context?.source && this && typeof this === "object") {
      let entry = sources.get(this);
      if (!entry) {
        entry = {};
        sources.set(this, entry);
      }
      entry[key] = context.source;
    }
    return value;
  };
}

/**
 * JSON.parse keeping ts/dur source texts; a value nested too deeply for the reviver's recursion is
 * parsed without it (its timestamps then come from the parsed doubles).
 */
export function parseWithSources(text: string, sources: WeakMap<object, NumberSources>): unknown {
  try {
    return JSON.parse(text, timestampSourceReviver(sources));
  } catch (error) {
    if (error instanceof RangeError) return JSON.parse(text);
    throw error;
  }
}

/** Fills a record from a parsed event object (the generic path; the fast reader must agree with it). */
export function recordFromObject(
  event: Record<string, unknown>,
  record: TraceEventRecord,
  clock: TraceClock,
  sources?: NumberSources,
): void {
  record.ph = typeof event.ph === "string" ? event.ph : null;
  record.nameString = typeof event.name === "string" ? event.name : null;
  record.name = record.nameString ?? asText(event.name) ?? "";
  record.category = typeof event.cat === "string" ? event.cat : null;
  record.tsNs = sources?.ts !== undefined ? clock.relativeNs(sources.ts, 0, sources.ts.length) : clock.relativeNsOf(event.ts);
  record.durNs = sources?.dur !== undefined ? clock.durationNs(sources.dur, 0, sources.dur.length) : clock.durationNsOf(event.dur);
  record.pid = asText(event.pid);
  record.tid = asText(event.tid);
  record.scope = typeof event.s === "string" ? event.s : "t";
  record.idDefined = event.id !== undefined;
  record.idText = asText(event.id);
  record.bindIdText = asText(event.bind_id);
  const args = event.args && typeof event.args === "object" && !Array.isArray(event.args) ? (event.args as Record<string, unknown>) : null;
  record.argsJson = boundedArgsJson(event.args);
  record.argsIsObject = args !== null;
  record.argsParsed = args;
  record.argsText = null;
  record.correlation = pick(args, correlationKeys);
  record.device = pick(args, deviceKeys);
  record.stream = pick(args, streamKeys);
  record.file = typeof args?.filename === "string" ? args.filename : typeof args?.file === "string" ? args.file : null;
  record.line = typeof args?.line === "number" && Number.isFinite(args.line) ? args.line : null;
  record.metaName = typeof args?.name === "string" ? args.name : null;
  record.size = 256 + record.name.length + (record.argsJson?.length ?? 0);
}
