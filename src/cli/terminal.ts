/**
 * What the CLI may assume about the terminal it writes to.
 * Colour only on a TTY, and never when NO_COLOR is set (any non-empty value, as no-color.org asks) or
 * FORCE_COLOR=0. citty colours its help and its error words whenever CI, TEST and NO_COLOR=1 are absent,
 * even into a pipe, so its text passes through `forTerminal` here.
 */
export function colourAllowed(stream: { isTTY?: boolean }, environment: Record<string, string | undefined> = process.env): boolean {
  if (environment.NO_COLOR !== undefined && environment.NO_COLOR !== "") return false;
  if (environment.FORCE_COLOR === "0" || environment.FORCE_COLOR === "false") return false;
  return stream.isTTY === true;
}

// SGR and other CSI sequences (colour, bold, underline).
const controlSequences = /\u001b\[[0-9;?]*[ -/]*[@-~]/g;

export function withoutColour(text: string): string {
  return text.replace(controlSequences, "");
}

/** The text as it may be shown on this stream: unchanged on a colour terminal, plain otherwise. */
export function forTerminal(text: string, stream: { isTTY?: boolean }): string {
  return colourAllowed(stream) ? text : withoutColour(text);
}

/**
 * A reader that closes early (`flameox mcp inspect --json | head -c 100`) makes the next write fail with
 * EPIPE, which Bun reports as an 'error' event on stdout; unhandled, it ends the process with a stack trace
 * and exit 1. Nobody reads the rest, so it is dropped: the command still finishes (never half-done) and
 * exits with its own code. Any other stdout error still surfaces.
 */
export function dropOutputAfterBrokenPipe(stream: NodeJS.WriteStream = process.stdout): void {
  if (stream.listeners("error").includes(onStdoutError)) return;
  stream.on("error", onStdoutError);
}

function onStdoutError(error: NodeJS.ErrnoException): void {
  if (error.code === "EPIPE") return;
  throw error;
}
