/**
 * The fast event source of the Chrome trace extractor for large JSON files. The file is read in
 * large chunks and decoded once; the `traceEvents` array (or a bare event array) is walked as text,
 * and each event object is read in one pass straight into a `TraceEventRecord`: only the members
 * the extractor uses are kept, and `args` stays as its own JSON text when that text is exactly what
 * `JSON.stringify(JSON.parse(text))` would give (no whitespace, escapes, non-canonical numbers,
 * duplicate or integer-like keys) and fits in `maxArgsBytes`. Anything else (escapes, odd member
 * types, big args, invalid JSON) makes that one event fall back to `JSON.parse` of its text and the
 * generic conversion, so the records are the same either way. Structural errors are reported by
 * the caller, which re-reads the file with the generic scanner for its exact message.
 */
import { open } from "node:fs/promises";

/** Upper bound of the JSON text kept for an event's args. */
export const maxArgsBytes = 4096;

export const correlationKeys = ["correlation", "correlationId", "correlation_id", "Correlation ID", "External id", "external id"];
export const deviceKeys = ["device", "deviceId", "Device"];
export const streamKeys = ["stream", "streamId", "Stream"];
export const torchTopLevelKeys = new Set(["schemaVersion", "deviceProperties", "distributedInfo", "baseTimeNanoseconds", "trace_id"]);

/** One trace event, as the extractor needs it (built by the fast reader or from a parsed object). */
export class TraceEventRecord {
  // Reorder-window key.
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

  argsObject(): Record<string, unknown> | null {
    if (!this.argsIsObject) return null;
    this.argsParsed ??= JSON.parse(this.argsText as string) as Record<string, unknown>;
    return this.argsParsed;
  }
}

function byteLength(text: string): number {
  return /^[\x00-\x7f]*$/.test(text) ? text.length : Buffer.byteLength(text);
}

const maxArgValueBytes = 1024;

/**
 * JSON text of args, at most `maxArgsBytes`: oversized values become a truncated string preview,
 * and keys that no longer fit are dropped with `"…truncated": true`, so the text stays valid JSON
 * and small args (`Input Dims`, `Bytes`) survive whole.
 */
export function boundedArgsJson(args: unknown): string | null {
  if (args === undefined || args === null) return null;
  const whole = JSON.stringify(args);
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

/** µs (possibly fractional) → integer ns. */
export function microsToNs(value: unknown): number | null {
  const number = typeof value === "number" ? value : typeof value === "string" ? Number(value) : Number.NaN;
  return Number.isFinite(number) ? Math.round(number * 1000) : null;
}

/** Fills a record from a parsed event object (the generic path; the fast reader must agree with it). */
export function recordFromObject(event: Record<string, unknown>, record: TraceEventRecord): void {
  record.ph = typeof event.ph === "string" ? event.ph : null;
  record.nameString = typeof event.name === "string" ? event.name : null;
  record.name = record.nameString ?? asText(event.name) ?? "";
  record.category = typeof event.cat === "string" ? event.cat : null;
  record.tsNs = microsToNs(event.ts);
  record.durNs = microsToNs(event.dur);
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
}

/** A structural error the fast reader found; the caller reports it through the generic scanner. */
export class FastScanError extends Error {}

/** The file's top level is not `[…]` or `{…}` (the generic reader handles it; nothing was emitted). */
export class UnsupportedShape extends Error {}

export type ChromeEventHandlers = {
  /** A top-level key of the trace object (other than traceEvents), for producer hints. */
  topLevelKey(key: string): void;
  /** The trace object has a `traceEvents` array. */
  sawTraceEvents(): void;
  /** A record whose fields are filled (ordering key not yet). */
  event(record: TraceEventRecord): void;
  /** An array element that is not an object (already parsed). */
  other(value: unknown): void;
  /** Awaited after each chunk of events (the sink's back-pressure). */
  chunk?: () => Promise<void>;
};

// Failure signals of the scanning functions (they return -1 and set `failure`).
const NEED_MORE = 1;
const BAIL = 2;
let failure = 0;
let nonAscii = false;

function isWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

function skipWhitespace(text: string, at: number): number {
  const length = text.length;
  while (at < length && isWhitespace(text.charCodeAt(at))) at++;
  return at;
}

/** At a quote: index after the closing quote. Bails on escapes and control characters. */
function scanPlainString(text: string, at: number): number {
  const length = text.length;
  for (let i = at + 1; i < length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x22) return i + 1;
    if (code === 0x5c || code < 0x20) {
      failure = BAIL;
      return -1;
    }
    if (code > 0x7e) nonAscii = true;
  }
  failure = NEED_MORE;
  return -1;
}

