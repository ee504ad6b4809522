/**
 * ShrinkRay as a reduction engine: the command line flameox runs (from the managed provider
 * environment only), the launcher and interestingness-test scripts it writes into the reduction's
 * scratch folder, and the attempt log that test appends to, read back as rows.
 */
import type { AttemptClassification, ReductionAttempt } from "../../domain/reductions.ts";
import launcherSource from "./flameox_shrinkray_launcher.py" with { type: "text" };
import testSource from "./flameox_shrinkray_test.py" with { type: "text" };

export const shrinkrayLauncherSource = launcherSource;
export const shrinkrayTestSource = testSource;

/** The scripts' file names; the test reads its configuration from `shrinkray-test.json` beside it. */
export const shrinkrayFiles = {
  launcher: "flameox_shrinkray_launcher.py",
  test: "flameox_shrinkray_test.py",
  config: "shrinkray-test.json",
};

/** What the interestingness test needs to run the predicate as flameox's own reducer does. */
export type ShrinkrayTestConfig = {
  argv: string[];
  cwd: string;
  /** The predicate's complete environment (the broker's allowlist applied), without the candidate variable. */
  environment: Record<string, string>;
  candidate_variable: string;
  predicate_timeout_seconds: number;
  repetitions: number;
  /** The reduction's wall-time deadline, ms since the epoch: no run outlives it. */
  wall_deadline_ms: number;
  max_attempts: number;
  partitioner: string;
  original_units: number;
  original_bytes: number;
  output_budget_bytes: number;
  /** Files in the scratch folder. */
  log: string;
  state: string;
  lock: string;
  best: string;
  limit_marker: string;
  stdout: string;
  stderr: string;
};

/** POSIX shell quoting: ShrinkRay splits its TEST argument with shlex. */
export function shellQuote(value: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(value) ? value : `'${value.replaceAll("'", `'"'"'`)}'`;
}

/**
 * One reduction's ShrinkRay command line: deterministic (one test at a time, a fixed seed), no
 * terminal UI, no history or formatter (the stored result is exactly what the predicate judged), the
 * candidate given as a file argument and worked on in ShrinkRay's own temporary folder.
 */
export function shrinkrayArgv(options: {
  python: string;
  launcher: string;
  test: string;
  candidate: string;
  timeoutSeconds: number;
}): string[] {
  return [
    options.python,
    "-I",
    options.launcher,
    "--parallelism",
    "1",
    "--seed",
    "0",
    "--ui",
    "basic",
    "--volume",
    "quiet",
    "--no-history",
    "--formatter",
    "none",
    "--input-type",
    "arg",
    "--not-in-place",
    "--trivial-is-not-error",
    "--no-python-reducer",
    "--timeout",
    String(options.timeoutSeconds),
    `${shellQuote(options.python)} -I -S ${shellQuote(options.test)}`,
    options.candidate,
  ];
}

/** One line of the attempt log: a native attempt row, whether it was the final revalidation, and why a predicate could not start. */
export type ShrinkrayAttempt = ReductionAttempt & { revalidation: boolean; failure: string | null };

const classifications: AttemptClassification[] = ["interesting", "not_interesting", "timed_out", "contradictory", "failed_to_run"];

/** The complete lines of `text` as attempts; a line that is not one (a torn last write) ends the read. */
export function parseAttemptLines(text: string): { attempts: ShrinkrayAttempt[]; consumed: number } {
  const attempts: ShrinkrayAttempt[] = [];
  let consumed = 0;
  while (true) {
    const end = text.indexOf("\n", consumed);
    if (end < 0) break;
    const parsed = attemptOf(text.slice(consumed, end));
    if (!parsed) break;
    attempts.push(parsed);
    consumed = end + 1;
  }
  return { attempts, consumed };
}

function attemptOf(line: string): ShrinkrayAttempt | null {
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return null;
  }
  const classification = value.classification as AttemptClassification;
  if (typeof value.attempt !== "number" || !classifications.includes(classification)) return null;
  const count = (name: string) => (typeof value[name] === "number" ? (value[name] as number) : 0);
  return {
    attempt: value.attempt,
    candidate_digest: String(value.candidate_digest ?? ""),
    units: count("units"),
    byte_length: count("byte_length"),
    removed_units: count("removed_units"),
    dependency_added_units: 0,
    classification,
    cache_status: "miss",
    exit_codes: Array.isArray(value.exit_codes) ? (value.exit_codes as (number | null)[]) : [],
    duration_ms: count("duration_ms"),
    became_best: value.became_best === true,
    revalidation: value.revalidation === true,
    failure: typeof value.failure === "string" ? value.failure.slice(0, 300) : null,
  };
}
