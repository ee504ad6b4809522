/**
 * RFC 8785 (JCS) canonical JSON: sorted keys by UTF-16 code units, ECMAScript number
 * serialization, no whitespace. Every digest in flameox is computed over this form.
 */
export function canonicalJson(value: unknown): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false";
    case "number":
      if (!Number.isFinite(value)) throw new TypeError("Canonical JSON cannot hold NaN or Infinity.");
      return JSON.stringify(value);
    case "string":
      return JSON.stringify(value);
    case "bigint":
      throw new TypeError("Canonical JSON cannot hold a bigint; convert it to a number or string.");
    case "object": {
      if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item === undefined ? null : item)).join(",")}]`;
      const record = value as Record<string, unknown>;
      const keys = Object.keys(record)
        .filter((key) => record[key] !== undefined)
        .sort(compareUtf16);
      return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(",")}}`;
    }
    default:
      throw new TypeError(`Canonical JSON cannot hold a ${typeof value}.`);
  }
}

function compareUtf16(left: string, right: string): number {
  // JS string comparison is by UTF-16 code units, which is exactly what RFC 8785 asks for.
  return left < right ? -1 : left > right ? 1 : 0;
}

export function sha256Hex(data: string | Uint8Array): string {
  // One-shot hashing: the same digest as a CryptoHasher, without building one per call (frame keys hash each distinct frame).
  return Bun.SHA256.hash(data, "hex");
}

/** `sha256:<hex>` of the canonical JSON of a value. */
export function digestOf(value: unknown): string {
  return `sha256:${sha256Hex(canonicalJson(value))}`;
}

export const digestPattern = /^sha256:[0-9a-f]{64}$/;
