import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { FlameoxError } from "../../../../src/domain/errors.ts";
import { MemoryEvidenceSink } from "../../../../src/domain/evidence.ts";
import { importNsightSystems } from "../../../../src/adapters/nsight/index.ts";
import { repositoryRoot, temporaryDirectory } from "../../../fixtures/python/tools.ts";

/** A real Nsight Systems export (origin and checksum in test/fixtures/nsight-systems/README.md). */
const fixture = join(repositoryRoot, "test", "fixtures", "nsight-systems", "nsight-2025.5.2.sqlite");

function code(action: () => unknown): string | undefined {
  try {
    action();
  } catch (error) {
    return (error as FlameoxError).code;
  }
  return undefined;
}

describe("Nsight Systems SQLite import", () => {
  test("recorded export: kernel/runtime/memcpy counts, correlation, device and stream", () => {
    const sink = new MemoryEvidenceSink();
    const summary = importNsightSystems(fixture, sink);
    expect(summary.counts).toMatchObject({ cuda_runtime: 33, kernel: 3, cuda_memcpy: 1 });
    expect(summary.eventCount).toBe(37);
    expect(sink.traceEvents).toHaveLength(37);
    expect(summary.correlatedKernels).toBe(3);
    expect(summary.streams).toHaveLength(1);
    expect(summary.topKernels[0]!.name).toBe("add_one(const float *, float *, int)");
    const kernel = sink.traceEvents.find((event) => event.category === "kernel")!;
    expect(kernel.correlation).not.toBeNull();
    expect(kernel.device).not.toBeNull();
    expect(kernel.stream).not.toBeNull();
    const launch = sink.traceEvents.find((event) => event.category === "cuda_runtime" && event.correlation === kernel.correlation)!;
    expect(launch.name).toMatch(/Launch/);
    expect(sink.traceEvents.filter((event) => event.category === "cuda_runtime" && /GraphLaunch/i.test(event.name))).toHaveLength(2);
    for (let index = 1; index < sink.traceEvents.length; index++)
      expect(sink.traceEvents[index]!.ts_ns).toBeGreaterThanOrEqual(sink.traceEvents[index - 1]!.ts_ns);
  });

  test("truncated, malformed or foreign files give ARTIFACT_PARSE_FAILED", () => {
    const directory = temporaryDirectory("nsight-bad");
    const truncated = join(directory, "truncated.sqlite");
    writeFileSync(truncated, readFileSync(fixture).subarray(0, 8192));
    expect(code(() => importNsightSystems(truncated, new MemoryEvidenceSink()))).toBe("ARTIFACT_PARSE_FAILED");
    const garbage = join(directory, "garbage.sqlite");
    writeFileSync(garbage, "not sqlite");
    expect(code(() => importNsightSystems(garbage, new MemoryEvidenceSink()))).toBe("ARTIFACT_PARSE_FAILED");
    const foreign = join(directory, "foreign.sqlite");
    const database = new Database(foreign);
    database.run("create table CUPTI_ACTIVITY_KIND_RUNTIME (start integer, end integer)");
    database.close();
    expect(code(() => importNsightSystems(foreign, new MemoryEvidenceSink()))).toBe("ARTIFACT_PARSE_FAILED");
  });
});
