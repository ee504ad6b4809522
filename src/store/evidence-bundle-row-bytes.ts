/**
 * trace_events and stacks rows written straight into the staging buffer as bytes, with no line string in
 * between: number → string conversions and building then flattening a joined line cost more than
 * the digits and characters themselves. Only the plain case is written here — integers and ASCII
 * text without the characters the staging encoding escapes (evidence-bundle-encoding.ts); any other
 * row is refused (-1) and the caller writes it through the string encoder, so the bytes are the same
 * either way.
 */
import type { StackRow, TraceEventRow } from "../domain/evidence.ts";

const separator = 0x1f;
const nullByte = 0x02;
const encodedMarker = 0x03;
const quote = 0x22;
const minus = 0x2d;
const zero = 0x30;
/** Below this, `hi * 1e9` of a split value stays exact (hi * 1953125 < 2^53). */
const splitLimit = 4.5e18;
/** Per row: five integers of up to 20 characters, an empty-string marker per text field, separators. */
const rowOverhead = 5 * 20 + 9 * 3 + 14;

/** Powers of ten up to 10^15: a digit count by comparisons instead of a division per digit. */
const powersOfTen = Array.from({ length: 16 }, (_, power) => 10 ** power);
/** The two ASCII digits of 0..99, as one 16-bit pair per number (tens first). */
const digitPairs = Uint8Array.from({ length: 200 }, (_, index) => zero + (index % 2 === 0 ? Math.floor(index / 20) : (index >> 1) % 10));

/** Digits of a non-negative integer below 2^53, at `at`; `width` pads with zeros. */
function putDigits(into: Buffer, at: number, value: number, width: number): number {
  let length = 1;
  while (length < 16 && value >= (powersOfTen[length] as number)) length++;
  if (length < width) length = width;
  // Two digits per division, from the right.
  let position = at + length;
  if (value <= 0x7fffffff) {
    // Event ids, depths, durations and both halves of an absolute timestamp: int32 division.
    let small = value | 0;
    while (position - at >= 2) {
      const next = (small / 100) | 0;
      const pair = (small - next * 100) << 1;
      into[--position] = digitPairs[pair + 1] as number;
      into[--position] = digitPairs[pair] as number;
      small = next;
    }
    if (position > at) into[--position] = zero + small;
    return at + length;
  }
  let rest = value;
  while (position - at >= 2) {
    const next = Math.floor(rest / 100);
    const pair = (rest - next * 100) * 2;
    into[--position] = digitPairs[pair + 1] as number;
    into[--position] = digitPairs[pair] as number;
    rest = next;
  }
  if (position > at) into[--position] = zero + rest;
  return at + length;
}

/** An integer column (null and non-finite as NULL); -1 for a value only the string path writes. */
function putInteger(into: Buffer, at: number, value: number | null): number {
  if (value === null || !Number.isFinite(value)) {
    into[at] = nullByte;
    return at + 1;
  }
  if (!Number.isInteger(value)) return -1;
  let magnitude = value;
  if (value < 0) {
    into[at++] = minus;
    magnitude = -value;
  }
  if (magnitude <= Number.MAX_SAFE_INTEGER) return putDigits(into, at, magnitude, 0);
  if (magnitude >= splitLimit) return -1;
  // Absolute timestamps in ns (~1.7e18): whole seconds and nanoseconds, each exact below 2^53.
  let high = Math.floor(magnitude / 1e9);
  let low = magnitude - high * 1e9;
  if (low < 0) {
    high--;
    low += 1e9;
  } else if (low >= 1e9) {
    high++;
    low -= 1e9;
  }
  return putDigits(into, putDigits(into, at, high, 0), low, 9);
}

/**
 * The characters the staging encoding escapes. Long text is also refused when it holds any non-ASCII
 * character, which its UTF-8 length shows: a class with the whole range above U+007F made the test
 * three times slower than this one plus `Buffer.byteLength` (~110 vs ~55 ns for a 220-character args text).
 */
const escaped = /[\x01-\x03\n\r\x1e\x1f]/;
/**
 * From this length on, text is checked by `escaped` and its UTF-8 length and copied natively: the
 * three native calls cost ~75-90 ns whatever the length, the loop ~0.6-1.3 ns per character, even at
 * ~64 (1M calls per length, 6 to 128 characters).
 */
const nativeCopyFrom = 64;

