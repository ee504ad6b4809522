/**
 * The JSON grammar both JSON readers share: the structural character codes and classes (the same
 * numbers whether they are UTF-8 bytes, as in json-stream.ts, or UTF-16 code units of decoded text,
 * as in the Chrome event scanner), and a pull scanner over decoded text that reads strings, numbers,
 * literals and whole values and says when it needs more text or must give up.
 */

export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const MINUS = 0x2d;
export const PLUS = 0x2b;
export const DOT = 0x2e;
const DIGIT_ZERO = 0x30;
const DIGIT_ONE = 0x31;
const DIGIT_NINE = 0x39;
const LOWER_E = 0x65;
const UPPER_E = 0x45;

export function isJsonWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

export function isDigit(code: number): boolean {
  return code >= DIGIT_ZERO && code <= DIGIT_NINE;
}

/** Digits, minus, and the first letters of true/false/null. */
export function isScalarStart(code: number): boolean {
  return isDigit(code) || code === MINUS || code === 0x74 || code === 0x66 || code === 0x6e;
}

/** Characters a number or literal may hold after its first one. */
export function isScalarByte(code: number): boolean {
  return isDigit(code) || (code >= 0x61 && code <= 0x7a) || code === MINUS || code === PLUS || code === DOT || code === UPPER_E;
}

export function describeCode(code: number): string {
  return code >= 0x20 && code < 0x7f ? `'${String.fromCharCode(code)}'` : `byte 0x${code.toString(16).padStart(2, "0")}`;
}

/** Why a scan returned -1. */
export const NEED_MORE = 1;
export const BAIL = 2;

/** Canonical (re-serializable) values deeper than this make the scanner bail to JSON.parse. */
const maxCanonicalDepth = 64;

/**
 * Pull scanning of decoded JSON text. Every method returns the index after what it read, or -1 with
 * `failure` set: NEED_MORE when the text ends inside the value, BAIL when the value is malformed or
 * outside what the caller asked for (escapes, non-canonical text, too deep). `nonAscii` records
 * whether a string read since the caller last cleared it held a character above U+007E.
 */
export class JsonTextScanner {
  failure = 0;
  nonAscii = false;
  /** Key spans of the objects being read in canonical mode, one list per depth, reused from value to value. */
  private readonly keysByDepth: number[][] = [];

  needMore(): number {
    this.failure = NEED_MORE;
    return -1;
  }

  bail(): number {
    this.failure = BAIL;
    return -1;
  }

  skipWhitespace(text: string, at: number): number {
    const length = text.length;
    while (at < length && isJsonWhitespace(text.charCodeAt(at))) at++;
    return at;
  }

  /** At a quote: index after the closing quote. Bails on escapes and control characters. */
  scanPlainString(text: string, at: number): number {
    const length = text.length;
    for (let i = at + 1; i < length; i++) {
      const code = text.charCodeAt(i);
      if (code === QUOTE) return i + 1;
      if (code === BACKSLASH || code < 0x20) return this.bail();
      if (code > 0x7e) this.nonAscii = true;
    }
    return this.needMore();
  }

  /** A JSON number (strict grammar). */
  scanNumber(text: string, at: number): number {
    const length = text.length;
    let i = at;
    if (text.charCodeAt(i) === MINUS) i++;
    if (i >= length) return this.needMore();
    let code = text.charCodeAt(i);
    if (code === DIGIT_ZERO) i++;
    else if (code >= DIGIT_ONE && code <= DIGIT_NINE) {
      while (i < length && isDigit(text.charCodeAt(i))) i++;
    } else return this.bail();
    if (i >= length) return this.needMore();
    code = text.charCodeAt(i);
    if (code === DOT) {
      i++;
      const digits = i;
      while (i < length && isDigit(text.charCodeAt(i))) i++;
      if (i >= length) return this.needMore();
      if (i === digits) return this.bail();
      code = text.charCodeAt(i);
    }
    if (code === LOWER_E || code === UPPER_E) {
      i++;
      if (i >= length) return this.needMore();
      code = text.charCodeAt(i);
      if (code === PLUS || code === MINUS) i++;
      const digits = i;
      while (i < length && isDigit(text.charCodeAt(i))) i++;
      if (i >= length) return this.needMore();
      if (i === digits) return this.bail();
    }
    return i;
  }

  scanLiteral(text: string, at: number): number {
    const code = text.charCodeAt(at);
    const word = code === 0x74 ? "true" : code === 0x66 ? "false" : code === 0x6e ? "null" : null;
    if (word === null) return this.bail();
    if (at + word.length > text.length) return this.needMore();
    if (!text.startsWith(word, at)) return this.bail();
    return at + word.length;
  }