function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

/** A JSON number (strict grammar). */
function scanNumber(text: string, at: number): number {
  const length = text.length;
  let i = at;
  if (text.charCodeAt(i) === 0x2d) i++;
  if (i >= length) return needMore();
  let code = text.charCodeAt(i);
  if (code === 0x30) i++;
  else if (code >= 0x31 && code <= 0x39) {
    while (i < length && isDigit(text.charCodeAt(i))) i++;
  } else return bail();
  if (i >= length) return needMore();
  code = text.charCodeAt(i);
  if (code === 0x2e) {
    i++;
    const digits = i;
    while (i < length && isDigit(text.charCodeAt(i))) i++;
    if (i >= length) return needMore();
    if (i === digits) return bail();
    code = text.charCodeAt(i);
  }
  if (code === 0x65 || code === 0x45) {
    i++;
    if (i >= length) return needMore();
    code = text.charCodeAt(i);
    if (code === 0x2b || code === 0x2d) i++;
    const digits = i;
    while (i < length && isDigit(text.charCodeAt(i))) i++;
    if (i >= length) return needMore();
    if (i === digits) return bail();
  }
  return i;
}

function needMore(): number {
  failure = NEED_MORE;
  return -1;
}

function bail(): number {
  failure = BAIL;
  return -1;
}

/** Whether a number's text is what `JSON.stringify` writes for its value. */
function canonicalNumber(text: string, start: number, end: number): boolean {
  let plainInteger = end - start <= 15;
  for (let i = start; plainInteger && i < end; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x2e || code === 0x65 || code === 0x45) plainInteger = false;
  }
  if (plainInteger) return !(end - start === 2 && text.charCodeAt(start) === 0x2d && text.charCodeAt(start + 1) === 0x30);
  const token = text.slice(start, end);
  return String(Number(token)) === token;
}

function scanLiteral(text: string, at: number): number {
  const code = text.charCodeAt(at);
  const word = code === 0x74 ? "true" : code === 0x66 ? "false" : code === 0x6e ? "null" : null;
  if (word === null) return bail();
  if (at + word.length > text.length) return needMore();
  if (!text.startsWith(word, at)) return bail();
  return at + word.length;
}

/**
 * Any JSON value. `canonical`: the text must be exactly `JSON.stringify(JSON.parse(text))` (no
 * whitespace, canonical numbers, no duplicate or integer-like keys), else it bails.
 */
function scanValue(text: string, at: number, canonical: boolean): number {
  if (at >= text.length) return needMore();
  const code = text.charCodeAt(at);
  if (code === 0x22) return scanPlainString(text, at);
  if (code === 0x7b) return scanObject(text, at, canonical);
  if (code === 0x5b) {
    let i = at + 1;
    if (!canonical) i = skipWhitespace(text, i);
    if (i >= text.length) return needMore();
    if (text.charCodeAt(i) === 0x5d) return i + 1;
    for (;;) {
      i = scanValue(text, i, canonical);
      if (i < 0) return -1;
      if (!canonical) i = skipWhitespace(text, i);
      if (i >= text.length) return needMore();
      const next = text.charCodeAt(i);
      if (next === 0x5d) return i + 1;
      if (next !== 0x2c) return bail();
      i++;
      if (!canonical) i = skipWhitespace(text, i);
    }
  }
  if (code === 0x2d || isDigit(code)) {
    const end = scanNumber(text, at);
    if (end < 0) return -1;
    if (canonical && !canonicalNumber(text, at, end)) return bail();
    return end;
  }
  return scanLiteral(text, at);
}

function sameKey(text: string, starts: number[], start: number, length: number): boolean {
  for (let k = 0; k < starts.length; k += 2) {
    const other = starts[k] as number;
    if (starts[k + 1] !== length) continue;
    let same = true;
    for (let c = 0; c < length && same; c++) same = text.charCodeAt(other + c) === text.charCodeAt(start + c);
    if (same) return true;
  }
  return false;
}

