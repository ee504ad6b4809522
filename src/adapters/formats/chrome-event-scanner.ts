/**
 * Reads one Chrome trace event object from decoded text straight into a `TraceEventRecord`, in one
 * pass: only the members the extractor uses are kept, and `args` stays as its own JSON text when
 * that text is exactly what `JSON.stringify(JSON.parse(text))` would give (no whitespace, escapes,
 * non-canonical numbers, duplicate or integer-like keys) and fits in `maxArgsBytes`. Anything else
 * (escapes, odd member types, big or deep args, invalid JSON) makes the scan bail, and the reader
 * parses that one event with JSON.parse instead; the records are the same either way.
 */
import { type TraceClock, type TraceEventRecord, correlationKeys, deviceKeys, maxArgsBytes, streamKeys } from "./chrome-event-record.ts";
import { CLOSE_BRACE, COLON, COMMA, type JsonTextScanner, MINUS, OPEN_BRACE, QUOTE, canonicalNumber, isDigit } from "./json-grammar.ts";

// Args members the extractor reads, by slot.
const argCorrelation = 0; // + index in correlationKeys
const argDevice = 10;
const argStream = 20;
const argFilename = 30;
const argFile = 31;
const argLine = 32;
const argName = 33;
const slotCount = 34;
const interestingArgs = new Map<string, number>();
correlationKeys.forEach((key, index) => interestingArgs.set(key, argCorrelation + index));
deviceKeys.forEach((key, index) => interestingArgs.set(key, argDevice + index));
streamKeys.forEach((key, index) => interestingArgs.set(key, argStream + index));
interestingArgs.set("filename", argFilename);
interestingArgs.set("file", argFile);
interestingArgs.set("line", argLine);
interestingArgs.set("name", argName);
/** Keys longer than this are never candidates (the longest interesting key is 14 characters). */
const maxCandidateLength = 31;
/**
 * Candidate keys by length and first character (an array index, cheaper than a map lookup for the
 * ~8 members of every torch args object), so a member is matched without slicing its key.
 */
const candidatesByShape: ([string, number][] | undefined)[] = new Array((maxCandidateLength + 1) * 128).fill(undefined);
function shapeOf(length: number, first: number): number {
  return length > maxCandidateLength || first >= 128 ? -1 : length * 128 + first;
}
for (const [key, slot] of interestingArgs) {
  const shape = shapeOf(key.length, key.charCodeAt(0));
  if (shape < 0) throw new Error(`args key too long for the candidate table: ${key}`);
  const list = candidatesByShape[shape] ?? [];
  list.push([key, slot]);
  candidatesByShape[shape] = list;
}

// Slot kinds.
const ABSENT = 0;
const STRING = 1;
const NUMBER = 2;
const OTHER = 3;

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

/** The member bit of a key (0 for members the extractor ignores), from its characters. */
function memberBit(text: string, start: number, length: number): number {
  const first = text.charCodeAt(start);
  switch (length) {
    case 1:
      return first === 0x73 ? SCOPE : 0; // s
    case 2: {
      const second = text.charCodeAt(start + 1);
      if (first === 0x70 && second === 0x68) return PH; // ph
      if (first === 0x74 && second === 0x73) return TS; // ts
      if (first === 0x69 && second === 0x64) return ID; // id
      return 0;
    }
    case 3:
      if (first === 0x63) return text.startsWith("cat", start) ? CAT : 0;
      if (first === 0x64) return text.startsWith("dur", start) ? DUR : 0;
      if (first === 0x70) return text.startsWith("pid", start) ? PID : 0;
      if (first === 0x74) return text.startsWith("tid", start) ? TID : 0;
      return 0;
    case 4:
      if (first === 0x6e) return text.startsWith("name", start) ? NAME : 0;
      if (first === 0x61) return text.startsWith("args", start) ? ARGS : 0;
      return 0;
    case 7:
      return text.startsWith("bind_id", start) ? BIND_ID : 0;
    default:
      return 0;
  }
}

const internSlots = 256;
const maxInternedLength = 64;