/** A text column; -1 when it holds a character the staging encoding escapes, or any non-ASCII one. */
function putText(into: Buffer, at: number, value: string | null): number {
  if (value === null) {
    into[at] = nullByte;
    return at + 1;
  }
  const length = value.length;
  if (length === 0) {
    into[at] = encodedMarker;
    into[at + 1] = quote;
    into[at + 2] = quote;
    return at + 3;
  }
  if (length >= nativeCopyFrom) {
    // Long text (args above all): native checks and a native copy cost less than the loop below.
    if (Buffer.byteLength(value, "utf8") !== length || escaped.test(value)) return -1;
    return at + into.write(value, at, "latin1");
  }
  for (let index = 0; index < length; index++) {
    const code = value.charCodeAt(index);
    if (code >= 0x80 || (code < 0x20 && (code === 0x0a || code === 0x0d || (code >= 0x01 && code <= 0x03) || code >= 0x1e))) return -1;
    into[at + index] = code;
  }
  return at + length;
}

/** Upper bound of the bytes `putRow` writes for a row. */
export function rowBytesBound(row: TraceEventRow): number {
  return (
    rowOverhead +
    row.name.length +
    row.phase.length +
    (row.category?.length ?? 0) +
    (row.pid?.length ?? 0) +
    (row.tid?.length ?? 0) +
    (row.args?.length ?? 0) +
    (row.correlation?.length ?? 0) +
    (row.device?.length ?? 0) +
    (row.stream?.length ?? 0)
  );
}

/** A separator at `at`; the index after it. */
function separated(into: Buffer, at: number): number {
  into[at] = separator;
  return at + 1;
}

/** The newline that ends a row at `at` (or -1 passed on when the row was not plain): the index after it. */
function ended(into: Buffer, at: number): number {
  if (at < 0) return -1;
  into[at] = 0x0a;
  return at + 1;
}

/** Writes a plain row at `at` (room for `rowBytesBound` assumed): the index after it, or -1 for a row that is not plain. */
export function putRow(into: Buffer, at: number, row: TraceEventRow): number {
  let i = putInteger(into, at, row.event_id);
  if (i >= 0) i = putInteger(into, separated(into, i), row.parent_id);
  if (i >= 0) i = putInteger(into, separated(into, i), row.depth);
  if (i >= 0) i = putText(into, separated(into, i), row.name);
  if (i >= 0) i = putText(into, separated(into, i), row.category);
  if (i >= 0) i = putInteger(into, separated(into, i), row.ts_ns);
  if (i >= 0) i = putInteger(into, separated(into, i), row.dur_ns);
  if (i >= 0) i = putText(into, separated(into, i), row.pid);
  if (i >= 0) i = putText(into, separated(into, i), row.tid);
  if (i >= 0) i = putText(into, separated(into, i), row.args);
  if (i >= 0) i = putText(into, separated(into, i), row.correlation);
  if (i >= 0) i = putText(into, separated(into, i), row.device);
  if (i >= 0) i = putText(into, separated(into, i), row.stream);
  if (i >= 0) i = putText(into, separated(into, i), row.phase);
  return ended(into, i);
}

/** A frame-key list joined by commas; -1 when empty or when a key holds a comma (the list is then JSON). */
function putKeys(into: Buffer, at: number, keys: readonly string[]): number {
  if (keys.length === 0) return -1;
  let i = at;
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index] as string;
    if (index > 0) into[i++] = 0x2c;
    if (key.length === 0 || key.includes(",")) return -1;
    i = putText(into, i, key);
    if (i < 0) return -1;
  }
  return i;
}

/** Upper bound of the bytes `putStackRow` writes for a row. */
export function stackRowBytesBound(row: StackRow): number {
  let keys = row.frame_keys.length;
  for (const key of row.frame_keys) keys += key.length;
  return 2 * 20 + 3 * 3 + 6 + keys + (row.thread?.length ?? 0) + (row.process?.length ?? 0) + row.unit.length;
}

/** Writes a plain stacks row at `at` (room for `stackRowBytesBound` assumed): the index after it, or -1. */
export function putStackRow(into: Buffer, at: number, row: StackRow): number {
  // Only weights whose shortest decimal form is their exact digits (String(2**60) rounds them off).
  if (!Number.isSafeInteger(row.weight)) return -1;
  let i = putText(into, at, row.thread);
  if (i >= 0) i = putText(into, separated(into, i), row.process);
  if (i >= 0) i = putKeys(into, separated(into, i), row.frame_keys);
  if (i >= 0) i = putInteger(into, separated(into, i), row.weight);
  if (i >= 0) i = putText(into, separated(into, i), row.unit);
  if (i >= 0) i = putInteger(into, separated(into, i), row.sample_count);
  return ended(into, i);
}
