import { describe, expect, test, setDefaultTimeout } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { FlameoxError } from "../../../../src/domain/errors.ts";
import { MemoryEvidenceSink } from "../../../../src/domain/evidence.ts";
import { extractObservations, observationsEnvironment, writeObservationsSdk } from "../../../../src/adapters/observations/index.ts";
import { runCommand, temporaryDirectory, venvPython } from "../../../fixtures/python/tools.ts";

// Runs a real Python workload. The suite's default per-test deadline is 30 s (scripts/test-deadline.ts).
setDefaultTimeout(60_000);

function code(action: () => unknown): string | undefined {
  try {
    action();
  } catch (error) {
    return (error as FlameoxError).code;
  }
  return undefined;
}

describe("observations SDK", () => {
  test("a workload's annotations and configuration become observation rows", async () => {
    const directory = temporaryDirectory("observations");
    const sdk = writeObservationsSdk(join(directory, "collectors"));
    const script = join(directory, "workload.py");
    writeFileSync(
      script,
      `import sys\nsys.path.insert(0, ${JSON.stringify(sdk.directory)})\nimport flameox_observations as fx\nfx.configuration(batch_size=32, model="tiny")\nfx.annotate("cache.hit_rate", 0.93)\nfx.annotate("phases", ["load", "run"])\n`,
    );
    const environment = observationsEnvironment(directory);
    const result = await runCommand([venvPython, script], { cwd: directory, env: environment, timeoutMs: 30_000 });
    expect(result.exitCode).toBe(0);
    const sink = new MemoryEvidenceSink();
    const summary = extractObservations(environment.FLAMEOX_OBSERVATIONS_PATH!, sink);
    expect(summary).toEqual({ annotations: 2, configurations: 2 });
    expect(sink.observations.map((row) => [row.kind, row.name, JSON.parse(row.value!).value])).toEqual([
      ["configuration", "batch_size", 32],
      ["configuration", "model", "tiny"],
      ["annotation", "cache.hit_rate", 0.93],
      ["annotation", "phases", ["load", "run"]],
    ]);

    const text = readFileSync(environment.FLAMEOX_OBSERVATIONS_PATH!, "utf8");
    const bad = join(directory, "bad.jsonl");
    for (const content of [
      text.slice(0, text.length - 10),
      "{oops}\n",
      '{"schema":"flameox.observations.v1","kind":"annotation","name":"x","value":1,"monotonic_ns":1,"pid":1,"extra":true}\n',
    ]) {
      writeFileSync(bad, content);
      expect(code(() => extractObservations(bad, new MemoryEvidenceSink()))).toBe("ARTIFACT_PARSE_FAILED");
    }
  });

  test("without FLAMEOX_OBSERVATIONS_PATH the SDK writes nothing", async () => {
    const directory = temporaryDirectory("observations-off");
    const sdk = writeObservationsSdk(directory);
    const result = await runCommand(
      [
        venvPython,
        "-c",
        `import sys; sys.path.insert(0, ${JSON.stringify(sdk.directory)}); import flameox_observations as fx; print(fx.annotate("x", 1))`,
      ],
      { env: { FLAMEOX_OBSERVATIONS_PATH: "" }, timeoutMs: 30_000 },
    );
    expect(result.stdout.trim()).toBe("False");
  });
});
