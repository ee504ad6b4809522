import { LineTooLong, artifactTooLarge, readLines } from "./common.ts";
import { inflateFailed } from "./json-file.ts";

/**
 * The lines of a text artifact (gzip or not), with a reading failure turned into the typed artifact
 * error: an overlong line, a broken gzip stream or one that inflates too far. What the reader does with
 * a line stays its own; only the reading is translated.
 */
export async function* readArtifactLines(path: string): AsyncGenerator<{ line: string; offset: number; number: number }> {
  try {
    yield* readLines(path);
  } catch (error) {
    if (error instanceof LineTooLong) throw artifactTooLarge(path, error.message, { line: error.line, byte_offset: error.offset });
    throw inflateFailed(path, error);
  }
}
