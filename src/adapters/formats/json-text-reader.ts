/**
 * Pull reading of a JSON document as decoded text, for the fast readers (Chrome events, speedscope
 * samples): the source is read in large chunks and decoded once, and a scan that needs more text
 * than the window holds keeps the unread rest and appends the next chunk. A value bigger than a
 * chunk reads geometrically more, so re-scanning stays linear; one bigger than `maxValueChars`
 * ends the read (ValueTooLarge) instead of growing without bound.
 */
import type { ByteSource } from "./byte-source.ts";
import { JsonTextScanner, NEED_MORE } from "./json-grammar.ts";

/** A structural error the fast reader found; the caller reports it through the generic scanner. */
export class FastScanError extends Error {}

/** One JSON value is larger than a reader holds. */
export class ValueTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`one JSON value is larger than ${limit} characters`);
  }
}

const readBytes = 8 << 20;
export const maxValueChars = 256 << 20;

export class JsonTextReader {
  protected readonly grammar = new JsonTextScanner();
  protected text = "";
  protected at = 0;
  private readonly decoder = new TextDecoder();
  private eof = false;
  private want = readBytes;
  private buffer = Buffer.allocUnsafe(readBytes);

  constructor(private readonly source: ByteSource) {}

  protected fail(message: string): never {
    throw new FastScanError(message);
  }

  /** Keeps text from `keep` on and appends the next chunk; false at the end of the file. */
  protected async more(keep: number): Promise<boolean> {
    if (this.eof) return false;
    if (this.buffer.length < this.want) this.buffer = Buffer.allocUnsafe(this.want);
    let filled = 0;
    while (filled < this.want) {
      const read = await this.source.read(this.buffer, filled, this.want - filled);
      if (read === 0) {
        this.eof = true;
        break;
      }
      filled += read;
    }
    const decoded = this.decoder.decode(this.buffer.subarray(0, filled), { stream: !this.eof });
    this.text = keep < this.text.length ? this.text.slice(keep) + decoded : decoded;
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

  /** Skips one whole value at `at`. */
  protected async skipValue(): Promise<void> {
    const end = await this.run((start) => this.grammar.skipStructural(this.text, start));
    if (end < 0) this.fail("truncated JSON");
    this.at = end;
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

  /** True at the end of the source with no text left. */
  protected get exhausted(): boolean {
    return this.eof && this.at >= this.text.length;
  }
}
