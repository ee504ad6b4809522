/** Seeded pseudo-random bytes (one LCG word per 4 bytes), so a misplaced or repeated chunk changes a hash or a comparison. */
export function seededBytes(length: number, seed = 0): Buffer {
  const words = new Uint32Array(Math.ceil(length / 4));
  let state = (0x9e3779b9 + Math.imul(seed, 0x85ebca6b)) >>> 0;
  for (let index = 0; index < words.length; index++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    words[index] = state;
  }
  return Buffer.from(words.buffer, 0, length);
}