function scanObject(text: string, at: number, canonical: boolean): number {
  let i = at + 1;
  if (!canonical) i = skipWhitespace(text, i);
  if (i >= text.length) return needMore();
  if (text.charCodeAt(i) === 0x7d) return i + 1;
  const keys: number[] = [];
  for (;;) {
    if (text.charCodeAt(i) !== 0x22) return bail();
    const keyEnd = scanPlainString(text, i);
    if (keyEnd < 0) return -1;
    if (canonical) {
      const keyStart = i + 1;
      const keyLength = keyEnd - 1 - keyStart;
      // Integer-like keys are reordered by JSON.parse; duplicates collapse.
      if (keyLength > 0 && isDigit(text.charCodeAt(keyStart))) return bail();
      if (sameKey(text, keys, keyStart, keyLength)) return bail();
      keys.push(keyStart, keyLength);
    }
    i = keyEnd;
    if (!canonical) i = skipWhitespace(text, i);
    if (i >= text.length) return needMore();
    if (text.charCodeAt(i) !== 0x3a) return bail();
    i++;
    if (!canonical) i = skipWhitespace(text, i);
    i = scanValue(text, i, canonical);
    if (i < 0) return -1;
    if (!canonical) i = skipWhitespace(text, i);
    if (i >= text.length) return needMore();
    const next = text.charCodeAt(i);
    if (next === 0x7d) return i + 1;
    if (next !== 0x2c) return bail();
    i++;
    if (!canonical) i = skipWhitespace(text, i);
    if (i >= text.length) return needMore();
  }
}

// Args members the extractor reads, by key.
const argCorrelation = 0; // + index in correlationKeys
const argDevice = 10;
const argStream = 20;
const argFilename = 30;
const argFile = 31;
const argLine = 32;
const argName = 33;
const interestingArgs = new Map<string, number>();
correlationKeys.forEach((key, index) => interestingArgs.set(key, argCorrelation + index));
deviceKeys.forEach((key, index) => interestingArgs.set(key, argDevice + index));
streamKeys.forEach((key, index) => interestingArgs.set(key, argStream + index));
interestingArgs.set("filename", argFilename);
interestingArgs.set("file", argFile);
interestingArgs.set("line", argLine);
interestingArgs.set("name", argName);
const interestingLengths = new Set([...interestingArgs.keys()].map((key) => key.length));

/** Text of the args members the extractor reads (by slot), for one event; reused. */
const argTexts: (string | null)[] = new Array<string | null>(34).fill(null);
const argKinds = new Uint8Array(34); // 0 absent, 1 string, 2 number, 3 other
const argTouched: number[] = [];

/** Reads the args object canonically; fills `argTexts`. */
function scanArgs(text: string, at: number): number {
  let i = at + 1;
  if (i >= text.length) return needMore();
  if (text.charCodeAt(i) === 0x7d) return i + 1;
  const keys: number[] = [];
  for (;;) {
    if (text.charCodeAt(i) !== 0x22) return bail();
    const keyEnd = scanPlainString(text, i);
    if (keyEnd < 0) return -1;
    const keyStart = i + 1;
    const keyLength = keyEnd - 1 - keyStart;
    if (keyLength > 0 && isDigit(text.charCodeAt(keyStart))) return bail();
    if (sameKey(text, keys, keyStart, keyLength)) return bail();
    keys.push(keyStart, keyLength);
    const slot = interestingLengths.has(keyLength) ? interestingArgs.get(text.slice(keyStart, keyEnd - 1)) : undefined;
    i = keyEnd;
    if (i >= text.length) return needMore();
    if (text.charCodeAt(i) !== 0x3a) return bail();
    i++;
    const valueStart = i;
    i = scanValue(text, i, true);
    if (i < 0) return -1;
    if (slot !== undefined) {
      const first = text.charCodeAt(valueStart);
      argTouched.push(slot);
      if (first === 0x22) {
        argKinds[slot] = 1;
        argTexts[slot] = text.slice(valueStart + 1, i - 1);
      } else if (first === 0x2d || isDigit(first)) {
        argKinds[slot] = 2;
        argTexts[slot] = text.slice(valueStart, i);
      } else {
        argKinds[slot] = 3;
        argTexts[slot] = null;
      }
    }
    if (i >= text.length) return needMore();
    const next = text.charCodeAt(i);
    if (next === 0x7d) return i + 1;
    if (next !== 0x2c) return bail();
    i++;
    if (i >= text.length) return needMore();
  }
}

function resetArgs(): void {
  for (const slot of argTouched) {
    argKinds[slot] = 0;
    argTexts[slot] = null;
  }
  argTouched.length = 0;
}

