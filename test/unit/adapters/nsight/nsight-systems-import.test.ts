import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { FlameoxError } from "../../../../src/domain/errors.ts";
import { MemoryEvidenceSink } from "../../../../src/domain/evidence.ts";
import { importNsightSystems } from "../../../../src/adapters/nsight/index.ts";
import { maxArgsBytes } from "../../../../src/adapters/formats/chrome-trace.ts";
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

/** A minimal export: runtime and kernel tables with the given rows, plus whatever `extra` adds. */
function minimalExport(kernels: [number, number, string][], extra: string[] = []): string {
  const path = join(temporaryDirectory("nsight-minimal"), "report.sqlite");
  const database = new Database(path);
  database.run("create table StringIds (id integer primary key, value text)");
  database.run(
    "create table CUPTI_ACTIVITY_KIND_RUNTIME (start integer, end integer, globalTid integer, correlationId integer, nameId integer)",
  );
  database.run(
    "create table CUPTI_ACTIVITY_KIND_KERNEL (start integer, end integer, deviceId integer, streamId integer, correlationId integer, demangledName text)",
  );
  database.run("insert into StringIds values (1, 'cudaLaunchKernel')");
  database.transaction(() => {
    kernels.forEach(([start, end, name], index) => {
      database.run("insert into CUPTI_ACTIVITY_KIND_RUNTIME values (?, ?, 1, ?, 1)", [start - 10, start - 5, index]);
      database.run("insert into CUPTI_ACTIVITY_KIND_KERNEL values (?, ?, 0, 7, ?, ?)", [start, end, index, name]);
    });
  })();
  for (const statement of extra) database.run(statement);
  database.close();
  return path;
}

describe("Nsight Systems exports that are not what they seem", () => {
  test("views are never read: a recursive view where a table should be is an absent table, read at once", () => {
    const viewOnly = join(temporaryDirectory("nsight-view"), "report.sqlite");
    const database = new Database(viewOnly);
    database.run("create table CUPTI_ACTIVITY_KIND_RUNTIME (start integer, end integer)");
    database.run(
      "create view CUPTI_ACTIVITY_KIND_KERNEL as with recursive r(n) as (select 1 union all select n + 1 from r) select n as start, n + 1 as end from r",
    );
    database.close();
    expect(code(() => importNsightSystems(viewOnly, new MemoryEvidenceSink()))).toBe("ARTIFACT_PARSE_FAILED");
    const withView = minimalExport(
      [[100, 200, "k"]],
      [
        "create view NVTX_EVENTS as with recursive r(n) as (select 1 union all select n + 1 from r) select n as start, n as end, 'x' as text from r",
      ],
    );
    const summary = importNsightSystems(withView, new MemoryEvidenceSink());
    expect(summary.eventCount).toBe(2);
    expect(summary.limitations).toContain("No NVTX_EVENTS table in this export.");
  });

  test("a row that ends before it starts is kept with duration 0 and said so; timestamps beyond 2^62 ns are left out", () => {
    const path = minimalExport([
      [1000, 900, "reversed"],
      [2000, 2500, "fine"],
      [1e30, 1e30 + 5, "absurd"],
    ]);
    const sink = new MemoryEvidenceSink();
    const summary = importNsightSystems(path, sink);
    const kernels = sink.traceEvents.filter((event) => event.category === "kernel");
    expect(kernels.map((event) => [event.name, event.dur_ns])).toEqual([
      ["reversed", 0],
      ["fine", 500],
    ]);
    expect(summary.limitations).toContain("1 row(s) of CUPTI_ACTIVITY_KIND_KERNEL end before they start; they are kept with duration 0.");
    expect(summary.limitations).toContain("1 row(s) of CUPTI_ACTIVITY_KIND_KERNEL have timestamps beyond 2^62 ns and were left out.");
  });

  test("args stay valid JSON however long a column's text is; short args are whole", () => {
    const path = minimalExport(
      [
        [100, 200, "long"],
        [300, 400, "short"],
      ],
      [
        "alter table CUPTI_ACTIVITY_KIND_KERNEL add column launchType text",
        "alter table CUPTI_ACTIVITY_KIND_KERNEL add column gridX integer",
        `update CUPTI_ACTIVITY_KIND_KERNEL set launchType = '${'"{['.repeat(3000)}', gridX = 4 where demangledName = 'long'`,
        "update CUPTI_ACTIVITY_KIND_KERNEL set launchType = 'regular', gridX = 8 where demangledName = 'short'",
      ],
    );
    const sink = new MemoryEvidenceSink();
    importNsightSystems(path, sink);
    const args = (name: string) => {
      const text = sink.traceEvents.find((event) => event.category === "kernel" && event.name === name)!.args!;
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(maxArgsBytes);
      return JSON.parse(text) as Record<string, unknown>;
    };
    const long = args("long");
    expect(long.grid).toEqual([4, null, null]);
    expect(long["…truncated"]).toBe(true);
    expect(String(long.launch_type).startsWith('"\\"{[')).toBe(true);
    expect(args("short")).toEqual({
      context: null,
      grid: [8, null, null],
      block: [null, null, null],
      graph_id: null,
      launch_type: "regular",
    });
  });

  test("top_kernels are ordered by total time, not by launch count", () => {
    const many: [number, number, string][] = Array.from({ length: 10 }, (_, index) => [
      1000 * (index + 1),
      1000 * (index + 1) + 1,
      "short",
    ]);
    const path = minimalExport([...many, [50_000, 60_000, "long"]]);
    const summary = importNsightSystems(path, new MemoryEvidenceSink());
    expect(summary.topKernels.map((kernel) => [kernel.name, kernel.count, kernel.totalNs])).toEqual([
      ["long", 1, 10_000],
      ["short", 10, 10],
    ]);
  });

  test("rows are read under a deadline: past it the export is refused as too large", () => {
    const rows: [number, number, string][] = Array.from({ length: 5000 }, (_, index) => [index * 10 + 100, index * 10 + 105, "k"]);
    const path = minimalExport(rows);
    expect(code(() => importNsightSystems(path, new MemoryEvidenceSink(), { deadlineMs: -1 }))).toBe("ARTIFACT_TOO_LARGE");
    expect(importNsightSystems(path, new MemoryEvidenceSink()).eventCount).toBe(10_000);
  });
});
