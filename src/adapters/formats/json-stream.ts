/**
 * A small incremental JSON scanner for large JSON files: it walks a file chunk by chunk, keeps
 * only the path to the current value, and hands the caller parsed values at the paths it selects.
 * Multi-GiB traces never exist as one string, so memory stays bounded by the largest selected value.
 */
import {
  BACKSLASH,
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COLON,
  COMMA,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
  concatBytes,
  describeCode,
  isJsonWhitespace,
  isScalarByte,
  isScalarStart,
} from "./json-grammar.ts";

export type JsonPathSegment = string | number;

/** `capture`: parse the value and hand it over; `enter`: descend into an object/array; `skip`: ignore it. */
export type JsonSelection = "capture" | "enter" | "skip";

export interface JsonVisitor {
  select(path: readonly JsonPathSegment[]): JsonSelection;
  value(path: readonly JsonPathSegment[], value: unknown): void;
}

export type ParseMode = "auto" | "stream" | "whole";

/** Below this a file is parsed whole (faster for small files); anything larger is always streamed. */
export const wholeParseLimitBytes = 8 * 1024 * 1024;

/** Raised by the scanner; the readers turn it into ARTIFACT_PARSE_FAILED naming the file. */
export class JsonScanError extends Error {
  readonly offset: number;
  constructor(message: string, offset: number) {
    super(message);
    this.name = "JsonScanError";
    this.offset = offset;
  }
}

/** A selected value is larger than the scanner holds (`maxCapturedBytes`). */
export class JsonValueTooLarge extends JsonScanError {}

/** Bytes of one captured value the scanner keeps before it refuses (no reader captures more than a sample or a frame table). */
export const maxCapturedBytes = 256 << 20;

const OBJECT = 0;
const ARRAY = 1;

// Grammar states outside of a skipped/captured value.
const EXPECT_VALUE = 0;
const EXPECT_VALUE_OR_CLOSE = 1;
const EXPECT_KEY_OR_CLOSE = 2;
const EXPECT_KEY = 3;
const EXPECT_COLON = 4;
const EXPECT_COMMA_OR_CLOSE = 5;
const IN_KEY = 6;
const IN_VALUE = 7;
const DONE = 8;

// Kinds of a skipped/captured value.
const KIND_CONTAINER = 0;
const KIND_STRING = 1;
const KIND_SCALAR = 2;

export function formatJsonPath(path: readonly JsonPathSegment[]): string {
  let text = "";
  for (const segment of path) text += typeof segment === "number" ? `[${segment}]` : text ? `.${segment}` : segment;
  return text || "(top level)";
}

/**
 * Push-style scanner: feed chunks with `push`, then call `end`. String- and escape-aware; validates
 * structure (bracket matching, separators) everywhere and full syntax inside captured values.
 */
export class JsonStreamScanner {
  private readonly visitor: JsonVisitor;
  private readonly decoder = new TextDecoder();
  private base = 0;
  private state = EXPECT_VALUE;
  private readonly containers: number[] = [];
  private readonly path: JsonPathSegment[] = [];
  private sawValue = false;

  private keyParts: Uint8Array[] = [];
  private keyEscape = false;
  private keyHasEscape = false;

  private valueKind = KIND_CONTAINER;
  private valueStart = 0;
  private capturing = false;
  private captureParts: Uint8Array[] = [];
  private capturedBytes = 0;
  private brackets: number[] = [];
  private inString = false;
  private escape = false;

  constructor(visitor: JsonVisitor) {
    this.visitor = visitor;
  }

  /** Bytes consumed so far. */
  get offset(): number {
    return this.base;
  }