function argText(slot: number): string | null {
  return argKinds[slot] === 1 || argKinds[slot] === 2 ? (argTexts[slot] as string) : null;
}

function pickSlots(base: number, count: number): string | null {
  for (let k = 0; k < count; k++) {
    const text = argText(base + k);
    if (text !== null) return text;
  }
  return null;
}

function keyIs(text: string, start: number, length: number, key: string): boolean {
  return length === key.length && text.startsWith(key, start);
}

// Top-level members of an event, as bits (a repeated one makes the event take the generic path).
const PH = 1;
const NAME = 2;
const CAT = 4;
const TS = 8;
const DUR = 16;
const PID = 32;
const TID = 64;
const SCOPE = 128;
const ID = 256;
const BIND_ID = 512;
const ARGS = 1024;

/** Number or string member text (pid/tid/id): what `asText` gives for the parsed value. */
function scalarText(text: string, start: number, end: number): string | null {
  const first = text.charCodeAt(start);
  if (first === 0x22) return text.slice(start + 1, end - 1);
  if (first === 0x2d || isDigit(first)) {
    const token = text.slice(start, end);
    return canonicalNumber(text, start, end) ? token : String(Number(token));
  }
  return null;
}

/**
 * Reads one event object at `at` into `record`; returns the index after it, or -1 with `failure`
 * NEED_MORE (the text ends inside it) or BAIL (use the generic path).
 */
function scanEvent(text: string, at: number, record: TraceEventRecord): number {
  let seen = 0;
  resetArgs();
  let i = skipWhitespace(text, at + 1);
  if (i >= text.length) return needMore();
  if (text.charCodeAt(i) === 0x7d) return finishEvent(record, i + 1, seen);
  for (;;) {
    if (text.charCodeAt(i) !== 0x22) return bail();
    const keyEnd = scanPlainString(text, i);
    if (keyEnd < 0) return -1;
    const keyStart = i + 1;
    const keyLength = keyEnd - 1 - keyStart;
    i = skipWhitespace(text, keyEnd);
    if (i >= text.length) return needMore();
    if (text.charCodeAt(i) !== 0x3a) return bail();
    i = skipWhitespace(text, i + 1);
    if (i >= text.length) return needMore();
    const valueStart = i;
    const first = text.charCodeAt(i);
    let bit = 0;
    switch (keyLength) {
      case 1:
        if (text.charCodeAt(keyStart) === 0x73) bit = SCOPE;
        break;
      case 2:
        if (keyIs(text, keyStart, keyLength, "ph")) bit = PH;
        else if (keyIs(text, keyStart, keyLength, "ts")) bit = TS;
        else if (keyIs(text, keyStart, keyLength, "id")) bit = ID;
        break;
      case 3:
        if (keyIs(text, keyStart, keyLength, "cat")) bit = CAT;
        else if (keyIs(text, keyStart, keyLength, "dur")) bit = DUR;
        else if (keyIs(text, keyStart, keyLength, "pid")) bit = PID;
        else if (keyIs(text, keyStart, keyLength, "tid")) bit = TID;
        break;
      case 4:
        if (keyIs(text, keyStart, keyLength, "name")) bit = NAME;
        else if (keyIs(text, keyStart, keyLength, "args")) bit = ARGS;
        break;
      case 7:
        if (keyIs(text, keyStart, keyLength, "bind_id")) bit = BIND_ID;
        break;
    }
    if (bit !== 0) {
      if (seen & bit) return bail();
      seen |= bit;
    }
    if (bit === ARGS) {
      if (first !== 0x7b) return bail();
      nonAscii = false;
      i = scanArgs(text, i);
      if (i < 0) return -1;
      const length = i - valueStart;
      if (length > maxArgsBytes || (nonAscii && Buffer.byteLength(text.slice(valueStart, i)) > maxArgsBytes)) return bail();
      const argsText = text.slice(valueStart, i);
      record.argsText = argsText;
      record.argsJson = argsText;
      record.argsIsObject = true;
    } else {
      i = scanValue(text, i, false);
      if (i < 0) return -1;
      if (bit !== 0) {
        const isString = first === 0x22;
        const isNumber = first === 0x2d || isDigit(first);
        switch (bit) {
          case PH:
          case CAT:
          case SCOPE:
          case NAME: {
            if (!isString) return bail();
            const value = text.slice(valueStart + 1, i - 1);
            if (bit === PH) record.ph = value;
            else if (bit === CAT) record.category = value;
            else if (bit === SCOPE) record.scope = value;
            else record.nameString = value;
            break;
          }
          case TS:
          case DUR: {
            if (!isNumber) return bail();
            const number = Number(text.slice(valueStart, i));
            const ns = Number.isFinite(number) ? Math.round(number * 1000) : null;
            if (bit === TS) record.tsNs = ns;
            else record.durNs = ns;
            break;
          }
          default: {
            if (!isString && !isNumber) return bail();
            const value = scalarText(text, valueStart, i);
            if (bit === PID) record.pid = value;
            else if (bit === TID) record.tid = value;
            else if (bit === ID) {
              record.idDefined = true;
              record.idText = value;
            } else record.bindIdText = value;
          }
        }
      }
    }
    i = skipWhitespace(text, i);
    if (i >= text.length) return needMore();
    const next = text.charCodeAt(i);
    if (next === 0x7d) return finishEvent(record, i + 1, seen);
    if (next !== 0x2c) return bail();
    i = skipWhitespace(text, i + 1);
    if (i >= text.length) return needMore();
  }
}