/**
 * Short member values (names, categories, pids, tids) repeat from event to event: the last one of
 * each shape is kept and handed out again, so a repeat costs a comparison instead of a new string,
 * and the maps and comparisons downstream meet a string whose hash is already known. Only values of
 * the current text are kept (a slice pins the text it came from).
 */
class ValueInterner {
  private readonly values: string[] = new Array<string>(internSlots).fill("");
  private text = "";

  value(text: string, start: number, end: number): string {
    const length = end - start;
    if (length === 0 || length > maxInternedLength) return text.slice(start, end);
    if (text !== this.text) {
      this.values.fill("");
      this.text = text;
    }
    const slot =
      (length * 31 + text.charCodeAt(start) * 7 + text.charCodeAt(start + (length >> 1)) * 13 + text.charCodeAt(end - 1)) &
      (internSlots - 1);
    const known = this.values[slot] as string;
    if (known.length === length && text.startsWith(known, start)) return known;
    const value = text.slice(start, end);
    this.values[slot] = value;
    return value;
  }
}

/**
 * The event-object scanner. Its slot buffers are reused from event to event, so one scanner
 * belongs to one reader.
 */
export class ChromeEventScanner {
  private readonly argTexts: (string | null)[] = new Array<string | null>(slotCount).fill(null);
  private readonly argKinds = new Uint8Array(slotCount);
  private readonly argTouched: number[] = [];
  private text = "";
  private readonly interner = new ValueInterner();
  private readonly onArgMember = (keyStart: number, keyEnd: number, valueStart: number, valueEnd: number): void => {
    const shape = shapeOf(keyEnd - keyStart, this.text.charCodeAt(keyStart));
    if (shape < 0) return;
    const candidates = candidatesByShape[shape];
    if (candidates === undefined) return;
    let slot = -1;
    for (const [key, index] of candidates) {
      if (this.text.startsWith(key, keyStart)) {
        slot = index;
        break;
      }
    }
    if (slot < 0) return;
    const first = this.text.charCodeAt(valueStart);
    this.argTouched.push(slot);
    if (first === QUOTE) {
      this.argKinds[slot] = STRING;
      this.argTexts[slot] = this.text.slice(valueStart + 1, valueEnd - 1);
    } else if (first === MINUS || isDigit(first)) {
      this.argKinds[slot] = NUMBER;
      this.argTexts[slot] = this.text.slice(valueStart, valueEnd);
    } else {
      this.argKinds[slot] = OTHER;
      this.argTexts[slot] = null;
    }
  };

  constructor(
    private readonly clock: TraceClock,
    readonly grammar: JsonTextScanner,
  ) {}

  /**
   * Reads the event object at `at` into `record`; returns the index after it, or -1 with the
   * grammar's `failure` NEED_MORE (the text ends inside it) or BAIL (use the generic path).
   */
  scanEvent(text: string, at: number, record: TraceEventRecord): number {
    const grammar = this.grammar;
    this.text = text;
    let seen = 0;
    this.resetArgs();
    let i = grammar.skipWhitespace(text, at + 1);
    if (i >= text.length) return grammar.needMore();
    if (text.charCodeAt(i) === CLOSE_BRACE) return this.finishEvent(record, i + 1, seen);
    for (;;) {
      if (text.charCodeAt(i) !== QUOTE) return grammar.bail();
      const keyEnd = grammar.scanPlainString(text, i);
      if (keyEnd < 0) return -1;
      const bit = memberBit(text, i + 1, keyEnd - i - 2);
      i = grammar.skipWhitespace(text, keyEnd);
      if (i >= text.length) return grammar.needMore();
      if (text.charCodeAt(i) !== COLON) return grammar.bail();
      i = grammar.skipWhitespace(text, i + 1);
      if (i >= text.length) return grammar.needMore();
      if (bit !== 0) {
        if (seen & bit) return grammar.bail();
        seen |= bit;
      }
      i = bit === ARGS ? this.scanArgs(text, i, record) : this.scanMember(text, i, bit, record);
      if (i < 0) return -1;
      i = grammar.skipWhitespace(text, i);
      if (i >= text.length) return grammar.needMore();
      const next = text.charCodeAt(i);
      if (next === CLOSE_BRACE) return this.finishEvent(record, i + 1, seen);
      if (next !== COMMA) return grammar.bail();
      i = grammar.skipWhitespace(text, i + 1);
      if (i >= text.length) return grammar.needMore();
    }
  }

