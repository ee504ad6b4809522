import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { extractChromeTrace } from "../../../../src/adapters/formats/chrome-trace.ts";
import { extractPySpyRaw } from "../../../../src/adapters/formats/py-spy-raw.ts";
import { extractSpeedscope } from "../../../../src/adapters/formats/speedscope.ts";
import { MemoryEvidenceSink } from "../../../../src/domain/evidence.ts";
import { fixtures, hottest, names } from "./helpers.ts";

/** Recorded with `py-spy record -s -t` of subprocesses.py: a parent and two children, each a MainThread. */
const extractors = {
  "py-spy-subprocesses.raw.txt": extractPySpyRaw,
  "py-spy-subprocesses.speedscope.json": extractSpeedscope,
  "py-spy-subprocesses.chrometrace.json": extractChromeTrace,
} as const;

describe("py-spy --subprocesses --threads: process and thread labels are not call frames", () => {
  for (const [name, extract] of Object.entries(extractors)) {
    test(name, async () => {
      const sink = new MemoryEvidenceSink();
      await extract(join(fixtures, name), sink, { projectRoot: null });
      for (const frame of sink.frames.values()) expect(frame.function).not.toMatch(/^(process \d+:"|thread \()/);
      for (const stack of sink.stacks) expect(names(sink, stack)[0]).toBe("<module>");
      expect(hottest(sink)).toBe("hot_loop");
      // Three processes' main threads: three threads, never merged into one.
      const threads = new Set(sink.stacks.map((stack) => `${stack.process}\u0000${stack.thread}`));
      expect(new Set(sink.stacks.map((stack) => stack.process)).size).toBe(3);
      expect(new Set(sink.stacks.map((stack) => stack.thread)).size).toBe(threads.size);
    });
  }
});
