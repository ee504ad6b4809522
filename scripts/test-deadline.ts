/**
 * The per-test deadline of the whole suite. Bun 1.4.5 reads it only from the `--timeout` flag of `bun test`
 * (a `[test] timeout` in bunfig.toml and `setDefaultTimeout` in a preload are ignored — verified by
 * test/unit/test-deadline.test.ts); without it every test and hook gets 5 s, which loaded CI cores exceed.
 * Files that run real tools or the compiled binary name a larger budget of their own with
 * `setDefaultTimeout`, so a single file run by hand gets it too.
 */
export const perTestDeadlineMs = 30_000;

/** argv of `bun test` for the given files or filters (all of test/ when none). */
export function bunTestArguments(bun: string, filters: readonly string[]): string[] {
  return [bun, "test", "--timeout", String(perTestDeadlineMs), ...(filters.length ? filters : ["test/"])];
}
