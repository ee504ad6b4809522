import { expect, setDefaultTimeout, test } from "bun:test";
import { probeRunner } from "../../../../src/adapters/command-runner.ts";
import { discoverAdapterEntryPoints } from "../../../../src/adapters/providers/third-party-adapters.ts";
import { inspectDistributions } from "../../../../src/adapters/providers/distribution-inspection.ts";
import { askPython } from "../../../../src/adapters/providers/python-query.ts";
import { FlameoxError } from "../../../../src/domain/errors.ts";
import { venvPython } from "../../../fixtures/python/tools.ts";

// Each case starts the real tools interpreter.
setDefaultTimeout(60_000);

async function refusal(question: Promise<unknown>): Promise<FlameoxError> {
  const error = await question.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(FlameoxError);
  return error as FlameoxError;
}

test("the JSON on the last line of stdout is the answer, whatever is printed before it", async () => {
  const script = "import json, sys\nprint('warming up')\nprint(json.dumps({'argv': sys.argv[1:], 'isolated': sys.flags.isolated}))";
  expect(await askPython(venvPython, probeRunner(), { script, argv: ["a", "b"], timeoutMs: 30_000 })).toEqual({
    argv: ["a", "b"],
    isolated: 1,
  });
});

test("an interpreter that fails or answers with no JSON is PROCESS_FAILED with the end of its stderr", async () => {
  const crashed = await refusal(
    askPython(venvPython, probeRunner(), {
      script: "import sys\nsys.stderr.write('first\\nsecond\\nno module x\\n')\nsys.exit(3)",
      argv: [],
      timeoutMs: 30_000,
    }),
  );
  expect(crashed.code).toBe("PROCESS_FAILED");
  expect(crashed.message).toBe("the interpreter could not be asked (exit 3): first | second | no module x");
  const prose = await refusal(askPython(venvPython, probeRunner(), { script: "print('not json')", argv: [], timeoutMs: 30_000 }));
  expect(prose.message).toBe("the interpreter could not be asked (exit 0)");
  const halfJson = await refusal(askPython(venvPython, probeRunner(), { script: "print('{unfinished')", argv: [], timeoutMs: 30_000 }));
  expect(halfJson.code).toBe("PROCESS_FAILED");
});

test("adapter discovery and dependency inspection refuse a broken interpreter with the same typed error", async () => {
  const broken = { runner: probeRunner(), python: "/bin/false" };
  expect((await refusal(discoverAdapterEntryPoints(broken.python, broken.runner))).code).toBe("PROCESS_FAILED");
  expect((await refusal(inspectDistributions(broken.python, ["x"], broken.runner))).code).toBe("PROCESS_FAILED");
  expect(Array.isArray(await discoverAdapterEntryPoints(venvPython, probeRunner()))).toBe(true);
});
