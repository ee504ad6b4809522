/**
 * The fast event source of the Chrome trace extractor (DESIGN §9, large JSON). The file is read in
 * large chunks and decoded once; the `traceEvents` array (or a bare event array) is walked as text
 * and each event object is read by `ChromeEventScanner` (or, when it bails, parsed with JSON.parse).
 * Structural errors are reported by the caller, which re-reads the file with the generic scanner
 * for its exact message. A bare array may end without its closing `]`, as the Trace Event Format
 * allows for traces written by a process that was still running.
 */
import type { ByteSource } from "./byte-source.ts";
import { type NumberSources, type TraceClock, TraceEventRecord, recordFromObject, timestampSourceReviver } from "./chrome-event-record.ts";
import { ChromeEventScanner } from "./chrome-event-scanner.ts";
import { CLOSE_BRACE, CLOSE_BRACKET, COLON, COMMA, NEED_MORE, OPEN_BRACE, OPEN_BRACKET, QUOTE } from "./json-grammar.ts";

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
  /** The bare event array ended without `]`. */
  unterminated?: () => void;
};

const readBytes = 8 << 20;

/** Reads one trace through its handlers; the text window, decoder and read buffer are its state. */
export class ChromeTraceReader {
  private readonly decoder = new TextDecoder();
  private readonly scanner: ChromeEventScanner;
  private text = "";
  private at = 0;
  private eof = false;
  private want = readBytes;
  private buffer = Buffer.allocUnsafe(readBytes);
  private events = 0;

  constructor(
    private readonly source: ByteSource,
    private readonly handlers: ChromeEventHandlers,
    private readonly clock: TraceClock,
  ) {
    this.scanner = new ChromeEventScanner(clock);
  }

  /**
   * Streams every event through the handlers. Throws `FastScanError` on malformed or truncated JSON
   * and `UnsupportedShape` (before any event) when the top level is not an array or object.
   */
  async read(): Promise<void> {
    await this.more(0);
    const code = await this.expect().catch(() => -1);
    if (code === OPEN_BRACKET) await this.readArray(true);
    else if (code === OPEN_BRACE) await this.readObject();
    else throw new UnsupportedShape("not an array or object");
    await this.skip();
    if (this.at < this.text.length) this.fail("data after the JSON document");
  }

  private fail(message: string): never {
    throw new FastScanError(message);
  }

  /** Keeps text from `keep` on and appends the next chunk; false at the end of the file. */
  private async more(keep: number): Promise<boolean> {
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

  /** Reads more while keeping the text from `at`; a value bigger than a chunk reads geometrically more, so re-scanning stays linear. */
  private async grow(): Promise<boolean> {
    this.want = Math.max(readBytes, (this.text.length - this.at) * 2);
    const read = await this.more(this.at);
    this.want = readBytes;
    return read;
  }

  /** Runs `scan` at `at`, reading more text while it needs more; -1 at the end of the file. */
  private async run(scan: (start: number) => number): Promise<number> {
    for (;;) {
      this.scanner.grammar.failure = 0;
      const end = scan(this.at);
      if (end >= 0 || this.scanner.grammar.failure !== NEED_MORE) return end;
      if (!(await this.grow())) return -1;
    }
  }

  private async skip(): Promise<void> {
    for (;;) {
      this.at = this.scanner.grammar.skipWhitespace(this.text, this.at);
      if (this.at < this.text.length) return;
      if (!(await this.more(this.text.length))) return;
    }
  }

  private async expect(): Promise<number> {
    await this.skip();
    if (this.at >= this.text.length) this.fail("truncated JSON");
    return this.text.charCodeAt(this.at);
  }

  /** The event (or other element) at `at`, synchronously: false when the text ends inside it. */
  private element(): boolean {
    const grammar = this.scanner.grammar;
    const text = this.text;
    const at = this.at;
    grammar.failure = 0;
    if (text.charCodeAt(at) === OPEN_BRACE) {
      const record = new TraceEventRecord();
      const end = this.scanner.scanEvent(text, at, record);
      if (end >= 0) {
        this.events++;
        record.size = end - at;
        this.at = end;
        this.handlers.event(record);
        return true;
      }
      if (grammar.failure === NEED_MORE) return false;
      return this.parsedEvent(at);
    }
    grammar.failure = 0;
    const end = grammar.skipStructural(text, at);
    if (end < 0) {
      if (grammar.failure === NEED_MORE) return false;
      this.fail("unexpected character");
    }
    let value: unknown;
    try {
      value = JSON.parse(text.slice(at, end));
    } catch (error) {
      this.fail(`malformed value: ${String(error)}`);
    }
    this.at = end;
    this.handlers.other(value);
    return true;
  }

  /** The generic path for one event: JSON.parse of its text, keeping its ts/dur source text. */
  private parsedEvent(at: number): boolean {
    const grammar = this.scanner.grammar;
    grammar.failure = 0;
    const last = grammar.skipStructural(this.text, at);
    if (last < 0) {
      if (grammar.failure === NEED_MORE) return false;
      this.fail("malformed event");
    }
    const sources = new WeakMap<object, NumberSources>();
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(this.text.slice(at, last), timestampSourceReviver(sources)) as Record<string, unknown>;
    } catch (error) {
      this.fail(`malformed event: ${String(error)}`);
    }
    const record = new TraceEventRecord();
    this.events++;
    recordFromObject(parsed!, record, this.clock, sources.get(parsed!));
    record.size = Math.max(record.size, last - at);
    this.at = last;
    this.handlers.event(record);
    return true;
  }

