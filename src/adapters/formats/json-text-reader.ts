/**
 * Pull reading of a JSON document as decoded text, for the fast readers (Chrome events, speedscope
 * samples): the source is read in large chunks and decoded once, and a scan that needs more text
 * than the window holds keeps the unread rest and appends the next chunk. A value bigger than a
 * chunk reads geometrically more, so re-scanning stays linear; one bigger than `maxValueChars`
 * ends the read (ValueTooLarge) instead of growing without bound.
 */
import { isAscii } from "node:buffer";
import type { ByteSource } from "./byte-source.ts";
import {
  BACKSLASH,
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COLON,
  COMMA,
  JsonTextScanner,
  NEED_MORE,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
} from "./json-grammar.ts";

/** A structural error the fast reader found; the caller reports it through the generic scanner. */
export class FastScanError extends Error {}

/** One JSON value is larger than a reader holds. */
export class ValueTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`one JSON value is larger than ${limit} characters`);
  }
}

/**
 * Bytes read and decoded at a time. Each chunk is one large string, and the collector sizes its heap
 * by them: on a 256 MB trace 8 MB chunks peaked ~100 MB higher in RSS than 4 MB ones at the same CPU
 * time, while 1-2 MB ones cost more collections (paired runs of the compiled binary).
 */
const readBytes = 4 << 20;
export const maxValueChars = 256 << 20;

export class JsonTextReader {
  protected readonly grammar = new JsonTextScanner();
  protected text = "";
  protected at = 0;
  private decoder: TextDecoder | null = null;
  private decodedBytes = 0;
  private eof = false;
  /** Every chunk so far was ASCII, so the decoder holds no partial character. */
  private asciiSoFar = true;
  private want = readBytes;
  private buffer = Buffer.allocUnsafe(readBytes);

  constructor(private readonly source: ByteSource) {}

  protected fail(message: string): never {
    throw new FastScanError(message);
  }

  /** Keeps text from `keep` on and appends the next chunk; false at the end of the file. */
  protected async more(keep: number): Promise<boolean> {
    if (this.eof) return false;
    // While every chunk was ASCII, the buffer's first `text.length` bytes are the text's characters:
    // the unread rest moves to the buffer's front and the next bytes are read after it, so the new text
    // is one decode of one span instead of a concatenation the engine flattens on first read (a
    // second copy of every chunk, and twice the garbage). The buffer stays `want` bytes; after a
    // carry it reads `want - carry`: at least the carry, as grow() makes `want` twice what is pending.
    const pending = keep < this.text.length ? this.text.length - keep : 0;
    const carry = this.asciiSoFar ? pending : 0;
    const limit = Math.max(this.want, 2 * carry);
    if (this.buffer.length < limit) {
      const grown = Buffer.allocUnsafe(limit);
      if (carry > 0) this.buffer.copy(grown, 0, keep, keep + carry);
      this.buffer = grown;
    } else if (carry > 0) this.buffer.copyWithin(0, keep, keep + carry);
    let filled = carry;
    while (filled < limit) {
      const read = await this.source.read(this.buffer, filled, limit - filled);
      if (read === 0) {
        this.eof = true;
        break;
      }
      filled += read;
    }
    const bytes = this.buffer.subarray(carry, filled);
    // ASCII text decodes the same as Latin-1, several times faster than through the UTF-8 decoder;
    // after the first other chunk the decoder keeps any partial character between chunks.
    this.asciiSoFar &&= isAscii(bytes);
    this.decodedBytes += bytes.length;
    if (this.asciiSoFar) this.text = this.buffer.toString("latin1", 0, filled);
    else {
      // A decoder that starts mid-file must keep a U+FEFF there: only the file's first bytes can be a BOM.
      this.decoder ??= new TextDecoder("utf-8", { ignoreBOM: this.decodedBytes - bytes.length > 0 });
      const decoded = this.decoder.decode(bytes, { stream: !this.eof });
      this.text = pending > 0 ? this.text.slice(keep) + decoded : decoded;
    }
    this.at = 0;
    return true;
  }

  /** Reads more while keeping the text from `at`. */
  protected async grow(): Promise<boolean> {
    const pending = this.text.length - this.at;
    if (pending > maxValueChars) throw new ValueTooLarge(maxValueChars);
    this.want = Math.max(readBytes, pending * 2);
    const read = await this.more(this.at);
    this.want = readBytes;
    return read;
  }

  /** Runs `scan` at `at`, reading more text while it needs more; -1 at the end of the file. */
  protected async run(scan: (start: number) => number): Promise<number> {
    for (;;) {
      this.grammar.failure = 0;
      const end = scan(this.at);
      if (end >= 0 || this.grammar.failure !== NEED_MORE) return end;
      if (!(await this.grow())) return -1;
    }
  }

  /** Skips whitespace, reading on as needed. */
  protected async skip(): Promise<void> {
    for (;;) {
      this.at = this.grammar.skipWhitespace(this.text, this.at);
      if (this.at < this.text.length) return;
      if (!(await this.more(this.text.length))) return;
    }
  }

