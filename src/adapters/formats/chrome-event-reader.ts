/**
 * The fast event source of the Chrome trace extractor (large JSON). The file is read in
 * large chunks and decoded once; the `traceEvents` array (or a bare event array) is walked as text
 * and each event object is read by `ChromeEventScanner` (or, when it bails, parsed with JSON.parse).
 * Structural errors are reported by the caller, which re-reads the file with the generic scanner
 * for its exact message. A bare array may end without its closing `]`, as the Trace Event Format
 * allows for traces written by a process that was still running.
 */
import type { ByteSource } from "./byte-source.ts";
import { type NumberSources, type TraceClock, TraceEventRecord, parseWithSources, recordFromObject } from "./chrome-event-record.ts";
import { ChromeEventScanner } from "./chrome-event-scanner.ts";
import { CLOSE_BRACKET, COMMA, NEED_MORE, OPEN_BRACE, OPEN_BRACKET } from "./json-grammar.ts";
import { FastScanError, JsonTextReader } from "./json-text-reader.ts";

export { FastScanError };

/** The file's top level is not `[…]` or `{…}` (the generic reader handles it; nothing was emitted). */
export class UnsupportedShape extends Error {}

export type ChromeEventHandlers = {
  /** A top-level key of the trace object (other than traceEvents), for producer hints; true to get its value. */
  topLevelKey(key: string): boolean | undefined;
  /** The value of a top-level key `topLevelKey` asked for. */
  topLevelValue?: (key: string, value: unknown) => void;
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

/** Reads one trace through its handlers; the text window and the event scanner are its state. */
export class ChromeTraceReader extends JsonTextReader {
  private readonly scanner: ChromeEventScanner;
  private events = 0;

  constructor(
    source: ByteSource,
    private readonly handlers: ChromeEventHandlers,
    private readonly clock: TraceClock,
  ) {
    super(source);
    this.scanner = new ChromeEventScanner(clock, this.grammar);
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

  /** The event (or other element) at `at`, synchronously: false when the text ends inside it. */
  private element(): boolean {
    const grammar = this.grammar;
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
    const grammar = this.grammar;
    grammar.failure = 0;
    const last = grammar.skipStructural(this.text, at);
    if (last < 0) {
      if (grammar.failure === NEED_MORE) return false;
      this.fail("malformed event");
    }
    const sources = new WeakMap<object, NumberSources>();
    let parsed: Record<string, unknown>;
    try {
      parsed = parseWithSources(this.text.slice(at, last), sources) as Record<string, unknown>;
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
    const grammar = this.grammar;
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
    await this.members(async (key, code) => {
      if (key === "traceEvents") {
        this.handlers.sawTraceEvents();
        if (code !== OPEN_BRACKET) {
          if (this.events === 0) throw new UnsupportedShape("traceEvents is not an array");
          this.fail("traceEvents is not an array");
        }
        await this.readArray(false);
      } else {
        if (this.handlers.topLevelKey(key) === true) this.handlers.topLevelValue?.(key, await this.parseValue());
        else await this.skipValue();
      }
    });
  }
}
