import { statSync } from "node:fs";
import { resolve } from "node:path";
import {
  type FlameoxError,
  invalidArguments,
  executionRefused,
  processCancelled,
  processFailed,
  processTimeout,
} from "../domain/errors.ts";
import type { BrokerClock, ProcessOptions, ProcessRequest } from "./broker-types.ts";
import { buildChildEnvironment, type ChildEnvironment } from "./environment-policy.ts";
import { resolveExecutable } from "./executable.ts";

/** Everything about a request that can be checked, refused or resolved before anything is spawned. */

export const defaultOutputBudgetBytes = 16 * 1024 * 1024;
export const defaultGracePeriodMs = 5_000;
export const defaultTrackingIntervalMs = 100;
const maximumDeadlineAheadMs = 7 * 24 * 60 * 60 * 1000;

export type PreparedRequest = {
  /** Absolute, milliseconds since the epoch on the broker's clock. */
  deadline: number;
  cwd: string;
  executable: string;
  argv: string[];
  child: ChildEnvironment;
  gracePeriodMs: number;
  trackingIntervalMs: number;
  outputBudgetBytes: number;
};

function validateRequest(request: ProcessRequest, clock: BrokerClock): void {
  const problems: { field: string; message: string; type: string }[] = [];
  if (!Array.isArray(request.argv) || request.argv.length === 0) {
    problems.push({ field: "argv", message: "must be a non-empty array of strings", type: "array" });
  } else {
    request.argv.forEach((argument, index) => {
      if (typeof argument !== "string") problems.push({ field: `argv[${index}]`, message: "must be a string", type: "string" });
      else if (argument.includes("\u0000"))
        problems.push({ field: `argv[${index}]`, message: "must not contain a NUL byte", type: "string" });
    });
  }
  if (typeof request.cwd !== "string" || request.cwd.length === 0)
    problems.push({ field: "cwd", message: "must be a directory path", type: "string" });
  if (typeof request.deadline !== "number" || !Number.isFinite(request.deadline)) {
    problems.push({ field: "deadline", message: "must be milliseconds since the epoch", type: "number" });
  } else if (request.deadline - clock.now() > maximumDeadlineAheadMs) {
    problems.push({ field: "deadline", message: "must be at most 7 days ahead", type: "number" });
  }
  const budget = request.outputBudgetBytes;
  if (budget !== undefined && (!Number.isSafeInteger(budget) || budget < 0)) {
    problems.push({ field: "outputBudgetBytes", message: "must be a non-negative integer", type: "number" });
  }
  if (problems.length > 0) throw invalidArguments("runProcess", problems);
}

function checkWorkingDirectory(cwd: string): string {
  const absolute = resolve(cwd);
  let isDirectory = false;
  try {
    isDirectory = statSync(absolute).isDirectory();
  } catch {
    isDirectory = false;
  }
  if (!isDirectory) {
    throw executionRefused(`The working directory ${absolute} does not exist or is not a directory.`, {
      remediation: ["Create the directory or point cwd at an existing one."],
      details: { cwd: absolute },
    });
  }
  return absolute;
}

/** Validates, refuses what may not start, builds the child environment and resolves the executable. */
export function prepareRequest(request: ProcessRequest, options: ProcessOptions, clock: BrokerClock): PreparedRequest {
  validateRequest(request, clock);
  if (options.signal?.aborted) {
    throw processCancelled("The run was cancelled before the process started.", { remediation: ["Start the run again when ready."] });
  }
  if (request.deadline <= clock.now()) {
    throw processTimeout("The deadline passed before the process could start.", {
      remediation: ["Allow a later deadline."],
      retryable: true,
    });
  }
  const cwd = checkWorkingDirectory(request.cwd);
  const child = buildChildEnvironment({
    parentEnvironment: options.parentEnvironment,
    inherit: options.inheritEnvironment,
    environment: request.environment,
    trustedEnvironment: request.trustedEnvironment,
    record: options.recordEnvironment,
  });
  const [name, ...rest] = request.argv as [string, ...string[]];
  return {
    deadline: request.deadline,
    cwd,
    executable: resolveExecutable(name, child.environment.PATH, cwd),
    argv: rest,
    child,
    gracePeriodMs: Math.max(0, options.gracePeriodMs ?? defaultGracePeriodMs),
    trackingIntervalMs: Math.max(10, options.trackingIntervalMs ?? defaultTrackingIntervalMs),
    outputBudgetBytes: request.outputBudgetBytes ?? defaultOutputBudgetBytes,
  };
}

/** The spawn itself failed (permissions, a bad interpreter line, noexec mounts): the same error for every way flameox starts a process. */
export function couldNotStart(executable: string, error: unknown): FlameoxError {
  return processFailed(`Could not start ${executable}: ${error instanceof Error ? error.message : String(error)}.`, {
    remediation: ["Check that the executable can run on this machine (permissions, interpreter line, mount options)."],
    details: { executable },
    cause: error,
  });
}
