/** A failure the launcher explains itself: its message says what happened and what to do. */
export class LauncherError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = "LauncherError";
  }
}
