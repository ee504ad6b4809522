import { expect, test } from "bun:test";
import { renderCrash } from "../../../src/cli/runs.ts";
import { blankManifest } from "../../../src/store/run-store.ts";

function run(changes: Partial<ReturnType<typeof blankManifest>>) {
  return { ...blankManifest("r1", "execution", "2026-01-01T00:00:00Z"), resource_uri: "flameox://runs/r1", ...changes };
}

const stderr = { tail: "Traceback (most recent call last):\nValueError: bad\n\n", tail_complete: true, bytes: 40 };

test("a failed run shows its exception, where it was raised and the end of its stderr", () => {
  const failed = run({
    execution_status: "failed",
    process: { exit_code: 1, stdout: { tail: "ignored", tail_complete: true }, stderr },
    exception: {
      language: "python",
      exception_type: "ValueError",
      message: "bad",
      frames: [
        { file: "app.py", line: 3, function: "<module>" },
        { file: "lib.py", line: null, function: "parse" },
      ],
      frames_omitted: 0,
      chained: null,
    },
  });
  expect(renderCrash(failed)).toEqual([
    "exception: ValueError: bad",
    "  app.py:3 in <module>",
    "  lib.py:? in parse",
    "stderr (end):",
    "  Traceback (most recent call last):",
    "  ValueError: bad",
  ]);
});

test("a run that succeeded shows no stderr; a run without process facts or a stderr tail shows nothing", () => {
  expect(renderCrash(run({ execution_status: "succeeded", process: { exit_code: 0, stderr } }))).toEqual([]);
  expect(renderCrash(run({ execution_status: "failed", process: null }))).toEqual([]);
  expect(renderCrash(run({ execution_status: "failed", process: { exit_code: 1, stderr: { tail_complete: true } } }))).toEqual([]);
  expect(renderCrash(run({ execution_status: "failed", process: { exit_code: 1, stderr: { tail: "  \n" } } }))).toEqual([]);
});
