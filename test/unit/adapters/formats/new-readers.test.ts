/**
 * The readers for formats developers produce: `perf script` text, Firefox Profiler (Gecko and
 * processed), cProfile .pstats, stackprof, DTrace aggregated stacks and GHC .prof. Each names the
 * program's hot function first on a real file; cProfile's rebuilt stacks keep its own self and
 * cumulative times (checked against Python's pstats module through the oracle).
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { detectProfileFormat } from "../../../../src/adapters/formats/detect.ts";
import { extractProfile } from "../../../../src/adapters/formats/extract-profile.ts";
import { MemoryEvidenceSink } from "../../../../src/domain/evidence.ts";
import { repositoryRoot, runCommand, venvPython } from "../../../fixtures/python/tools.ts";
import { corpusRoot } from "./corpus.ts";
import { fixtures, hottest, leaf, names, tempDir } from "./helpers.ts";

setDefaultTimeout(60_000);

async function extract(path: string, expectedFormat: string) {
  expect((await detectProfileFormat(path)).format).toBe(expectedFormat as never);
  const sink = new MemoryEvidenceSink();
  const result = await extractProfile(path, sink, { projectRoot: null });
  return { sink, result };
}

describe("the hot function comes first", () => {
  test("perf script text recorded here from a C program (perf record -g; perf script)", async () => {
    const { sink, result } = await extract(join(fixtures, "perf", "hot.perf.txt"), "perf_script");
    expect(result.producer).toBe("perf");
    expect(hottest(sink)).toBe("hot_loop");
    const hot = sink.stacks.filter((stack) => leaf(sink, stack).function === "hot_loop");
    expect(names(sink, hot[0]!).slice(-3)).toEqual(["main", "outer", "hot_loop"]);
    expect(leaf(sink, hot[0]!)).toMatchObject({ module: "hot", language: "native" });
    // hot_loop runs 4× the iterations of warm_loop: far above the 458 samples' noise.
    const samples = (name: string) =>
      sink.stacks.filter((stack) => leaf(sink, stack).function === name).reduce((sum, stack) => sum + stack.weight, 0);
    expect(samples("hot_loop")).toBeGreaterThan(2 * samples("warm_loop"));
    expect(new Set(sink.stacks.map((stack) => stack.thread))).toEqual(new Set(["hot"]));
  });

  test("cProfile .pstats written by python -m cProfile -o", async () => {
    const { sink, result } = await extract(join(fixtures, "pstats", "busy.pstats"), "pstats");
    expect(result.producer).toBe("cProfile");
    expect(hottest(sink)).toBe("hot_loop");
    const hot = sink.stacks.find((stack) => leaf(sink, stack).function === "hot_loop")!;
    expect(names(sink, hot)).toEqual(["<built-in method builtins.exec>", "<module>", "outer", "hot_loop"]);
    expect(leaf(sink, hot)).toMatchObject({ file: "busy_pstats.py", line: 4, language: "python" });
    expect(sink.stacks.every((stack) => stack.unit === "ns")).toBe(true);
    expect(result.limitations[0]).toContain("rebuilt from its caller→callee times");
  });

  test("Firefox Profiler: a Firefox devtools recording, a Gecko profile with child processes and a processed profile", async () => {
    const recording = await extract(join(corpusRoot, "speedscope", "Firefox-63-simple-firefox.json"), "gecko_profile");
    expect(hottest(recording.sink)).toBe("gamma");
    const gamma = recording.sink.stacks.find((stack) => leaf(recording.sink, stack).function === "gamma")!;
    expect(leaf(recording.sink, gamma).file).toMatch(/simple\.js$/);
    const gecko = await extract(join(corpusRoot, "firefox-profiler", "gecko-1.json"), "gecko_profile");
    // One thread is a child process's whole profile serialized into a string (Gecko format 3).
    expect(new Set(gecko.sink.stacks.map((stack) => stack.thread)).size).toBeGreaterThan(1);
    const processed = await extract(join(corpusRoot, "firefox-profiler", "processed-3.json"), "gecko_profile");
    expect(processed.sink.stacks.length).toBeGreaterThan(0);
  });

  test("Firefox Profiler processed profile with its strings in shared.stringArray after the threads (Python's sampling profiler)", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const path = join(dir, "python.gecko.json");
      // The layout CPython's Lib/profiling/sampling/gecko_collector.py writes (format 32, processed 57).
      writeFileSync(
        path,
        JSON.stringify({
          meta: { interval: 1, version: 32, preprocessedProfileVersion: 57, product: "Python", startTime: 0 },
          libs: [],
          threads: [
            {
              name: "Thread-1",
              pid: "7",
              tid: 1,
              samples: { stack: [2, 2, 2, 1, null], time: [0, 1, 2, 3, 4], weight: null, weightType: "samples", length: 5 },
              stackTable: { frame: [0, 1, 2], prefix: [null, 0, 1], length: 3 },
              frameTable: { func: [0, 1, 2], line: [1, 5, 9], length: 3 },
              funcTable: { name: [1, 2, 3], fileName: [4, 4, 4], lineNumber: [1, 4, 8], resource: [0, 0, 0], length: 3 },
              resourceTable: { name: [5], length: 1 },
            },
          ],
          shared: { stringArray: ["(root)", "<module>", "outer", "hot_loop", "busy.py", "busy.py"] },
        }),
      );
      const { sink } = await extract(path, "gecko_profile");
      expect(hottest(sink)).toBe("hot_loop");
      const hot = sink.stacks.find((stack) => leaf(sink, stack).function === "hot_loop")!;
      expect(names(sink, hot)).toEqual(["<module>", "outer", "hot_loop"]);
      expect(hot).toMatchObject({ weight: 3, unit: "samples", thread: "Thread-1", process: "7" });
      expect(leaf(sink, hot)).toMatchObject({ file: "busy.py", line: 9, language: "python" });
    } finally {
      cleanup();
    }
  });

  test("stackprof JSON (wall mode, raw samples)", async () => {
    const { sink, result } = await extract(join(corpusRoot, "speedscope", "stackprof-simple-stackprof.json"), "stackprof");
    expect(result.producer).toBe("stackprof");
    expect(hottest(sink)).toBe("Object#d");
    expect(leaf(sink, sink.stacks.find((stack) => leaf(sink, stack).function === "Object#d")!)).toMatchObject({
      line: 23,
      language: "ruby",
    });
  });

  test("DTrace aggregated kernel stacks (FlameGraph's example)", async () => {
    const { sink, result } = await extract(join(corpusRoot, "flamegraph", "example-dtrace-stacks.txt.gz"), "dtrace_stacks");
    expect(result.producer).toBe("dtrace");
    expect(hottest(sink)).toBe("mutex_enter");
    expect(leaf(sink, sink.stacks.find((stack) => leaf(sink, stack).function === "mutex_enter")!).module).toBe("unix");
  });

  test("GHC .prof: the text report (+RTS -p) and the JSON one (+RTS -pj)", async () => {
    const text = await extract(join(corpusRoot, "ghc-prof", "purs.prof.gz"), "ghc_prof");
    expect(hottest(text.sink)).toBe("getRecursiveContents.entries");
    const entries = text.sink.stacks.find((stack) => leaf(text.sink, stack).function === "getRecursiveContents.entries")!;
    expect(names(text.sink, entries)[0]).toBe("MAIN");
    expect(leaf(text.sink, entries)).toMatchObject({ module: "System.FilePath.Glob.Utils", language: "haskell" });
    const json = await extract(join(corpusRoot, "speedscope", "haskell-simple.prof"), "ghc_prof");
    expect(hottest(json.sink)).toBe("make");
  });
});

describe("cProfile's own times survive the rebuilt stacks", () => {
  test("a recursive program profiled here: self time per function is cProfile's exactly; recursion is stated", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const script = join(dir, "recursive.py");
      const output = join(dir, "recursive.pstats");
      writeFileSync(
        script,
        [
          "import cProfile, sys",
          "def fib(n):",
          "    return n if n < 2 else fib(n - 1) + fib(n - 2)",
          "def spin(n):",
          "    return sum(i * i for i in range(n))",
          "def main():",
          "    fib(18)",
          "    spin(100000)",
          "profiler = cProfile.Profile()",
          "profiler.enable()",
          "main()",
          "profiler.disable()",
          "profiler.dump_stats(sys.argv[1])",
        ].join("\n"),
      );
      const run = await runCommand([venvPython, script, output], { timeoutMs: 60_000 });
      expect(run.exitCode).toBe(0);
      const { sink, result } = await extract(output, "pstats");
      expect(result.limitations.join(" ")).toContain("called recursively");
      const oracle = await runCommand([venvPython, join(repositoryRoot, "scripts", "oracles", "profile_shares.py"), "pstats", output], {
        timeoutMs: 60_000,
      });
      const expected = (JSON.parse(oracle.stdout) as { units: { ns: { total: number; functions: Record<string, [number, number]> } } })
        .units.ns;
      const self = new Map<string, number>();
      for (const stack of sink.stacks) self.set(leaf(sink, stack).function, (self.get(leaf(sink, stack).function) ?? 0) + stack.weight);
      const total = [...self.values()].reduce((sum, weight) => sum + weight, 0);
      for (const [name, [selfNs]] of Object.entries(expected.functions)) {
        expect(Math.abs((self.get(name) ?? 0) / total - selfNs / expected.total)).toBeLessThan(1e-6);
      }
    } finally {
      cleanup();
    }
  });
});