  private async readArray(topLevel: boolean): Promise<void> {
    this.at++; // [
    const grammar = this.scanner.grammar;
    // 0: first element or ']'; 1: an element; 2: ',' or ']'
    let state = 0;
    for (;;) {
      // Synchronous while the text lasts; awaits only to read the next chunk.
      for (;;) {
        this.at = grammar.skipWhitespace(this.text, this.at);
        if (this.at >= this.text.length) break;
        if (state === 2) {
          const code = this.text.charCodeAt(this.at);
          this.at++;
          if (code === CLOSE_BRACKET) return;
          if (code !== COMMA) this.fail("expected ',' or ']'");
          state = 1;
          continue;
        }
        if (state === 0 && this.text.charCodeAt(this.at) === CLOSE_BRACKET) {
          this.at++;
          return;
        }
        if (!this.element()) break;
        state = 2;
      }
      if (this.handlers.chunk) await this.handlers.chunk();
      if (!(await this.grow())) {
        // The JSON Array Format may end without ']' (and after a trailing comma).
        if (topLevel && this.at >= this.text.length && state !== 0) {
          this.handlers.unterminated?.();
          return;
        }
        this.fail("truncated JSON");
      }
    }
  }

  private async readObject(): Promise<void> {
    this.at++;
    let code = await this.expect();
    if (code === CLOSE_BRACE) {
      this.at++;
      return;
    }
    for (;;) {
      if (code !== QUOTE) this.fail("expected a key");
      const keyEnd = await this.run((start) => this.scanner.grammar.skipStructural(this.text, start));
      if (keyEnd < 0) this.fail("truncated JSON");
      let key: string;
      try {
        key = JSON.parse(this.text.slice(this.at, keyEnd)) as string;
      } catch {
        this.fail("invalid key");
      }
      this.at = keyEnd;
      if ((await this.expect()) !== COLON) this.fail("expected ':'");
      this.at++;
      code = await this.expect();
      if (key! === "traceEvents") {
        this.handlers.sawTraceEvents();
        if (code !== OPEN_BRACKET) {
          if (this.events === 0) throw new UnsupportedShape("traceEvents is not an array");
          this.fail("traceEvents is not an array");
        }
        await this.readArray(false);
      } else {
        this.handlers.topLevelKey(key!);
        const end = await this.run((start) => this.scanner.grammar.skipStructural(this.text, start));
        if (end < 0) this.fail("truncated JSON");
        this.at = end;
      }
      code = await this.expect();
      this.at++;
      if (code === CLOSE_BRACE) return;
      if (code !== COMMA) this.fail("expected ',' or '}'");
      code = await this.expect();
    }
  }
}