  push(chunk: Uint8Array): void {
    let i = 0;
    if (this.base === 0 && chunk.length >= 3 && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) i = 3;
    const length = chunk.length;
    while (i < length) {
      if (this.state === IN_VALUE) {
        i = this.scanValue(chunk, i);
        continue;
      }
      if (this.state === IN_KEY) {
        i = this.scanKey(chunk, i);
        continue;
      }
      const byte = chunk[i] as number;
      if (isJsonWhitespace(byte)) {
        i++;
        continue;
      }
      switch (this.state) {
        case EXPECT_VALUE_OR_CLOSE:
          if (byte === CLOSE_BRACKET) {
            this.closeContainer(ARRAY, i);
            i++;
            break;
          }
          i = this.startValue(chunk, i, byte);
          break;
        case EXPECT_VALUE:
          i = this.startValue(chunk, i, byte);
          break;
        case EXPECT_KEY_OR_CLOSE:
          if (byte === CLOSE_BRACE) {
            this.closeContainer(OBJECT, i);
            i++;
            break;
          }
          i = this.startKey(byte, i);
          break;
        case EXPECT_KEY:
          i = this.startKey(byte, i);
          break;
        case EXPECT_COLON:
          if (byte !== COLON) this.fail(`expected ':' after an object key, found ${describeCode(byte)}`, i);
          this.state = EXPECT_VALUE;
          i++;
          break;
        case EXPECT_COMMA_OR_CLOSE: {
          const top = this.containers[this.containers.length - 1];
          if (byte === COMMA) {
            if (top === ARRAY) {
              this.path[this.path.length - 1] = (this.path[this.path.length - 1] as number) + 1;
              this.state = EXPECT_VALUE;
            } else {
              this.state = EXPECT_KEY;
            }
          } else if (byte === CLOSE_BRACKET) {
            this.closeContainer(ARRAY, i);
          } else if (byte === CLOSE_BRACE) {
            this.closeContainer(OBJECT, i);
          } else {
            this.fail(`expected ',' or a closing bracket, found ${describeCode(byte)}`, i);
          }
          i++;
          break;
        }
        case DONE:
          this.fail(`unexpected ${describeCode(byte)} after the end of the JSON document`, i);
          break;
        default:
          this.fail("scanner reached an impossible state", i);
      }
    }
    this.base += length;
  }

  end(): void {
    const at = this.base;
    if (this.state === IN_VALUE && this.valueKind === KIND_SCALAR && this.containers.length === 0) {
      this.finishValue(new Uint8Array(0), 0, 0);
    }
    if (this.state === DONE) return;
    if (!this.sawValue) throw new JsonScanError(`the file holds no JSON value (ends at byte ${at})`, at);
    const where = formatJsonPath(this.path);
    if (this.state === IN_VALUE) {
      throw new JsonScanError(
        `truncated JSON: the file ends at byte ${at} inside a value that starts at byte ${this.valueStart} (${where})`,
        at,
      );
    }
    throw new JsonScanError(`truncated JSON: the file ends at byte ${at} inside ${where}`, at);
  }

  private fail(message: string, index: number): never {
    const at = this.base + index;
    throw new JsonScanError(`malformed JSON at byte ${at}: ${message} (in ${formatJsonPath(this.path)})`, at);
  }

  private startKey(byte: number, index: number): number {
    if (byte !== QUOTE) this.fail(`expected an object key string, found ${describeCode(byte)}`, index);
    this.state = IN_KEY;
    this.keyParts = [];
    this.keyEscape = false;
    this.keyHasEscape = false;
    return index + 1;
  }

  private scanKey(chunk: Uint8Array, start: number): number {
    let i = start;
    const length = chunk.length;
    for (; i < length; i++) {
      const byte = chunk[i] as number;
      if (this.keyEscape) {
        this.keyEscape = false;
      } else if (byte === BACKSLASH) {
        this.keyEscape = true;
        this.keyHasEscape = true;
      } else if (byte === QUOTE) {
        const bytes = concatBytes(this.keyParts, chunk.subarray(start, i));
        this.keyParts = [];
        const raw = this.decoder.decode(bytes);
        let key = raw;
        if (this.keyHasEscape) {
          try {
            key = JSON.parse(`"${raw}"`) as string;
          } catch {
            this.fail("invalid escape in an object key", i);
          }
        }
        this.path[this.path.length - 1] = key;
        this.state = EXPECT_COLON;
        return i + 1;
      }
    }
    // A copy: the reader reuses its chunk buffer, and Buffer#slice would only be a view of it.
    this.keyParts.push(Uint8Array.prototype.slice.call(chunk, start, length));
    return length;
  }