  /**
   * Any JSON value. `canonical`: the text must be exactly `JSON.stringify(JSON.parse(text))` (no
   * whitespace, canonical numbers, no duplicate or integer-like keys), else it bails.
   */
  scanValue(text: string, at: number, canonical: boolean, depth = 0): number {
    if (at >= text.length) return this.needMore();
    const code = text.charCodeAt(at);
    if (code === QUOTE) return this.scanPlainString(text, at);
    if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      // Deep values take the JSON.parse path, which needs no call stack per level here.
      if (depth >= maxCanonicalDepth) return this.bail();
      return code === OPEN_BRACE ? this.scanObject(text, at, canonical, depth + 1) : this.scanArray(text, at, canonical, depth + 1);
    }
    if (code === MINUS || isDigit(code)) {
      const end = this.scanNumber(text, at);
      if (end < 0) return -1;
      if (canonical && !canonicalNumber(text, at, end)) return this.bail();
      return end;
    }
    return this.scanLiteral(text, at);
  }

  private scanArray(text: string, at: number, canonical: boolean, depth: number): number {
    let i = at + 1;
    if (!canonical) i = this.skipWhitespace(text, i);
    if (i >= text.length) return this.needMore();
    if (text.charCodeAt(i) === CLOSE_BRACKET) return i + 1;
    for (;;) {
      i = this.scanValue(text, i, canonical, depth);
      if (i < 0) return -1;
      if (!canonical) i = this.skipWhitespace(text, i);
      if (i >= text.length) return this.needMore();
      const next = text.charCodeAt(i);
      if (next === CLOSE_BRACKET) return i + 1;
      if (next !== COMMA) return this.bail();
      i++;
      if (!canonical) i = this.skipWhitespace(text, i);
    }
  }

  /**
   * An object. In canonical mode keys must be distinct and not integer-like (JSON.parse reorders
   * those); `onMember`, when given, sees each member's key and value span.
   */
  scanObject(
    text: string,
    at: number,
    canonical: boolean,
    depth: number,
    onMember?: (keyStart: number, keyEnd: number, valueStart: number, valueEnd: number) => void,
  ): number {
    let i = at + 1;
    if (!canonical) i = this.skipWhitespace(text, i);
    if (i >= text.length) return this.needMore();
    if (text.charCodeAt(i) === CLOSE_BRACE) return i + 1;
    let keys: number[] | undefined;
    if (canonical) {
      keys = this.keysByDepth[depth];
      if (keys === undefined) {
        keys = [];
        this.keysByDepth[depth] = keys;
      } else keys.length = 0;
    }
    for (;;) {
      if (text.charCodeAt(i) !== QUOTE) return this.bail();
      const keyEnd = this.scanPlainString(text, i);
      if (keyEnd < 0) return -1;
      const keyStart = i + 1;
      if (canonical) {
        const keyLength = keyEnd - 1 - keyStart;
        if (keyLength > 0 && isDigit(text.charCodeAt(keyStart))) return this.bail();
        if (sameKey(text, keys as number[], keyStart, keyLength)) return this.bail();
        (keys as number[]).push(keyStart, keyLength);
      }
      i = keyEnd;
      if (!canonical) i = this.skipWhitespace(text, i);
      if (i >= text.length) return this.needMore();
      if (text.charCodeAt(i) !== COLON) return this.bail();
      i++;
      if (!canonical) i = this.skipWhitespace(text, i);
      const valueStart = i;
      i = this.scanValue(text, i, canonical, depth);
      if (i < 0) return -1;
      onMember?.(keyStart, keyEnd - 1, valueStart, i);
      if (!canonical) i = this.skipWhitespace(text, i);
      if (i >= text.length) return this.needMore();
      const next = text.charCodeAt(i);
      if (next === CLOSE_BRACE) return i + 1;
      if (next !== COMMA) return this.bail();
      i++;
      if (!canonical) i = this.skipWhitespace(text, i);
      if (i >= text.length) return this.needMore();
    }
  }

  /**
   * Structural skip of any value: escape-aware and iterative (a value nested 100,000 deep costs no
   * call stack). Validates bracket balance only; the caller parses what it keeps.
   */
  skipStructural(text: string, at: number): number {
    const length = text.length;
    const first = text.charCodeAt(at);
    if (first !== OPEN_BRACE && first !== OPEN_BRACKET && first !== QUOTE) {
      let i = at;
      while (i < length) {
        const code = text.charCodeAt(i);
        if (isJsonWhitespace(code) || code === COMMA || code === CLOSE_BRACE || code === CLOSE_BRACKET) {
          return i === at ? this.bail() : i;
        }
        i++;
      }
      return this.needMore();
    }
    let depth = 0;
    let inString = false;
    for (let i = at; i < length; i++) {
      const code = text.charCodeAt(i);
      if (inString) {
        if (code === BACKSLASH) i++;
        else if (code === QUOTE) {
          inString = false;
          if (depth === 0) return i + 1;
        }
        continue;
      }
      if (code === QUOTE) inString = true;
      else if (code === OPEN_BRACE || code === OPEN_BRACKET) depth++;
      else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
        depth--;
        if (depth === 0) return i + 1;
      }
    }
    return this.needMore();
  }
}

/** Whether a number's text is what `JSON.stringify` writes for its value. */
export function canonicalNumber(text: string, start: number, end: number): boolean {
  let plainInteger = end - start <= 15;
  for (let i = start; plainInteger && i < end; i++) {
    const code = text.charCodeAt(i);
    if (code === DOT || code === LOWER_E || code === UPPER_E) plainInteger = false;
  }
  if (plainInteger) return !(end - start === 2 && text.charCodeAt(start) === MINUS && text.charCodeAt(start + 1) === DIGIT_ZERO);
  const token = text.slice(start, end);
  return String(Number(token)) === token;
}

/** Whether the key at `start` (of `length`) already appears among `starts` (start, length pairs). */
export function sameKey(text: string, starts: number[], start: number, length: number): boolean {
  for (let k = 0; k < starts.length; k += 2) {
    const other = starts[k] as number;
    if (starts[k + 1] !== length) continue;
    let same = true;
    for (let c = 0; c < length && same; c++) same = text.charCodeAt(other + c) === text.charCodeAt(start + c);
    if (same) return true;
  }
  return false;
}

/** The bytes of a value or key that spans chunks, joined: the parts kept so far and the last chunk's tail. */
export function concatBytes(parts: Uint8Array[], tail: Uint8Array): Uint8Array {
  let length = tail.length;
  for (const part of parts) length += part.length;
  const joined = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    joined.set(part, at);
    at += part.length;
  }
  joined.set(tail, at);
  return joined;
}
