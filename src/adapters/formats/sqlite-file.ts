import { closeSync, existsSync, openSync, readSync } from "node:fs";
import type { FlameoxError } from "../../domain/errors.ts";

/**
 * Checks that a file an extractor is about to open read-only is an SQLite database, by its header,
 * before SQLite is asked: opening anything else fails late and with a less helpful message. Each
 * format words the refusal itself (parseFailed).
 */
export function requireSqliteFile(path: string, parseFailed: (message: string) => FlameoxError): void {
  if (!existsSync(path)) throw parseFailed(`${path} does not exist`);
  const header = Buffer.alloc(16);
  const handle = openSync(path, "r");
  try {
    readSync(handle, header, 0, 16, 0);
  } finally {
    closeSync(handle);
  }
  if (header.toString("latin1") !== "SQLite format 3\u0000") throw parseFailed("not an SQLite database");
}
