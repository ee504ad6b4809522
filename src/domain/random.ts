/**
 * Random hex from the runtime's Web Crypto, which is loaded anyway: importing node:crypto for
 * randomBytes alone costs every flameox process about 10 ms at start (it loads the node:stream family).
 */
export function randomHex(byteCount: number): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(byteCount))).toString("hex");
}