function finishEvent(record: TraceEventRecord, end: number, seen: number): number {
  record.name = record.nameString ?? "";
  if (seen & ARGS) {
    record.correlation = pickSlots(argCorrelation, correlationKeys.length);
    record.device = pickSlots(argDevice, deviceKeys.length);
    record.stream = pickSlots(argStream, streamKeys.length);
    record.file =
      argKinds[argFilename] === 1 ? (argTexts[argFilename] ?? null) : argKinds[argFile] === 1 ? (argTexts[argFile] ?? null) : null;
    record.line = argKinds[argLine] === 2 ? Number(argTexts[argLine]) : null;
    record.metaName = argKinds[argName] === 1 ? (argTexts[argName] ?? null) : null;
    resetArgs();
  }
  return end;
}

/** Structural skip of any value (escape-aware, like the generic scanner for skipped values). */
function skipStructural(text: string, at: number): number {
  const length = text.length;
  const first = text.charCodeAt(at);
  if (first !== 0x7b && first !== 0x5b && first !== 0x22) {
    let i = at;
    while (i < length) {
      const code = text.charCodeAt(i);
      if (isWhitespace(code) || code === 0x2c || code === 0x7d || code === 0x5d) return i === at ? bail() : i;
      i++;
    }
    return needMore();
  }
  let depth = 0;
  let inString = false;
  for (let i = at; i < length; i++) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === 0x5c) i++;
      else if (code === 0x22) {
        inString = false;
        if (depth === 0) return i + 1;
      }
      continue;
    }
    if (code === 0x22) inString = true;
    else if (code === 0x7b || code === 0x5b) depth++;
    else if (code === 0x7d || code === 0x5d) {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return needMore();
}

const readBytes = 8 << 20;

/**
 * Streams the events of a Chrome trace file through `handlers`. Throws `FastScanError` on
 * malformed or truncated JSON and `UnsupportedShape` (before any event) when the top level is not
 * an array or object.
 */
