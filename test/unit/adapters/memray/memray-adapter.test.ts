import { describe, expect, test, setDefaultTimeout } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FlameoxError } from "../../../../src/domain/errors.ts";
import { MemoryEvidenceSink } from "../../../../src/domain/evidence.ts";
import {
  extractMemray,
  importMemrayExport,
  memrayCaptureCommand,
  probeMemray,
  writeMemrayCollectors,
} from "../../../../src/adapters/memray/index.ts";
import { barePython, pythonFixtures, repositoryRoot, runCommand, temporaryDirectory, venvPython } from "../../../fixtures/python/tools.ts";

// Runs memray on a real allocation. The suite's default per-test deadline is 30 s (scripts/test-deadline.ts).
setDefaultTimeout(60_000);

const fiftyMegabytes = 50 * 1024 * 1024;

async function captureAllocation(): Promise<{ artifact: string; directory: string }> {
  const directory = temporaryDirectory("memray");
  const command = memrayCaptureCommand({
    workload: { argv: [venvPython, join(pythonFixtures, "memray", "allocate.py")], cwd: directory, env: {}, python: venvPython },
    artifactDirectory: directory,
  });
  const result = await runCommand(command.argv, { cwd: command.cwd, env: command.environment, timeoutMs: 60_000 });
  expect(result.exitCode).toBe(0);
  return { artifact: command.artifacts[0]!.path, directory };
}

async function expectParseFailure(action: () => Promise<unknown> | unknown): Promise<void> {
  let caught: unknown;
  try {
    await action();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(FlameoxError);
  expect((caught as FlameoxError).code).toBe("ARTIFACT_PARSE_FAILED");
}

describe("memray adapter", () => {
  test("peak within 10% of a known 50 MB allocation, with the allocating frame on the stack", async () => {
    const { artifact, directory } = await captureAllocation();
    const collectors = writeMemrayCollectors(join(directory, "collectors"));
    const sink = new MemoryEvidenceSink();
    const summary = await extractMemray(
      { artifact, python: venvPython, collectors, workDirectory: directory, projectRoot: repositoryRoot, run: runCommand },
      sink,
    );
    expect(Math.abs(summary.peakBytes - fiftyMegabytes) / fiftyMegabytes).toBeLessThan(0.1);
    expect(summary.totalAllocatedBytes).toBeGreaterThanOrEqual(fiftyMegabytes);
    expect(summary.leakedBytes).toBeGreaterThanOrEqual(fiftyMegabytes);
    const peak = sink.measurements.find((row) => row.name === "memory.peak_bytes")!;
    expect(peak.value).toBe(summary.peakBytes);
    const biggest = [...sink.stacks].sort((left, right) => right.weight - left.weight)[0]!;
    expect(biggest.unit).toBe("bytes");
    expect(Math.abs(biggest.weight - fiftyMegabytes)).toBeLessThan(1024);
    const leaf = sink.frames.get(biggest.frame_keys.at(-1)!)!;
    expect(leaf.function).toBe("hold_buffer");
    expect(leaf.file).toBe("test/fixtures/python/memray/allocate.py");
  });

  test("truncated or malformed captures give ARTIFACT_PARSE_FAILED", async () => {
    const { artifact, directory } = await captureAllocation();
    const collectors = writeMemrayCollectors(join(directory, "collectors"));
    const truncated = join(directory, "truncated.bin");
    writeFileSync(truncated, readFileSync(artifact).subarray(0, 3000));
    const garbage = join(directory, "garbage.bin");
    writeFileSync(garbage, "not a memray file");
    for (const path of [truncated, garbage, join(directory, "missing.bin")]) {
      await expectParseFailure(() =>
        extractMemray(
          { artifact: path, python: venvPython, collectors, workDirectory: directory, projectRoot: null, run: runCommand },
          new MemoryEvidenceSink(),
        ),
      );
    }
    await expectParseFailure(() => importMemrayExport('{"schema":"flameox.memray-export.v1"', new MemoryEvidenceSink(), null));
    await expectParseFailure(() => importMemrayExport('{"schema":"other"}', new MemoryEvidenceSink(), null));
  });

  test("probe: pinned version, or the exact pip command", async () => {
    expect((await probeMemray(venvPython, runCommand)).version).toBe("memray 1.20.0");
    const python = barePython();
    const missing = await probeMemray(python, runCommand);
    expect(missing.status).toBe("unavailable");
    expect(missing.remediation[0]).toContain(`${python} -m pip install memray==1.20.0`);
  });
});
