/**
 * Python's `marshal` serialization (format version 4, Python 3.4+), the subset a cProfile `.pstats`
 * file uses: dicts, tuples and lists, str/bytes, ints (small and long), floats, None and booleans,
 * with back-references (FLAG_REF / TYPE_REF). Anything else (code objects, sets, complex) is refused,
 * and nesting deeper than `maxDepth` is refused rather than recursed into.
 */

export type MarshalValue = null | boolean | number | string | Uint8Array | MarshalValue[] | MarshalDict;

/** Keys are kept as values (tuples are arrays), so a dict is a list of pairs. */
export type MarshalDict = { pairs: [MarshalValue, MarshalValue][] };

export class MarshalError extends Error {}

const maxDepth = 64;
const flagRef = 0x80;

export function isMarshalDict(value: MarshalValue): value is MarshalDict {
  return value !== null && typeof value === "object" && !Array.isArray(value) && !(value instanceof Uint8Array);
}

export class MarshalReader {
  private offset = 0;
  private readonly refs: MarshalValue[] = [];
  private readonly view: DataView;
  private readonly utf8 = new TextDecoder("utf-8", { fatal: false });
  private readonly latin1 = new TextDecoder("latin1");

  constructor(private readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  get position(): number {
    return this.offset;
  }

  read(depth = 0): MarshalValue {
    if (depth > maxDepth) throw new MarshalError(`values nest deeper than ${maxDepth} levels`);
    const code = this.byte();
    const type = String.fromCharCode(code & ~flagRef);
    const slot = code & flagRef ? this.refs.push(null) - 1 : -1;
    const value = this.readTyped(type, depth, slot);
    if (slot >= 0) this.refs[slot] = value;
    return value;
  }

  private readTyped(type: string, depth: number, slot: number): MarshalValue {
    switch (type) {
      case "N":
        return null;
      case "T":
        return true;
      case "F":
        return false;
      case "i":
        return this.int32();
      case "I": {
        const value = this.view.getBigInt64(this.take(8), true);
        return Number(value);
      }
      case "l":
        return this.long();
      case "g":
        return this.view.getFloat64(this.take(8), true);
      case "f": {
        const length = this.byte();
        return Number(this.latin1.decode(this.slice(length)));
      }
      case "s":
        return this.slice(this.length()).slice();
      case "u":
      case "t":
        return this.utf8.decode(this.slice(this.length()));
      case "a":
      case "A":
        return this.latin1.decode(this.slice(this.length()));
      case "z":
      case "Z":
        return this.latin1.decode(this.slice(this.byte()));
      case "r": {
        const index = this.int32();
        if (index < 0 || index >= this.refs.length) throw new MarshalError(`reference ${index} to no earlier value`);
        return this.refs[index] as MarshalValue;
      }
      case ")":
        return this.sequence(this.byte(), depth, slot);
      case "(":
      case "[":
        return this.sequence(this.length(), depth, slot);
      case "{":
        return this.dict(depth, slot);
      default:
        throw new MarshalError(`value type ${JSON.stringify(type)} at byte ${this.offset - 1} is not one a profile holds`);
    }
  }

  private sequence(count: number, depth: number, slot: number): MarshalValue[] {
    if (count > this.bytes.length - this.offset) throw new MarshalError(`a sequence of ${count} items is longer than the file`);
    const items: MarshalValue[] = [];
    // A container is referable while its items are read.
    if (slot >= 0) this.refs[slot] = items;
    for (let index = 0; index < count; index++) items.push(this.read(depth + 1));
    return items;
  }

  private dict(depth: number, slot: number): MarshalDict {
    const dict: MarshalDict = { pairs: [] };
    if (slot >= 0) this.refs[slot] = dict;
    for (;;) {
      if (this.offset >= this.bytes.length) throw new MarshalError("a dict is cut off");
      if (this.bytes[this.offset] === 0x30) {
        this.offset++;
        return dict;
      }
      const key = this.read(depth + 1);
      dict.pairs.push([key, this.read(depth + 1)]);
    }
  }

  /** Arbitrary-precision ints: a signed count of 15-bit digits, least significant first. */
  private long(): number {
    const count = this.int32();
    const digits = Math.abs(count);
    if (digits > 1024) throw new MarshalError("an integer of more than 1024 digits");
    let value = 0;
    let scale = 1;
    for (let index = 0; index < digits; index++) {
      value += this.view.getUint16(this.take(2), true) * scale;
      scale *= 32768;
    }
    return count < 0 ? -value : value;
  }

  private byte(): number {
    if (this.offset >= this.bytes.length) throw new MarshalError("the data ends in the middle of a value");
    return this.bytes[this.offset++] as number;
  }

  private int32(): number {
    return this.view.getInt32(this.take(4), true);
  }

  private length(): number {
    const length = this.int32();
    if (length < 0) throw new MarshalError(`a negative length at byte ${this.offset - 4}`);
    return length;
  }

  private take(count: number): number {
    if (this.offset + count > this.bytes.length) throw new MarshalError("the data ends in the middle of a value");
    const at = this.offset;
    this.offset += count;
    return at;
  }

  private slice(count: number): Uint8Array {
    const at = this.take(count);
    return this.bytes.subarray(at, at + count);
  }
}
