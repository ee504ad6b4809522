// Extraction and analysis refusals: malformed artifacts, missing normalization, wrong producers.
import { describe, expect, test, setDefaultTimeout } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { failure, project, repositoryRoot } from "./harness.ts";
import type { ExtractionTool } from "../../../src/services/extraction-service.ts";
import { projectImport } from "../../support/imports.ts";

// Extractors run the real tools' readers. The suite's default per-test deadline is 30 s (scripts/test-deadline.ts).
setDefaultTimeout(60_000);

async function imported(
  services: Awaited<ReturnType<typeof project>>["services"],
  root: string,
  name: string,
  content: string | Uint8Array,
  kind: string,
) {
  writeFileSync(join(root, name), content);
  return services.imports.importArtifact(projectImport(name, kind));
}

describe("every format: a truncated or malformed artifact is ARTIFACT_PARSE_FAILED", () => {
  const cases: [ExtractionTool, string, string | Uint8Array, string][] = [
    ["pyperf", "bench.json", '{"version": "1.0", "benchmarks": [{"runs": [{"values": [0.1', "benchmark_samples"],
    [
      "benchmark_samples",
      "samples.json",
      '{"schema": "flameox.benchmark-samples.v1", "benchmarks": [{"name": "x", "unit": "parsecs", "values": [1]}]}',
      "benchmark_samples",
    ],
    ["python_startup", "startup.json", '{"schema": "flameox.python-startup.v1", "samples": [', "python_startup"],
    [
      "pytest",
      "events.jsonl",
      '{"schema": "flameox.pytest-events.v1", "event": "run_started", "observed_at_ns": 1}\n{"schema": "flameox.pyt',
      "test_execution",
    ],
    ["coverage", "data.coverage", "SQLite format 3\u0000truncated", "execution_coverage"],
    ["memray", "capture.bin", new Uint8Array([0x6d, 0x65, 0x6d, 0x72, 0x61, 0x79, 0, 1, 2]), "memory_profile"],
    ["nsight_systems", "report.sqlite", "SQLite format 3\u0000not really", "execution_trace"],
    ["observations", "observations.jsonl", '{"schema": "flameox.observations.v1", "kind": "annot', "semantic_observations"],
  ];
  for (const [tool, name, content, kind] of cases) {
    test(tool, async () => {
      const { root, services } = await project(`bad-${tool}`);
      const receipt = await imported(services, root, name, content, kind);
      const error = await failure(() => services.extraction.extract(tool, { run_id: receipt.run_id }));
      expect(error.code).toBe("ARTIFACT_PARSE_FAILED");
      expect(error.remediation.length).toBeGreaterThan(0);
    }, 30_000);
  }

  test("chrome/torch trace JSON (extract_perfetto)", async () => {
    const { root, services } = await project("bad-trace");
    const error = await failure(() =>
      imported(
        services,
        root,
        "trace.json",
        '{"traceEvents": [{"name": "aten::mm", "ph": "X", "ts": 1, "dur": 2, "pid": 1, "tid": 1, "cat": "cpu_op"}, {"na',
        "execution_trace",
      ),
    );
    expect(error.code).toBe("ARTIFACT_PARSE_FAILED");
  });
});

