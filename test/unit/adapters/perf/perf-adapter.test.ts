import { describe, expect, test, setDefaultTimeout } from "bun:test";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FlameoxError } from "../../../../src/domain/errors.ts";
import { MemoryEvidenceSink } from "../../../../src/domain/evidence.ts";
import { extractPerfData, extractPerfScript, perfCaptureCommand, probePerf } from "../../../../src/adapters/perf/index.ts";
import { pythonFixtures, runCommand, temporaryDirectory } from "../../../fixtures/python/tools.ts";

// Compiles a C program and records it with perf. The suite's default per-test deadline is 30 s (scripts/test-deadline.ts).
setDefaultTimeout(60_000);

// The test bootstrap installs linux-perf (tools/debian-packages.txt); a missing perf is a failure, not a skip.
const perfInstalled = Bun.which("perf") !== null;

async function parseFailure(action: () => unknown): Promise<string | undefined> {
  try {
    await action();
  } catch (error) {
    return (error as FlameoxError).code;
  }
  return undefined;
}

describe("perf adapter", () => {
  test("the hot C function of a small -O0 -g program leads, stacks root first", async () => {
    expect(perfInstalled).toBe(true);
    const directory = temporaryDirectory("perf");
    const binary = join(directory, "hot");
    const built = await runCommand(["gcc", "-O0", "-g", "-fno-omit-frame-pointer", "-o", binary, join(pythonFixtures, "perf", "hot.c")], {
      timeoutMs: 60_000,
    });
    expect(built.exitCode).toBe(0);
    const probe = await probePerf(runCommand);
    expect(probe.status).toBe("available");
    const command = perfCaptureCommand({ workload: { argv: [binary], cwd: directory, env: {} }, artifactDirectory: directory });
    const recorded = await runCommand(command.argv, { cwd: command.cwd, env: command.environment, timeoutMs: 60_000 });
    expect(recorded.exitCode).toBe(0);
    const sink = new MemoryEvidenceSink();
    const summary = await extractPerfData({ artifact: command.artifacts[0]!.path, run: runCommand }, sink);
    expect(summary.topLeaves[0]!.function).toBe("hot_loop");
    // perf samples on-CPU cycles of the process, so load elsewhere does not move shares; hot_loop is 30 calls
    // of 10M iterations against a trivial cold() and the loader's few milliseconds: its share is above 0.95.
    expect(summary.topLeaves[0]!.samples / summary.samples).toBeGreaterThan(0.5);
    const hotStack = sink.stacks
      .filter((stack) => sink.frames.get(stack.frame_keys.at(-1)!)!.function === "hot_loop")
      .sort((left, right) => right.weight - left.weight)[0]!;
    const names = hotStack.frame_keys.map((key) => sink.frames.get(key)!.function);
    expect(names.at(-2)).toBe("main");
    expect(names.indexOf("main")).toBeGreaterThan(0);
    expect(hotStack.unit).toBe("samples");

    const truncated = join(directory, "truncated.data");
    writeFileSync(truncated, readFileSync(command.artifacts[0]!.path).subarray(0, 20_000));
    expect(await parseFailure(() => extractPerfData({ artifact: truncated, run: runCommand }, new MemoryEvidenceSink()))).toBe(
      "ARTIFACT_PARSE_FAILED",
    );
  });

  test("perf script text: leaf-first chains reversed; malformed or truncated text fails", () => {
    const text = [
      "hot 10/11   1.000000:     250000 cpu-clock:ppp: ",
      "\t            118b hot_loop+0x52 (/tmp/hot)",
      "\t            11d5 main+0x24 (/tmp/hot)",
      "",
      "hot 10/11   1.000250:     250000 cpu-clock:ppp: ",
      "\t            118b hot_loop+0x52 (/tmp/hot)",
      "\t            11d5 main+0x24 (/tmp/hot)",
      "",
    ].join("\n");
    const sink = new MemoryEvidenceSink();
    const summary = extractPerfScript(text, sink);
    expect(summary.samples).toBe(2);
    expect(sink.stacks).toHaveLength(1);
    expect(sink.stacks[0]!.frame_keys.map((key) => sink.frames.get(key)!.function)).toEqual(["main", "hot_loop"]);
    expect(sink.stacks[0]!.weight).toBe(2);
    expect(() => extractPerfScript("garbage line\n", new MemoryEvidenceSink())).toThrow(FlameoxError);
    expect(() => extractPerfScript(text.slice(0, text.indexOf("main+0x24") + 4), new MemoryEvidenceSink())).toThrow(FlameoxError);
    expect(() => extractPerfScript("", new MemoryEvidenceSink())).toThrow(FlameoxError);
  });

  test("probe: a missing perf is unavailable with the install command; a refused one asks for permission", async () => {
    const missing = await probePerf(runCommand, { perf: "/nonexistent/perf" });
    expect(missing.status).toBe("unavailable");
    expect(missing.remediation[0]).toContain("apt-get install linux-perf");
    const directory = temporaryDirectory("perf-denied");
    const fake = join(directory, "perf");
    writeFileSync(
      fake,
      '#!/bin/sh\nif [ "$1" = "--version" ]; then echo "perf version 6.1"; exit 0; fi\necho "Error: Access to performance monitoring and observability operations is limited. perf_event_paranoid setting is 4" >&2\nexit 255\n',
    );
    chmodSync(fake, 0o755);
    const denied = await probePerf(runCommand, { perf: fake });
    expect(denied.status).toBe("permission_required");
    expect(denied.remediation[0]).toContain("sysctl kernel.perf_event_paranoid=1");
  });
});
