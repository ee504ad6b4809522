/**
 * JSON files through a visitor: streamed through the scanner of json-stream.ts, or (small files)
 * parsed whole and walked the same way. gzip-compressed files are inflated as a stream first.
 */
import type { FlameoxError } from "../../domain/errors.ts";
import { DecompressedTooLarge, DecompressionFailed, isGzip, openByteSource, readAllBytes } from "./byte-source.ts";
import { fileParseFailed, artifactTooLarge } from "./common.ts";
import { ValueTooLarge } from "./json-text-reader.ts";
import {
  type JsonPathSegment,
  JsonScanError,
  JsonStreamScanner,
  JsonValueTooLarge,
  type JsonVisitor,
  type ParseMode,
  wholeParseLimitBytes,
} from "./json-stream.ts";

/** Inflated bytes a gzip-compressed JSON file may grow to. */
export const maxInflatedJsonBytes = 16 * 1024 ** 3;

/** Walks an already parsed value with the same visitor protocol as the scanner. */
export function walkParsedJson(root: unknown, visitor: JsonVisitor): void {
  const path: JsonPathSegment[] = [];
  const visit = (value: unknown): void => {
    const selection = visitor.select(path);
    if (selection === "capture") {
      visitor.value(path, value);
      return;
    }
    if (selection !== "enter" || value === null || typeof value !== "object") return;
    if (Array.isArray(value)) {
      for (let index = 0; index < value.length; index++) {
        path.push(index);
        visit(value[index]);
        path.pop();
      }
      return;
    }
    for (const key of Object.keys(value)) {
      path.push(key);
      visit((value as Record<string, unknown>)[key]);
      path.pop();
    }
  };
  visit(root);
}

export function jsonParseFailed(file: string, error: JsonScanError): FlameoxError {
  return fileParseFailed(file, error.message, { byte_offset: error.offset }, [
    "Check that the producer finished writing the file (a cut-off file ends mid-value).",
    "Re-export the profile or trace and import it again.",
  ]);
}

/** Streams a file through the scanner. */
export async function scanJsonFile(file: string, visitor: JsonVisitor): Promise<void> {
  const scanner = new JsonStreamScanner(visitor);
  const source = await openByteSource(file, { maxInflatedBytes: maxInflatedJsonBytes });
  const chunk = Buffer.allocUnsafe(1 << 20);
  try {
    for (;;) {
      const read = await source.read(chunk, 0, chunk.length);
      if (read === 0) break;
      scanner.push(chunk.subarray(0, read));
    }
    scanner.end();
  } catch (error) {
    if (error instanceof JsonValueTooLarge) throw artifactTooLarge(file, error.message, { byte_offset: error.offset });
    if (error instanceof JsonScanError) throw jsonParseFailed(file, error);
    throw inflateFailed(file, error);
  } finally {
    await source.close();
  }
}

/** A gzip failure or an oversized value as a typed error; anything else unchanged. */
export function inflateFailed(file: string, error: unknown): unknown {
  if (error instanceof ValueTooLarge) return artifactTooLarge(file, error.message, { limit_characters: error.limit });
  if (error instanceof DecompressedTooLarge) {
    return artifactTooLarge(file, `the gzip data inflates beyond ${error.limit} bytes`, { limit_bytes: error.limit });
  }
  if (error instanceof DecompressionFailed) return fileParseFailed(file, error.message);
  return error;
}

const skipEverything: JsonVisitor = {
  select: () => "enter",
  value: () => {},
};

/**
 * Reads a JSON file with a visitor: small files are parsed whole (`auto` below
 * `wholeParseLimitBytes`), large ones streamed. Both paths call the visitor identically.
 */
export async function readJsonWithVisitor(
  file: string,
  visitor: JsonVisitor,
  options: { mode?: ParseMode; wholeLimitBytes?: number } = {},
): Promise<"whole" | "stream"> {
  const mode = options.mode ?? "auto";
  // A compressed file's size says little about its text: it is streamed unless told otherwise.
  const compressed = await isCompressedFile(file);
  const size = compressed ? Number.POSITIVE_INFINITY : Bun.file(file).size;
  const whole = mode === "whole" || (mode === "auto" && size < (options.wholeLimitBytes ?? wholeParseLimitBytes));
  if (!whole) {
    await scanJsonFile(file, visitor);
    return "stream";
  }
  let text: string;
  try {
    text = new TextDecoder().decode(await readAllBytes(file, { maxInflatedBytes: maxInflatedJsonBytes }));
  } catch (error) {
    throw inflateFailed(file, error);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    // JSON.parse does not say where; the scanner does.
    await scanJsonFile(file, skipEverything);
    throw fileParseFailed(file, error instanceof Error ? error.message : String(error), {}, [
      "Re-export the profile or trace and import it again.",
    ]);
  }
  walkParsedJson(parsed, visitor);
  return "whole";
}

async function isCompressedFile(file: string): Promise<boolean> {
  return isGzip(new Uint8Array(await Bun.file(file).slice(0, 2).arrayBuffer()));
}
