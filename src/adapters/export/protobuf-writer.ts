/**
 * The little of protobuf's wire format that profile.proto needs: varints (non-negative, up to 2^53),
 * length-delimited fields and packed repeated varints, into a growable byte buffer.
 */
const encoder = new TextEncoder();

export class ProtoWriter {
  private buffer = new Uint8Array(256);
  length = 0;

  private ensure(extra: number): void {
    if (this.length + extra <= this.buffer.length) return;
    let size = this.buffer.length * 2;
    while (size < this.length + extra) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buffer.subarray(0, this.length));
    this.buffer = next;
  }

  varint(value: number): this {
    if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`varint needs a non-negative safe integer, got ${value}`);
    this.ensure(10);
    let rest = value;
    while (rest >= 0x80) {
      this.buffer[this.length++] = (rest % 0x80) | 0x80;
      rest = Math.floor(rest / 0x80);
    }
    this.buffer[this.length++] = rest;
    return this;
  }

  tag(field: number, wireType: 0 | 2): this {
    return this.varint(field * 8 + wireType);
  }

  /** A varint field; zero is the default and is left out, as proto3 does. */
  uint(field: number, value: number): this {
    if (value === 0) return this;
    return this.tag(field, 0).varint(value);
  }

  bytes(field: number, value: Uint8Array): this {
    this.tag(field, 2).varint(value.length);
    this.ensure(value.length);
    this.buffer.set(value, this.length);
    this.length += value.length;
    return this;
  }

  /** Strings are written even when empty: string_table[0] must be "". */
  string(field: number, value: string): this {
    return this.bytes(field, encoder.encode(value));
  }

  message(field: number, body: ProtoWriter): this {
    return this.bytes(field, body.finish());
  }

  packed(field: number, values: readonly number[]): this {
    if (values.length === 0) return this;
    const body = new ProtoWriter();
    for (const value of values) body.varint(value);
    return this.message(field, body);
  }

  finish(): Uint8Array {
    return this.buffer.subarray(0, this.length);
  }

  /** Hands out what was written so far and starts empty, for streaming. */
  take(): Uint8Array {
    const taken = this.buffer.slice(0, this.length);
    this.length = 0;
    return taken;
  }
}