  private startValue(chunk: Uint8Array, index: number, byte: number): number {
    if (this.containers.length === 0) this.sawValue = true;
    const selection = this.visitor.select(this.path);
    if (selection === "enter" && (byte === OPEN_BRACE || byte === OPEN_BRACKET)) {
      if (byte === OPEN_BRACE) {
        this.containers.push(OBJECT);
        this.path.push("");
        this.state = EXPECT_KEY_OR_CLOSE;
      } else {
        this.containers.push(ARRAY);
        this.path.push(0);
        this.state = EXPECT_VALUE_OR_CLOSE;
      }
      return index + 1;
    }
    this.capturing = selection === "capture";
    this.captureParts = [];
    this.capturedBytes = 0;
    this.valueStart = this.base + index;
    this.inString = false;
    this.escape = false;
    if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      this.valueKind = KIND_CONTAINER;
      this.brackets = [byte];
    } else if (byte === QUOTE) {
      this.valueKind = KIND_STRING;
      this.inString = true;
    } else if (isScalarStart(byte)) {
      this.valueKind = KIND_SCALAR;
    } else {
      this.fail(`expected a value, found ${describeCode(byte)}`, index);
    }
    this.state = IN_VALUE;
    return this.scanValue(chunk, index + 1, index);
  }

  /**
   * Scans (part of) a skipped or captured value. `chunkStart` is where the value begins in this
   * chunk (0 when it began in an earlier one).
   */
  private scanValue(chunk: Uint8Array, start: number, chunkStart = 0): number {
    const length = chunk.length;
    let i = start;
    if (this.valueKind === KIND_SCALAR) {
      for (; i < length; i++) {
        const byte = chunk[i] as number;
        if (!isScalarByte(byte)) {
          if (isJsonWhitespace(byte) || byte === COMMA || byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
            this.finishValue(chunk, chunkStart, i);
            return i;
          }
          this.fail(`unexpected ${describeCode(byte)} in a literal`, i);
        }
      }
    } else {
      let inString = this.inString;
      let escaped = this.escape;
      const brackets = this.brackets;
      for (; i < length; i++) {
        const byte = chunk[i] as number;
        if (inString) {
          if (escaped) escaped = false;
          else if (byte === BACKSLASH) escaped = true;
          else if (byte === QUOTE) {
            inString = false;
            if (this.valueKind === KIND_STRING) {
              this.inString = false;
              this.finishValue(chunk, chunkStart, i + 1);
              return i + 1;
            }
          } else if (byte < 0x20) {
            this.fail("control character inside a string", i);
          }
          continue;
        }
        if (byte === QUOTE) inString = true;
        else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) brackets.push(byte);
        else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
          const open = brackets.pop();
          if (open !== (byte === CLOSE_BRACE ? OPEN_BRACE : OPEN_BRACKET)) {
            this.fail(`mismatched ${describeCode(byte)}`, i);
          }
          if (brackets.length === 0) {
            this.inString = false;
            this.escape = false;
            this.finishValue(chunk, chunkStart, i + 1);
            return i + 1;
          }
        }
      }
      this.inString = inString;
      this.escape = escaped;
    }
    if (this.capturing) {
      // A copy: the reader reuses its chunk buffer, and Buffer#slice would only be a view of it.
      this.captureParts.push(Uint8Array.prototype.slice.call(chunk, chunkStart, length));
      this.capturedBytes += length - chunkStart;
      if (this.capturedBytes > maxCapturedBytes) {
        throw new JsonValueTooLarge(
          `the value that starts at byte ${this.valueStart} is larger than ${maxCapturedBytes} bytes`,
          this.valueStart,
        );
      }
    }
    return length;
  }

  private finishValue(chunk: Uint8Array, chunkStart: number, endIndex: number): void {
    if (this.capturing) {
      const tail = chunk.subarray(chunkStart, endIndex);
      const bytes = this.captureParts.length > 0 ? concatBytes(this.captureParts, tail) : tail;
      this.captureParts = [];
      let parsed: unknown;
      try {
        parsed = JSON.parse(this.decoder.decode(bytes));
      } catch (error) {
        throw new JsonScanError(
          `malformed JSON in the value that starts at byte ${this.valueStart} (${formatJsonPath(this.path)}): ${
            error instanceof Error ? error.message : String(error)
          }`,
          this.valueStart,
        );
      }
      this.visitor.value(this.path, parsed);
    }
    this.capturing = false;
    this.afterValue();
  }

  private closeContainer(kind: number, index: number): void {
    const top = this.containers.pop();
    if (top !== kind) this.fail(`mismatched ${kind === ARRAY ? "']'" : "'}'"}`, index);
    this.path.pop();
    this.afterValue();
  }

  private afterValue(): void {
    this.state = this.containers.length === 0 ? DONE : EXPECT_COMMA_OR_CLOSE;
  }
}
