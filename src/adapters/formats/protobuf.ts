/**
 * Protobuf wire format: `ProtoReader` over one message in memory, and `ProtoStream`, which hands
 * out the top-level fields of a message read from a byte source one at a time, so a large message
 * (a pprof profile) is decoded without holding it whole. Every length is checked against what is
 * left and against `maxFieldBytes`.
 */
import type { ByteSource } from "./byte-source.ts";

export class ProtoError extends Error {}

/** A length-delimited field over this many bytes is refused (no pprof sample, location or string is). */
export class ProtoFieldTooLarge extends Error {
  constructor(
    readonly length: number,
    readonly limit: number,
  ) {
    super(`a length-delimited field of ${length} bytes exceeds ${limit} bytes`);
  }
}

const maxVarintBytes = 10;

/** Reads protobuf wire format; int64 values beyond 2^53 lose precision (callers check ranges). */
export class ProtoReader {
  pos: number;
  readonly end: number;
  private readonly bytes: Uint8Array;

  constructor(bytes: Uint8Array, start = 0, end = bytes.length) {
    this.bytes = bytes;
    this.pos = start;
    this.end = end;
  }

  get done(): boolean {
    return this.pos >= this.end;
  }

  /** An unsigned varint as a double (exact below 2^53; 2^64-1 reads as about 1.8e19). */
  varint(): number {
    let result = 0;
    let factor = 1;
    for (let index = 0; index < maxVarintBytes; index++) {
      if (this.pos >= this.end) throw new ProtoError(`truncated varint at byte ${this.pos}`);
      const byte = this.bytes[this.pos++] as number;
      result += (byte & 0x7f) * factor;
      if (byte < 0x80) return result;
      factor *= 128;
    }
    throw new ProtoError(`varint longer than 10 bytes at byte ${this.pos}`);
  }

  /** An int64 varint: two's complement above 2^63. */
  signedVarint(): number {
    const value = this.varint();
    return value >= 2 ** 63 ? value - 2 ** 64 : value;
  }

  /** Returns [field number, wire type]. */
  tag(): [number, number] {
    const tag = this.varint();
    const field = Math.floor(tag / 8);
    if (field === 0) throw new ProtoError(`field number 0 at byte ${this.pos - 1}`);
    return [field, tag & 7];
  }

  bytesField(): Uint8Array {
    const length = this.varint();
    const start = this.pos;
    if (start + length > this.end) throw new ProtoError(`length-delimited field overruns its message at byte ${start}`);
    this.pos = start + length;
    return this.bytes.subarray(start, start + length);
  }

  skip(wireType: number): void {
    switch (wireType) {
      case 0:
        this.varint();
        return;
      case 1:
        this.pos += 8;
        break;
      case 2:
        this.bytesField();
        return;
      case 5:
        this.pos += 4;
        break;
      default:
        throw new ProtoError(`unsupported wire type ${wireType} at byte ${this.pos}`);
    }
    if (this.pos > this.end) throw new ProtoError(`fixed-width field overruns its message at byte ${this.pos}`);
  }

  /** Repeated integer field: packed (wire type 2) or one value (wire type 0). */
  repeatedVarints(wireType: number, into: number[]): void {
    if (wireType === 0) {
      into.push(this.varint());
      return;
    }
    if (wireType !== 2) throw new ProtoError(`unexpected wire type ${wireType} for a repeated integer`);
    const length = this.varint();
    const start = this.pos;
    if (start + length > this.end) throw new ProtoError(`packed field overruns its message at byte ${start}`);
    const inner = new ProtoReader(this.bytes, start, start + length);
    while (!inner.done) into.push(inner.varint());
    this.pos = start + length;
  }
}

/** One top-level field: a varint value, or the bytes of a length-delimited one (valid until the next call). */
export type ProtoField = { field: number; wire: number; value: number; bytes: Uint8Array | null; offset: number };

/**
 * Top-level fields from a byte source. `poll` is synchronous while the buffer holds a whole field
 * (one await per buffer, not per field); it says `undefined` when `refill` must run first.
 */
export class ProtoStream {
  private buffer = Buffer.allocUnsafe(1 << 20);
  private start = 0;
  private end = 0;
  private eof = false;
  /** Bytes consumed before `buffer[start]`. */
  private base = 0;
  /** Bytes the field at `start` needs, when the last poll ran short. */
  private wanted = 0;

  constructor(
    private readonly source: ByteSource,
    private readonly maxFieldBytes: number,
  ) {}

  /** The next field, null at the end of the message, undefined when more bytes must be read first. */
  poll(): ProtoField | null | undefined {
    const available = this.end - this.start;
    if (available === 0) return this.eof ? null : undefined;
    const reader = new ProtoReader(this.buffer, this.start, this.end);
    try {
      const [field, wire] = reader.tag();
      let value = 0;
      let bytes: Uint8Array | null = null;
      if (wire === 2) {
        value = reader.varint();
        if (value > this.maxFieldBytes) throw new ProtoFieldTooLarge(value, this.maxFieldBytes);
        if (reader.pos + value > this.end) return this.short(reader.pos + value - this.start);
        bytes = this.buffer.subarray(reader.pos, reader.pos + value);
        reader.pos += value;
      } else if (wire === 0) value = reader.varint();
      else reader.skip(wire);
      const offset = this.base;
      this.base += reader.pos - this.start;
      this.start = reader.pos;
      return { field, wire, value, bytes, offset };
    } catch (error) {
      // A field cut by the end of the buffer is read again once more bytes are in.
      if (error instanceof ProtoError && !this.eof && /truncated|overruns/.test(error.message)) return this.short(available + 16);
      if (error instanceof ProtoError)
        throw new ProtoError(error.message.replace(/byte (\d+)/, (_, at) => `byte ${Number(at) - this.start + this.base}`));
      throw error;
    }
  }

  /** Reads until the field `poll` ran short of fits (or the source ends). */
  async refill(): Promise<void> {
    const needed = Math.max(this.wanted, 1);
    if (this.eof) throw new ProtoError(`the message ends inside a field at byte ${this.base}`);
    if (this.buffer.length - this.start < needed) {
      const grown = Buffer.allocUnsafe(Math.max(this.buffer.length, needed * 2));
      this.buffer.copy(grown, 0, this.start, this.end);
      this.end -= this.start;
      this.start = 0;
      this.buffer = grown;
    } else if (this.start > 0) {
      this.buffer.copyWithin(0, this.start, this.end);
      this.end -= this.start;
      this.start = 0;
    }
    while (this.end - this.start < needed) {
      const read = await this.source.read(this.buffer, this.end, this.buffer.length - this.end);
      if (read === 0) {
        this.eof = true;
        return;
      }
      this.end += read;
    }
  }

  private short(needed: number): undefined {
    this.wanted = needed;
    return undefined;
  }
}
