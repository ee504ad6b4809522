import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { extractChromeTrace } from "../../../../src/adapters/formats/chrome-trace.ts";
import { extractV8CpuProfile } from "../../../../src/adapters/formats/v8-cpuprofile.ts";
import { MemoryEvidenceSink } from "../../../../src/domain/evidence.ts";
import { repositoryRoot, runCommand, venvPython } from "../../../fixtures/python/tools.ts";
import { fixtures, names, selfByFunction } from "./helpers.ts";

const devtools = join(fixtures, "devtools");

async function oracle(path: string): Promise<{ self_ns: Record<string, number>; samples: number }> {
  const result = await runCommand([venvPython, join(repositoryRoot, "scripts", "oracles", "v8_profile_self.py"), path], {
    timeoutMs: 60_000,
  });
  if (result.exitCode !== 0) throw new Error(`oracle failed: ${result.stderr}`);
  return JSON.parse(result.stdout);
}

/** Self ns per function agrees within the rounding of one ns per stack row; shares within 1e-6. */
function expectAgreement(sink: MemoryEvidenceSink, expected: Record<string, number>): void {
  const actual = Object.fromEntries([...selfByFunction(sink)].filter(([, weight]) => weight > 0));
  const wanted = Object.fromEntries(Object.entries(expected).filter(([, weight]) => weight > 0));
  expect(Object.keys(actual).sort()).toEqual(Object.keys(wanted).sort());
  const total = Object.values(wanted).reduce((sum, weight) => sum + weight, 0);
  const actualTotal = Object.values(actual).reduce((sum, weight) => sum + weight, 0);
  for (const [name, weight] of Object.entries(wanted)) {
    expect(Math.abs((actual[name] as number) - weight)).toBeLessThanOrEqual(sink.stacks.length);
    expect(Math.abs((actual[name] as number) / actualTotal - weight / total)).toBeLessThan(1e-6);
  }
}

const bookkeeping = new Set(["(idle)", "(program)", "(garbage collector)"]);

function hottestJs(weights: Iterable<[string, number]>): string {
  return [...weights].filter(([name]) => !bookkeeping.has(name)).sort((left, right) => right[1] - left[1])[0]?.[0] ?? "";
}

describe("Chrome DevTools recordings show their JavaScript", () => {
  for (const name of [
    "chrome-69-simple.json.gz",
    "chrome-141-no-arg-data.json",
    "chrome-65-simple-timeline.json.gz",
    "chrome-66-worker.json.gz",
  ]) {
    test(`${name}: the V8 CPU profile's samples are the stacks, self time per function as the oracle says`, async () => {
      const path = join(devtools, name);
      const expected = await oracle(path);
      expect(expected.samples).toBeGreaterThan(400);
      const sink = new MemoryEvidenceSink();
      const result = await extractChromeTrace(path, sink, { projectRoot: null });
      expect(sink.stacks.every((stack) => stack.unit === "ns")).toBe(true);
      expectAgreement(sink, expected.self_ns);
      expect(hottestJs(selfByFunction(sink))).toBe(hottestJs(Object.entries(expected.self_ns)));
      expect([...sink.frames.values()].some((frame) => frame.function === "ThreadControllerImpl::RunTask")).toBe(false);
      expect(result.limitations[0]).toContain(`This trace carries ${expected.samples} CPU profile samples`);
      expect(sink.traceEvents.length).toBeGreaterThan(0);
    });
  }

  test("the trace event format's samples and stackFrames become sampled stacks per thread", async () => {
    const sink = new MemoryEvidenceSink();
    await extractChromeTrace(join(devtools, "multi-thread-with-samples.json"), sink, { projectRoot: null });
    const rows = sink.stacks.map((stack) => [stack.thread, names(sink, stack).join(";"), stack.weight, stack.unit]).sort();
    expect(rows).toEqual([
      ["2", "[root thread 2]", 3, "samples"],
      ["2", "[root thread 2];function3", 1, "samples"],
      ["2", "[root thread 2];function4", 1, "samples"],
      // Thread 1 is named by its thread_name metadata.
      ["mqt_js", "[root]", 1, "samples"],
      ["mqt_js", "[root];[GC Young Gen]", 1, "samples"],
      ["mqt_js", "[root];function1", 1, "samples"],
    ]);
  });

  for (const name of ["node-10-example.cpuprofile", "chrome-65-simple.cpuprofile"]) {
    test(`${name}: a .cpuprofile (pre-2016 head + timestamps, or nodes + timeDeltas) is weighted by its times`, async () => {
      const path = join(devtools, name);
      const expected = await oracle(path);
      const sink = new MemoryEvidenceSink();
      const result = await extractV8CpuProfile(path, sink, { projectRoot: null });
      expect(sink.stacks.length).toBeGreaterThan(0);
      expectAgreement(sink, expected.self_ns);
      expect(result.limitations).toEqual([]);
    });
  }
});