describe("analyses that lack their evidence name the next tool", () => {
  test("analyze_pytorch on an unextracted trace → extract_perfetto with that run; no trace_processor → its remedy", async () => {
    const { root, services } = await project("unextracted");
    const receipt = await imported(
      services,
      root,
      "trace.pftrace",
      new Uint8Array([0x0a, 0x8f, 0x01, 0x12, 0x00, 0xff, 0x10, 0x22]),
      "execution_trace",
    );
    expect(receipt.evidence.status).toBe("not_extracted");
    const error = await failure(() =>
      services.traceAnalysis.pytorch({ run_or_artifact: receipt.run_id, limit: 5, order_by: "self", cursor: null }),
    );
    expect(error.code).toBe("CAPABILITY_UNAVAILABLE");
    expect(error.nextTool).toBe("extract_perfetto");
    expect(error.nextArguments).toEqual({ run_id: receipt.run_id });
    const extraction = await failure(() => services.extraction.extract("perfetto", { run_id: receipt.run_id }));
    expect(extraction.code).toBe("CAPABILITY_UNAVAILABLE");
    expect(extraction.remediation[0]).toContain("trace_processor");
  });

  test("analyze_pytorch on a non-torch trace → COMPARISON_INVALID naming import_artifact", async () => {
    const { root, services } = await project("not-torch", {
      "spy.json": join(repositoryRoot, "test", "fixtures", "formats", "py-spy.chrometrace.json"),
    });
    const receipt = await services.imports.importArtifact(projectImport("spy.json", "execution_trace"));
    expect(root).toBeTruthy();
    const error = await failure(() =>
      services.traceAnalysis.pytorch({ run_or_artifact: receipt.run_id, limit: 5, order_by: "self", cursor: null }),
    );
    expect(error.code).toBe("COMPARISON_INVALID");
    expect(error.details).toMatchObject({
      next_tool: "import_artifact",
      required_kind: "execution_trace",
      required_producer: "torch.profiler",
    });
  });

  test("analyze_memory and analyze_execution without evidence; extraction of a run without the kind", async () => {
    const { root, services } = await project("no-evidence");
    const receipt = await imported(
      services,
      root,
      "samples.json",
      '{"schema": "flameox.benchmark-samples.v1", "benchmarks": [{"name": "parse", "unit": "ms", "values": [1, 2], "warmups": [3]}]}',
      "benchmark_samples",
    );
    const measured = await failure(() =>
      services.measurements.query({
        run_id: receipt.run_id,
        artifact_id: null,
        name_prefix: null,
        include_warmups: false,
        limit: 10,
        cursor: null,
      }),
    );
    expect(measured.nextTool).toBe("extract_pyperf");
    const extracted = await services.extraction.extract("benchmark_samples", { run_id: receipt.run_id });
    expect([extracted.value_count, extracted.warmup_count]).toEqual([2, 1]);
    const rows = await services.measurements.query({
      run_id: receipt.run_id,
      artifact_id: null,
      name_prefix: "benchmark.",
      include_warmups: true,
      limit: 1,
      cursor: null,
    });
    expect(rows.total).toBe(3);
    expect(rows.measurements[0]!.unit).toBe("ns");
    const second = await services.measurements.query({
      run_id: receipt.run_id,
      artifact_id: null,
      name_prefix: "benchmark.",
      include_warmups: true,
      limit: 5,
      cursor: rows.next_cursor,
    });
    expect(second.returned).toBe(2);
    expect(second.next_cursor).toBeNull();
    for (const action of [
      () => services.memoryAnalysis.analyze({ run_or_artifact: receipt.run_id, limit: 5 }),
      () => services.executionAnalysis.analyze({ run_or_artifact: receipt.run_id, limit: 5, comparison_run_or_artifact: null }),
    ]) {
      const error = await failure(action);
      expect(error.code).toBe("CAPABILITY_UNAVAILABLE");
      expect(error.nextTool).toBe("import_artifact");
    }
    const wrongKind = await failure(() => services.extraction.extract("coverage", { run_id: receipt.run_id }));
    expect(wrongKind.code).toBe("CAPABILITY_UNAVAILABLE");
    // An import holds no coverage: the runs a coverage capture recorded are where it is.
    expect(wrongKind.nextTool).toBe("list_runs");
    expect(wrongKind.nextArguments).toEqual({ filter: { adapter: "coverage" } });
    const evidence = services.evidence.get({ ref_type: "run", ref_id: receipt.run_id });
    expect(evidence.data.run_id).toBe(receipt.run_id);
    const summary = await services.evidence.summarize({ run_ids: [receipt.run_id] });
    expect(summary.markdown).toContain(receipt.run_id);
  });
});