export async function scanChromeEvents(path: string, handlers: ChromeEventHandlers): Promise<void> {
  const handle = await open(path, "r");
  const decoder = new TextDecoder();
  let text = "";
  let at = 0;
  let eof = false;
  let want = readBytes;
  let buffer = Buffer.allocUnsafe(readBytes);

  /** Keeps text from `keep` on and appends the next chunk; false at the end of the file. */
  const more = async (keep: number): Promise<boolean> => {
    if (eof) return false;
    if (buffer.length < want) buffer = Buffer.allocUnsafe(want);
    let filled = 0;
    while (filled < want) {
      const { bytesRead } = await handle.read(buffer, filled, want - filled, null);
      if (bytesRead === 0) {
        eof = true;
        break;
      }
      filled += bytesRead;
    }
    const decoded = decoder.decode(buffer.subarray(0, filled), { stream: !eof });
    text = keep < text.length ? text.slice(keep) + decoded : decoded;
    at = 0;
    return true;
  };

  /** Runs `scan` at `at`, reading more text while it needs more; -1 at the end of the file. */
  const run = async (scan: (start: number) => number): Promise<number> => {
    for (;;) {
      const end = scan(at);
      if (end >= 0 || failure !== NEED_MORE) return end;
      const pending = text.length - at;
      // A value bigger than a chunk: read geometrically more so re-scanning stays linear.
      want = Math.max(readBytes, pending * 2);
      if (!(await more(at))) return -1;
      want = readBytes;
    }
  };

  const skip = async (): Promise<void> => {
    for (;;) {
      at = skipWhitespace(text, at);
      if (at < text.length) return;
      if (!(await more(text.length))) return;
    }
  };

  const fail = (message: string): never => {
    throw new FastScanError(message);
  };

  const expect = async (): Promise<number> => {
    await skip();
    if (at >= text.length) fail("truncated JSON");
    return text.charCodeAt(at);
  };

  let seq = 0;
  /** The event (or other element) at `at`, synchronously: false when the text ends inside it. */
  const element = (): boolean => {
    failure = 0;
    if (text.charCodeAt(at) === 0x7b) {
      const record = new TraceEventRecord();
      record.seq = seq;
      const end = scanEvent(text, at, record);
      if (end >= 0) {
        seq++;
        at = end;
        handlers.event(record);
        return true;
      }
      if (failure === NEED_MORE) return false;
      failure = 0;
      const last = skipStructural(text, at);
      if (last < 0) {
        if (failure === NEED_MORE) return false;
        fail("malformed event");
      }
      let parsed: Record<string, unknown>;
      try {
        parsed = JSON.parse(text.slice(at, last)) as Record<string, unknown>;
      } catch (error) {
        fail(`malformed event: ${String(error)}`);
      }
      const fresh = new TraceEventRecord();
      fresh.seq = seq++;
      recordFromObject(parsed!, fresh);
      at = last;
      handlers.event(fresh);
      return true;
    }
    const end = skipStructural(text, at);
    if (end < 0) {
      if (failure === NEED_MORE) return false;
      fail("unexpected character");
    }
    let value: unknown;
    try {
      value = JSON.parse(text.slice(at, end));
    } catch (error) {
      fail(`malformed value: ${String(error)}`);
    }
    at = end;
    handlers.other(value);
    return true;
  };

  const readArray = async (): Promise<void> => {
    at++; // [
    // 0: first element or ']'; 1: an element; 2: ',' or ']'
    let state = 0;
    for (;;) {
      // Synchronous while the text lasts; awaits only to read the next chunk.
      for (;;) {
        at = skipWhitespace(text, at);
        if (at >= text.length) break;
        if (state === 2) {
          const code = text.charCodeAt(at);
          at++;
          if (code === 0x5d) return;
          if (code !== 0x2c) fail("expected ',' or ']'");
          state = 1;
          continue;
        }
        if (state === 0 && text.charCodeAt(at) === 0x5d) {
          at++;
          return;
        }
        if (!element()) break;
        state = 2;
      }
      if (handlers.chunk) await handlers.chunk();
      const pending = text.length - at;
      // A value bigger than a chunk: read geometrically more so re-scanning stays linear.
      want = Math.max(readBytes, pending * 2);
      const read = await more(at);
      want = readBytes;
      if (!read) fail("truncated JSON");
    }
  };

  try {
    await more(0);
    let code = await expect().catch(() => -1);
    if (code === 0x5b) {
      await readArray();
    } else if (code === 0x7b) {
      at++;
      code = await expect();
      if (code === 0x7d) at++;
      else {
        for (;;) {
          if (code !== 0x22) fail("expected a key");
          failure = 0;
          const keyEnd = await run((start) => skipStructural(text, start));
          if (keyEnd < 0) fail("truncated JSON");
          const raw = text.slice(at, keyEnd);
          let key: string;
          try {
            key = JSON.parse(raw) as string;
          } catch {
            fail("invalid key");
          }
          at = keyEnd;
          if ((await expect()) !== 0x3a) fail("expected ':'");
          at++;
          code = await expect();
          if (key! === "traceEvents") {
            handlers.sawTraceEvents();
            if (code !== 0x5b) {
              if (seq === 0) throw new UnsupportedShape("traceEvents is not an array");
              fail("traceEvents is not an array");
            }
            await readArray();
          } else {
            handlers.topLevelKey(key!);
            failure = 0;
            const end = await run((start) => skipStructural(text, start));
            if (end < 0) fail("truncated JSON");
            at = end;
          }
          code = await expect();
          at++;
          if (code === 0x7d) break;
          if (code !== 0x2c) fail("expected ',' or '}'");
          code = await expect();
        }
      }
    } else {
      throw new UnsupportedShape("not an array or object");
    }
    await skip();
    if (at < text.length) fail("data after the JSON document");
  } finally {
    await handle.close();
  }
}
