import { createConsola, type ConsolaInstance } from "consola/basic";
import type { GlobalOptions } from "./global-options.ts";

const levels: Record<GlobalOptions["logLevel"], number> = { error: 0, warning: 1, info: 3, debug: 4 };

let instance: ConsolaInstance | undefined;

/**
 * Human progress and diagnostics, always on stderr so `--json` stdout stays one document.
 * --log-level picks what shows; --quiet keeps only errors.
 */
export function cliLog(options: GlobalOptions): ConsolaInstance {
  instance ??= createConsola({
    level: options.quiet ? 0 : levels[options.logLevel],
    stdout: process.stderr,
    stderr: process.stderr,
    formatOptions: { date: false, colors: false, compact: true },
  });
  return instance;
}
