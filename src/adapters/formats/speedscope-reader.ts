/**
 * The speedscope readers: a fast text reader that walks the document with the shared JSON text
 * reader and parses `samples` (arrays of frame indexes) and `weights` (numbers) in tight loops
 * without creating a value per sample, and the JSON.parse walk of a whole document (small files,
 * tests); both feed a `SpeedscopeFold` identically. A shape that is not speedscope's throws
 * `SpeedscopeShapeError` naming where.
 */
import type { ByteSource } from "./byte-source.ts";
import { CLOSE_BRACKET, COMMA, DOT, MINUS, OPEN_BRACE, OPEN_BRACKET, isDigit, isJsonWhitespace } from "./json-grammar.ts";
import { stackUnitOf } from "./common.ts";
import { JsonTextReader } from "./json-text-reader.ts";
import { type ProfileState, type SpeedscopeFold, type SpeedscopeFrame, sampleHash, sampleHashSeed } from "./speedscope-fold.ts";

/** A value where speedscope has something else. */
export class SpeedscopeShapeError extends Error {}

const profileScalarKeys = new Set(["type", "name", "unit", "startValue", "endValue"]);

function asNumber(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

function toFrame(value: unknown, where: string): SpeedscopeFrame {
  if (!value || typeof value !== "object") throw new SpeedscopeShapeError(`${where} is not an object`);
  const record = value as Record<string, unknown>;
  return {
    name: typeof record.name === "string" ? record.name : String(record.name ?? "<unnamed>"),
    file: typeof record.file === "string" ? record.file : null,
    line: asNumber(record.line),
    col: asNumber(record.col),
  };
}

function setScalar(state: ProfileState, key: string, value: unknown): void {
  if (key === "type" && typeof value === "string") state.type = value;
  else if (key === "name" && typeof value === "string") state.name = value;
  else if (key === "unit" && typeof value === "string") {
    state.unit = value;
    state.scale = stackUnitOf(value)?.scale ?? 1;
  } else if (key === "startValue") state.startValue = asNumber(value);
  else if (key === "endValue") state.endValue = asNumber(value);
}

function foldEvent(fold: SpeedscopeFold, state: ProfileState, value: unknown, where: string): void {
  const event = value as Record<string, unknown> | null;
  const at = asNumber(event?.at);
  const frame = asNumber(event?.frame);
  if (!event || at === null || frame === null || (event.type !== "O" && event.type !== "C")) {
    throw new SpeedscopeShapeError(`${where} is not an open/close event`);
  }
  fold.event(state, event.type, frame, at);
}

function foldParsedSample(fold: SpeedscopeFold, state: ProfileState, value: unknown, where: string): void {
  if (!Array.isArray(value)) throw new SpeedscopeShapeError(`${where} is not an array`);
  let hash = sampleHashSeed;
  for (const frame of value) {
    if (typeof frame !== "number") throw new SpeedscopeShapeError(`a sample holds a non-numeric frame index (at ${where})`);
    hash = sampleHash(hash, frame);
  }
  fold.sample(state, value as number[], value.length, hash);
}

function foldParsedWeight(fold: SpeedscopeFold, state: ProfileState, value: unknown, where: string): void {
  if (typeof value !== "number" || !Number.isFinite(value)) throw new SpeedscopeShapeError(`a weight is not a number (at ${where})`);
  fold.weight(state, value);
}

/** JSON.parse of a whole document, walked into the fold. */
export function foldParsedSpeedscope(document: unknown, fold: SpeedscopeFold): void {
  if (!document || typeof document !== "object" || Array.isArray(document)) return;
  const root = document as Record<string, unknown>;
  if (typeof root.exporter === "string") fold.meta.exporter = root.exporter;
  if (typeof root.$schema === "string") fold.meta.schema = root.$schema;
  const shared = root.shared as Record<string, unknown> | undefined;
  if (shared && typeof shared === "object" && Array.isArray(shared.frames)) {
    shared.frames.forEach((frame, index) => fold.frame(index, toFrame(frame, `shared.frames[${index}]`)));
  }
  if (!("profiles" in root)) return;
  fold.meta.sawProfiles = true;
  if (!Array.isArray(root.profiles)) return;
  root.profiles.forEach((profile, index) => {
    if (!profile || typeof profile !== "object" || Array.isArray(profile)) return;
    const state = fold.profile(index);
    const fields = profile as Record<string, unknown>;
    for (const [key, value] of Object.entries(fields)) {
      if (profileScalarKeys.has(key)) setScalar(state, key, value);
      else if (key === "samples" && Array.isArray(value)) {
        value.forEach((sample, at) => foldParsedSample(fold, state, sample, `profiles[${index}].samples[${at}]`));
      } else if (key === "weights" && Array.isArray(value)) {
        value.forEach((weight, at) => foldParsedWeight(fold, state, weight, `profiles[${index}].weights[${at}]`));
      } else if (key === "events" && Array.isArray(value)) {
        value.forEach((event, at) => foldEvent(fold, state, event, `profiles[${index}].events[${at}]`));
      }
    }
  });
}

const powersOfTen = Array.from({ length: 23 }, (_, power) => 10 ** power);

/** The fast reader (see the file comment). Structural errors throw FastScanError, as for Chrome traces. */
export class SpeedscopeReader extends JsonTextReader {
  private scratch = new Int32Array(256);
  private length = 0;
  private hash = 0;
  private number = 0;

  constructor(
    source: ByteSource,
    private readonly fold: SpeedscopeFold,
  ) {
    super(source);
  }

  async read(): Promise<void> {
    await this.more(0);
    if ((await this.expect()) !== OPEN_BRACE) {
      await this.skipValue();
      return;
    }
    await this.members(async (key) => {
      if (key === "$schema" || key === "exporter") {
        const value = await this.parseValue();
        if (typeof value === "string") this.fold.meta[key === "$schema" ? "schema" : "exporter"] = value;
      } else if (key === "shared") await this.readShared();
      else if (key === "profiles") {
        this.fold.meta.sawProfiles = true;
        await this.elements(async (index) => this.readProfile(index));
      } else await this.skipValue();
    });
    await this.skip();
    if (this.at < this.text.length) this.fail("data after the JSON document");
  }

  private async readShared(): Promise<void> {
    await this.members(async (key) => {
      if (key !== "frames") return this.skipValue();
      await this.elements(async (index) => this.fold.frame(index, toFrame(await this.parseValue(), `shared.frames[${index}]`)));
    });
  }

  private async readProfile(index: number): Promise<void> {
    if ((await this.expect()) !== OPEN_BRACE) return this.skipValue();
    const state = this.fold.profile(index);
    await this.members(async (key) => {
      if (profileScalarKeys.has(key)) setScalar(state, key, await this.parseValue());
      else if (key === "samples") await this.numbers(state, index, true);
      else if (key === "weights") await this.numbers(state, index, false);
      else if (key === "events") {
        await this.elements(async (at) => foldEvent(this.fold, state, await this.parseValue(), `profiles[${index}].events[${at}]`));
      } else await this.skipValue();
    });
  }

  /** An array's elements: `element` reads each (the reader is at it). A non-array is skipped. */
  private async elements(element: (index: number) => Promise<void>): Promise<void> {
    if ((await this.expect()) !== OPEN_BRACKET) return this.skipValue();
    this.at++;
    if ((await this.expect()) === CLOSE_BRACKET) {
      this.at++;
      return;
    }
    for (let index = 0; ; index++) {
      await element(index);
      const code = await this.expect();
      this.at++;
      if (code === CLOSE_BRACKET) return;
      if (code !== COMMA) this.fail("expected ',' or ']'");
      await this.expect();
    }
  }

  /**
   * `samples` or `weights`: elements parsed synchronously while the text lasts (one await per
   * chunk); an element the tight loop does not take goes through JSON.parse.
   */
  private async numbers(state: ProfileState, profile: number, samples: boolean): Promise<void> {
    if ((await this.expect()) !== OPEN_BRACKET) return this.skipValue();
    this.at++;
    const grammar = this.grammar;
    let index = 0;
    let expectComma = false;
    for (;;) {
      for (;;) {
        this.at = grammar.skipWhitespace(this.text, this.at);
        if (this.at >= this.text.length) break;
        const code = this.text.charCodeAt(this.at);
        if (code === CLOSE_BRACKET) {
          this.at++;
          return;
        }
        if (expectComma) {
          if (code !== COMMA) this.fail("expected ',' or ']'");
          this.at++;
          expectComma = false;
          continue;
        }
        const end = samples ? this.scanSample(this.text, this.at) : this.scanWeight(this.text, this.at);
        if (end === -1) break;
        if (end === -2) {
          const where = `profiles[${profile}].${samples ? "samples" : "weights"}[${index}]`;
          const value = await this.parseValue();
          if (samples) foldParsedSample(this.fold, state, value, where);
          else foldParsedWeight(this.fold, state, value, where);
        } else {
          this.at = end;
          if (samples) this.fold.sample(state, this.scratch, this.length, this.hash);
          else this.fold.weight(state, this.number);
        }
        index++;
        expectComma = true;
      }
      if (!(await this.grow())) this.fail("truncated JSON");
    }
  }

  /** `[int, …]` at `at` into scratch/length/hash: the end, -1 when the text ends inside, -2 for anything else. */
  private scanSample(text: string, at: number): number {
    if (text.charCodeAt(at) !== OPEN_BRACKET) return -2;
    const length = text.length;
    let i = at + 1;
    let count = 0;
    let hash = sampleHashSeed;
    for (;;) {
      while (i < length && isJsonWhitespace(text.charCodeAt(i))) i++;
      if (i >= length) return -1;
      let code = text.charCodeAt(i);
      if (code === CLOSE_BRACKET && count === 0) break;
      if (!isDigit(code)) return -2;
      let value = 0;
      const digitsStart = i;
      for (; i < length; i++) {
        code = text.charCodeAt(i);
        if (!isDigit(code)) break;
        value = value * 10 + (code - 0x30);
      }
      if (i >= length) return -1;
      if (i - digitsStart > 9 || (i - digitsStart > 1 && text.charCodeAt(digitsStart) === 0x30)) return -2;
      if (count === this.scratch.length) {
        const grown = new Int32Array(this.scratch.length * 2);
        grown.set(this.scratch);
        this.scratch = grown;
      }
      this.scratch[count++] = value;
      hash = sampleHash(hash, value);
      while (i < length && isJsonWhitespace(text.charCodeAt(i))) i++;
      if (i >= length) return -1;
      code = text.charCodeAt(i);
      if (code === CLOSE_BRACKET) break;
      if (code !== COMMA) return -2;
      i++;
    }
    this.length = count;
    this.hash = hash;
    return i + 1;
  }

  /** A plain decimal at `at` into `number` (exactly as JSON.parse reads it): the end, -1, or -2. */
  private scanWeight(text: string, at: number): number {
    const length = text.length;
    let i = at;
    const negative = text.charCodeAt(i) === MINUS;
    if (negative) i++;
    let mantissa = 0;
    let digits = 0;
    let decimals = 0;
    const start = i;
    while (i < length && isDigit(text.charCodeAt(i))) {
      mantissa = mantissa * 10 + (text.charCodeAt(i) - 0x30);
      digits++;
      i++;
    }
    if (i === start) return i >= length ? -1 : -2;
    if (digits > 1 && text.charCodeAt(start) === 0x30) return -2;
    if (i < length && text.charCodeAt(i) === DOT) {
      i++;
      const fraction = i;
      while (i < length && isDigit(text.charCodeAt(i))) {
        mantissa = mantissa * 10 + (text.charCodeAt(i) - 0x30);
        digits++;
        i++;
      }
      decimals = i - fraction;
      if (decimals === 0 && i < length) return -2;
    }
    if (i >= length) return -1;
    const next = text.charCodeAt(i);
    // Exponents, and mantissas a double cannot hold exactly, go through JSON.parse.
    if (next === 0x65 || next === 0x45 || digits > 15 || decimals > 22) return -2;
    // An exact integer over an exact power of ten rounds once, as parsing the decimal does.
    const value = decimals === 0 ? mantissa : mantissa / (powersOfTen[decimals] as number);
    this.number = negative ? -value : value;
    return i;
  }
}
