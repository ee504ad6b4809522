/** stdout belongs to the protocol; everything human goes to stderr. */
export const log = {
  error(message: string, error?: unknown): void {
    const detail = error instanceof Error ? `${error.message}\n${error.stack ?? ""}` : error === undefined ? "" : String(error);
    process.stderr.write(`flameox: ${message}${detail ? `: ${detail}` : ""}\n`);
  },
};