  /** The args object, canonically; fills the slots of the members the extractor reads. */
  private scanArgs(text: string, at: number, record: TraceEventRecord): number {
    const grammar = this.grammar;
    if (text.charCodeAt(at) !== OPEN_BRACE) return grammar.bail();
    grammar.nonAscii = false;
    const end = grammar.scanObject(text, at, true, 1, this.onArgMember);
    if (end < 0) return -1;
    const length = end - at;
    if (length > maxArgsBytes || (grammar.nonAscii && Buffer.byteLength(text.slice(at, end)) > maxArgsBytes)) return grammar.bail();
    const argsText = text.slice(at, end);
    record.argsText = argsText;
    record.argsJson = argsText;
    record.argsIsObject = true;
    return end;
  }

  /** Any other member: skipped, or read into the record when the extractor uses it. */
  private scanMember(text: string, at: number, bit: number, record: TraceEventRecord): number {
    const grammar = this.grammar;
    const end = grammar.scanValue(text, at, false);
    if (end < 0 || bit === 0) return end;
    const first = text.charCodeAt(at);
    const isString = first === QUOTE;
    const isNumber = first === MINUS || isDigit(first);
    switch (bit) {
      case PH:
      case CAT:
      case SCOPE:
      case NAME: {
        if (!isString) return grammar.bail();
        const value = this.interner.value(text, at + 1, end - 1);
        if (bit === PH) record.ph = value;
        else if (bit === CAT) record.category = value;
        else if (bit === SCOPE) record.scope = value;
        else record.nameString = value;
        return end;
      }
      case TS:
        if (!isNumber) return grammar.bail();
        record.tsNs = this.clock.relativeNs(text, at, end);
        return end;
      case DUR:
        if (!isNumber) return grammar.bail();
        record.durNs = this.clock.durationNs(text, at, end);
        return end;
      default: {
        if (!isString && !isNumber) return grammar.bail();
        const value = this.scalarText(text, at, end);
        if (bit === PID) record.pid = value;
        else if (bit === TID) record.tid = value;
        else if (bit === ID) {
          record.idDefined = true;
          record.idText = value;
        } else record.bindIdText = value;
        return end;
      }
    }
  }

  /** Number or string member text (pid/tid/id): what `asText` gives for the parsed value. */
  private scalarText(text: string, start: number, end: number): string | null {
    const first = text.charCodeAt(start);
    if (first === QUOTE) return this.interner.value(text, start + 1, end - 1);
    if (first === MINUS || isDigit(first)) {
      return canonicalNumber(text, start, end) ? this.interner.value(text, start, end) : String(Number(text.slice(start, end)));
    }
    return null;
  }

  private finishEvent(record: TraceEventRecord, end: number, seen: number): number {
    record.name = record.nameString ?? "";
    if (seen & ARGS) {
      record.correlation = this.pickSlots(argCorrelation, correlationKeys.length);
      record.device = this.pickSlots(argDevice, deviceKeys.length);
      record.stream = this.pickSlots(argStream, streamKeys.length);
      const kinds = this.argKinds;
      record.file =
        kinds[argFilename] === STRING ? this.argTexts[argFilename]! : kinds[argFile] === STRING ? this.argTexts[argFile]! : null;
      record.line = kinds[argLine] === NUMBER ? Number(this.argTexts[argLine]) : null;
      record.metaName = kinds[argName] === STRING ? this.argTexts[argName]! : null;
      this.resetArgs();
    }
    return end;
  }

  private resetArgs(): void {
    for (const slot of this.argTouched) {
      this.argKinds[slot] = ABSENT;
      this.argTexts[slot] = null;
    }
    this.argTouched.length = 0;
  }

  private pickSlots(base: number, count: number): string | null {
    for (let k = 0; k < count; k++) {
      const kind = this.argKinds[base + k];
      if (kind === STRING || kind === NUMBER) return this.argTexts[base + k] as string;
    }
    return null;
  }
}
