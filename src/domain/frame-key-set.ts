/**
 * The frame keys already passed on, in a few bytes each. A trace whose annotations are all distinct
 * (`ProfilerStep#1`, `#2`, …) has as many frames as steps, and a `Set<string>` of their keys costs
 * about a hundred bytes apiece in every place that dedups; this set keeps the 96 bits a key's 24 hex
 * digits spell in three 32-bit words of an open-addressed table (12 bytes a slot, at most half full),
 * so it stays exact with a fifth of the memory. Keys of any other shape go to a plain set. A small
 * set of recent keys answers the frames every stack repeats without decoding their digits.
 */
const hexDigits = 24;
const keyPrefix = "f_";
const recentLimit = 4096;

function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  if (code >= 0x61 && code <= 0x66) return code - 0x57;
  return -1;
}

/** The three words of a `f_` + 24 lowercase hex digits key into `into`; false for any other key. */
function decodeKey(key: string, into: Uint32Array): boolean {
  if (key.length !== keyPrefix.length + hexDigits || !key.startsWith(keyPrefix)) return false;
  for (let word = 0; word < 3; word++) {
    let value = 0;
    for (let digit = 0; digit < 8; digit++) {
      const nibble = hexValue(key.charCodeAt(keyPrefix.length + word * 8 + digit));
      if (nibble < 0) return false;
      value = value * 16 + nibble;
    }
    into[word] = value;
  }
  return true;
}

export class FrameKeySet {
  private slots = new Uint32Array(3 * 1024);
  /** Occupied slots have a nonzero mark; the words can be all zero. */
  private marks = new Uint8Array(1024);
  private held = 0;
  private readonly others = new Set<string>();
  private recent = new Set<string>();
  private readonly words = new Uint32Array(3);

  /** Distinct keys added. */
  get size(): number {
    return this.held + this.others.size;
  }

  /** Adds `key`; true when it was not in the set. */
  add(key: string): boolean {
    if (this.recent.has(key)) return false;
    if (this.recent.size >= recentLimit) this.recent = new Set();
    this.recent.add(key);
    if (!decodeKey(key, this.words)) {
      if (this.others.has(key)) return false;
      this.others.add(key);
      return true;
    }
    return this.insert(this.words[0] as number, this.words[1] as number, this.words[2] as number);
  }

  clear(): void {
    this.slots = new Uint32Array(3 * 1024);
    this.marks = new Uint8Array(1024);
    this.held = 0;
    this.others.clear();
    this.recent = new Set();
  }

  private insert(a: number, b: number, c: number): boolean {
    const mask = this.marks.length - 1;
    // The digits are a hash already: the low word spreads keys as well as any mix would.
    for (let slot = c & mask; ; slot = (slot + 1) & mask) {
      if (this.marks[slot] === 0) {
        this.marks[slot] = 1;
        this.slots[slot * 3] = a;
        this.slots[slot * 3 + 1] = b;
        this.slots[slot * 3 + 2] = c;
        this.held++;
        if (this.held * 2 > this.marks.length) this.grow();
        return true;
      }
      if (this.slots[slot * 3] === a && this.slots[slot * 3 + 1] === b && this.slots[slot * 3 + 2] === c) return false;
    }
  }

  private grow(): void {
    const slots = this.slots;
    const marks = this.marks;
    this.slots = new Uint32Array(slots.length * 2);
    this.marks = new Uint8Array(marks.length * 2);
    this.held = 0;
    for (let slot = 0; slot < marks.length; slot++) {
      if (marks[slot] !== 0) this.insert(slots[slot * 3] as number, slots[slot * 3 + 1] as number, slots[slot * 3 + 2] as number);
    }
  }
}