  /** The next non-whitespace character; fails at the end of the file. */
  protected async expect(): Promise<number> {
    await this.skip();
    if (this.at >= this.text.length) this.fail("truncated JSON");
    return this.text.charCodeAt(this.at);
  }

  /**
   * Skips one whole value at `at`, following its brackets and strings across chunks without keeping
   * its text: a skipped value of any size (512 MiB of whitespace inside an unread array, say) costs
   * one chunk of memory. Like the structural scan it replaces, it checks brackets and strings, not
   * the grammar inside. Inside containers and strings it jumps between the characters that matter.
   */
  protected async skipValue(): Promise<void> {
    const state: SkipState = { depth: 0, inString: false, escaped: false, scalar: false };
    for (;;) {
      const end = skipIn(this.text, this.at, state);
      if (end === "separator") this.fail("unexpected separator");
      if (end === "close") this.fail("unexpected close bracket");
      if (end >= 0) {
        this.at = end;
        return;
      }
      const length = this.text.length;
      this.at = length;
      if (!(await this.more(length))) {
        if (state.scalar && state.depth === 0 && !state.inString) return;
        this.fail("truncated JSON");
      }
    }
  }

  /** Parses one whole value at `at` with JSON.parse. */
  protected async parseValue(): Promise<unknown> {
    const end = await this.run((from) => this.grammar.skipStructural(this.text, from));
    if (end < 0) this.fail("truncated JSON");
    let value: unknown;
    try {
      value = JSON.parse(this.text.slice(this.at, end));
    } catch (error) {
      this.fail(`malformed value: ${String(error)}`);
    }
    this.at = end;
    return value;
  }

  /** Reads an object key at `at` (a JSON string). */
  protected async readKey(): Promise<string> {
    const keyEnd = await this.run((start) => this.grammar.skipStructural(this.text, start));
    if (keyEnd < 0) this.fail("truncated JSON");
    let key: string;
    try {
      key = JSON.parse(this.text.slice(this.at, keyEnd)) as string;
    } catch {
      this.fail("invalid key");
    }
    this.at = keyEnd;
    return key!;
  }

  /**
   * An object's members: `member` reads each value (the reader is at it; `code` is its first
   * character). A non-object is skipped.
   */
  protected async members(member: (key: string, code: number) => Promise<void>): Promise<void> {
    if ((await this.expect()) !== OPEN_BRACE) return this.skipValue();
    this.at++;
    if ((await this.expect()) === CLOSE_BRACE) {
      this.at++;
      return;
    }
    for (;;) {
      if ((await this.expect()) !== QUOTE) this.fail("expected a key");
      const key = await this.readKey();
      if ((await this.expect()) !== COLON) this.fail("expected ':'");
      this.at++;
      await member(key, await this.expect());
      const code = await this.expect();
      this.at++;
      if (code === CLOSE_BRACE) return;
      if (code !== COMMA) this.fail("expected ',' or '}'");
    }
  }

  /** True at the end of the source with no text left. */
  protected get exhausted(): boolean {
    return this.eof && this.at >= this.text.length;
  }
}

type SkipState = { depth: number; inString: boolean; escaped: boolean; scalar: boolean };

const structural = /["{}[\]]/g;
const stringEnd = /["\\]/g;

/**
 * Scans a skipped value from `from` with the state carried from the previous chunk: the index after
 * the value, -1 when the text ends first, or what made it malformed.
 */
function skipIn(text: string, from: number, state: SkipState): number | "separator" | "close" {
  let index = from;
  while (index < text.length) {
    if (state.inString) {
      if (state.escaped) {
        state.escaped = false;
        index++;
        continue;
      }
      stringEnd.lastIndex = index;
      const found = stringEnd.exec(text);
      if (!found) return -1;
      index = found.index + 1;
      if (text.charCodeAt(found.index) === BACKSLASH) state.escaped = true;
      else {
        state.inString = false;
        if (state.depth === 0) return index;
      }
      continue;
    }
    if (state.depth > 0) {
      structural.lastIndex = index;
      const found = structural.exec(text);
      if (!found) return -1;
      index = found.index + 1;
      const code = text.charCodeAt(found.index);
      if (code === QUOTE) state.inString = true;
      else if (code === OPEN_BRACE || code === OPEN_BRACKET) state.depth++;
      else if (--state.depth === 0) return index;
      continue;
    }
    const code = text.charCodeAt(index);
    if (code === QUOTE) state.inString = true;
    else if (code === OPEN_BRACE || code === OPEN_BRACKET) state.depth++;
    else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) return state.scalar ? index : "close";
    else if (code === COMMA || code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09) {
      // A number, true, false or null ends at the first separator or white space.
      return state.scalar ? index : "separator";
    } else state.scalar = true;
    index++;
  }
  return -1;
}
