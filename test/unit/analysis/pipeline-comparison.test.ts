import { expect, test } from "bun:test";
import { compareStages } from "../../../src/analysis/pipeline-comparison.ts";
import type { ArtifactPipeline, PipelineStage } from "../../../src/domain/pipelines.ts";

function stage(name: string, ordinal: number, extra: Partial<PipelineStage> = {}): PipelineStage {
  return {
    name,
    ordinal,
    predecessor: null,
    status: "available",
    registration_id: `reg-${name}`,
    artifact_id: `sha256:${name}`,
    byte_length: 10,
    format: "json",
    format_schema: "1",
    extractor: null,
    extractor_version: null,
    structural_summary: null,
    elapsed_ns: null,
    limitations: [],
    ...extra,
  };
}

function pipeline(stages: PipelineStage[], extra: Partial<ArtifactPipeline> = {}): ArtifactPipeline {
  return {
    schema_version: 1,
    pipeline_id: "p",
    run_id: "r",
    pipeline_name: "build",
    pipeline_schema: "1",
    producer: "tool",
    producer_version: "1",
    stages,
    limitations: [],
    created_at: "2024-01-01T00:00:00.000Z",
    resource_uri: "flameox://pipelines/p",
    ...extra,
  };
}

test("each classification: identical, content_changed, changed, added, missing, uninspectable, incompatible; reordering is flagged", () => {
  const summary = (fused: number) => ({ extractor: "stats", extractor_version: "1", structural_summary: { fused, long: "y".repeat(200) } });
  const baseline = pipeline([
    stage("a", 0),
    stage("b", 1),
    stage("c", 2, summary(0)),
    stage("d", 3),
    stage("e", 4, { status: "skipped", registration_id: null, artifact_id: null, byte_length: null }),
    stage("f", 5),
  ]);
  const candidate = pipeline([
    stage("a", 0),
    stage("c", 1, { ...summary(1), artifact_id: "sha256:c2", byte_length: 30 }),
    stage("b", 2, { artifact_id: "sha256:b2" }),
    stage("e", 3),
    stage("f", 4, { format: "binary" }),
    stage("g", 5),
  ]);
  const compared = compareStages(baseline, candidate, () => null);
  expect(compared.compatible).toBe(true);
  const byName = Object.fromEntries(compared.stages.map((row) => [row.name, row]));
  expect(Object.fromEntries(compared.stages.map((row) => [row.name, row.classification]))).toEqual({
    a: "identical",
    b: "content_changed",
    c: "changed",
    d: "missing",
    e: "uninspectable",
    f: "incompatible",
    g: "added",
  });
  expect(byName.b!.reordered).toBe(true);
  expect(byName.c!.reordered).toBe(true);
  expect(byName.a!.reordered).toBe(false);
  expect(byName.c!.byte_length).toEqual({ baseline: 10, candidate: 30, delta: 20 });
  expect(byName.c!.summary_differences).toEqual([{ key: "fused", baseline: 0, candidate: 1 }]);
  expect(byName.e!.status_changed).toBe(true);
  expect(compared.first_divergent_stage).toBe("b");
  expect(compared.counts).toEqual({
    identical: 1,
    content_changed: 1,
    changed: 1,
    added: 1,
    missing: 1,
    uninspectable: 1,
    incompatible: 1,
  });
});

test("evidence row counts appear only where both outputs were extracted; a different producer makes the pair incompatible", () => {
  const evidence = (artifactId: string) => (artifactId === "sha256:none" ? null : { stacks: artifactId.length });
  const compared = compareStages(
    pipeline([stage("a", 0), stage("b", 1)]),
    pipeline([stage("a", 0), stage("b", 1, { artifact_id: "sha256:none" })]),
    evidence,
  );
  expect(compared.stages[0]!.evidence).toEqual({ baseline: { stacks: 8 }, candidate: { stacks: 8 } });
  expect(compared.stages[1]!.evidence).toBeNull();
  const other = compareStages(pipeline([stage("a", 0)]), pipeline([stage("a", 0)], { producer: "other", producer_version: "2" }), evidence);
  expect(other).toMatchObject({ compatible: false, stages: [], first_divergent_stage: null });
  expect(other.identity_differences.map((difference) => difference.field)).toEqual(["producer", "producer_version"]);
});
