import { canonicalJson } from "./canonical-json.ts";
import { staleCursor } from "./errors.ts";

/**
 * Keyset cursors bound to the exact query (its digest) and the pinned snapshot, HMAC'd with a
 * per-workspace secret so a cursor cannot be forged or reused for another request.
 */
export type CursorPayload = { scope: string; snapshot: string | number; position: unknown };

/** HMAC-SHA256 through Bun's hasher (node:crypto would load the node:stream family at every start). */
function cursorMac(secret: string, body: string): string {
  return new Bun.CryptoHasher("sha256", secret).update(body).digest("base64url").slice(0, 32);
}

export function encodeCursor(secret: string, payload: CursorPayload): string {
  const body = Buffer.from(canonicalJson(payload)).toString("base64url");
  const mac = cursorMac(secret, body);
  return `${body}.${mac}`;
}

export function decodeCursor(secret: string, cursor: string, expected: { scope: string; snapshot: string | number }): unknown {
  const [body, mac] = cursor.split(".");
  const stale = staleCursor;
  if (!body || !mac) throw stale("it is malformed");
  const expectedMac = cursorMac(secret, body);
  if (expectedMac.length !== mac.length || !crypto.timingSafeEqual(Buffer.from(expectedMac), Buffer.from(mac)))
    throw stale("it was not issued by this workspace");
  let payload: CursorPayload;
  try {
    payload = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as CursorPayload;
  } catch {
    throw stale("it is malformed");
  }
  if (payload.scope !== expected.scope) throw stale("it belongs to a different query");
  if (payload.snapshot !== expected.snapshot) throw stale("the data it paged over has changed");
  return payload.position;
}
