import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { callTool, connectMcp, type McpSession, temporaryFolder } from "../support/binary.ts";

setDefaultTimeout(120_000);

let session: McpSession | undefined;
afterEach(async () => {
  await session?.close();
  session = undefined;
});

test("two registrations of a pipeline register, read back and compare stage by stage", async () => {
  const project = temporaryFolder("pipelines");
  for (const [name, text] of [
    ["parsed.json", '{"nodes": 3}\n'],
    ["optimized-a.json", '{"nodes": 2}\n'],
    ["optimized-b.json", '{"nodes": 2, "fused": 1, "padding": "xxxxxxxx"}\n'],
    ["emitted.bin", "binary output\n"],
  ])
    writeFileSync(join(project, name!), text!);
  session = await connectMcp(project, ["--init"]);
  const ids: Record<string, { artifact: string; run: string }> = {};
  for (const name of ["parsed.json", "optimized-a.json", "optimized-b.json", "emitted.bin"]) {
    const imported = await callTool(session, "import_artifact", { path: name });
    ids[name] = { artifact: imported.envelope.result.artifact_id, run: imported.envelope.result.run_id };
  }
  const identity = { pipeline_name: "compile", pipeline_schema: "compile.v1", producer: "toy-compiler" };
  const stage = (name: string, ordinal: number, extra: Record<string, unknown>) => ({
    name,
    ordinal,
    format: "json",
    format_schema: "ir.v1",
    ...(ordinal > 0 ? { predecessor: ["parse", "optimize", "emit"][ordinal - 1] } : {}),
    ...extra,
  });
  const baseline = await callTool(session, "register_artifact_pipeline", {
    request: {
      ...identity,
      producer_version: "1.0",
      run_id: ids["parsed.json"]!.run,
      stages: [
        stage("parse", 0, { status: "available", registration_id: ids["parsed.json"]!.artifact }),
        stage("optimize", 1, {
          status: "available",
          registration_id: ids["optimized-a.json"]!.artifact,
          extractor: "ir-stats",
          extractor_version: "1",
          structural_summary: { nodes: 2, fused: 0 },
        }),
        stage("emit", 2, { status: "skipped" }),
      ],
    },
  });
  expect(baseline.envelope.ok).toBe(true);
  expect(baseline.envelope.result.stages[1]).toMatchObject({ artifact_id: ids["optimized-a.json"]!.artifact, byte_length: 13 });
  const candidate = await callTool(session, "register_artifact_pipeline", {
    request: {
      ...identity,
      producer_version: "1.1",
      run_id: ids["optimized-b.json"]!.run,
      stages: [
        stage("parse", 0, { status: "cached", registration_id: ids["parsed.json"]!.artifact }),
        stage("optimize", 1, {
          status: "available",
          registration_id: ids["optimized-b.json"]!.artifact,
          extractor: "ir-stats",
          extractor_version: "1",
          structural_summary: { nodes: 2, fused: 1 },
        }),
        stage("emit", 2, { status: "available", registration_id: ids["emitted.bin"]!.artifact, format: "binary" }),
      ],
    },
  });
  expect(candidate.envelope.ok).toBe(true);

  const resource = await session.client.readResource({ uri: `flameox://pipelines/${baseline.envelope.result.pipeline_id}` });
  expect(JSON.parse((resource.contents[0] as { text: string }).text).stages.map((row: any) => row.name)).toEqual([
    "parse",
    "optimize",
    "emit",
  ]);

  const compared = await callTool(session, "compare_artifact_pipelines", {
    baseline_pipeline_id: baseline.envelope.result.pipeline_id,
    candidate_pipeline_id: candidate.envelope.result.pipeline_id,
  });
  expect(compared.envelope.ok).toBe(true);
  const result = compared.envelope.result;
  expect(result.compatible).toBe(true);
  expect(result.identity_differences).toEqual([{ field: "producer_version", baseline: "1.0", candidate: "1.1" }]);
  expect(result.first_divergent_stage).toBe("optimize");
  const byName = Object.fromEntries(result.stages.map((row: any) => [row.name, row]));
  expect(byName.parse).toMatchObject({
    classification: "identical",
    status: { baseline: "available", candidate: "cached" },
    status_changed: true,
  });
  expect(byName.optimize).toMatchObject({
    classification: "changed",
    byte_length: { baseline: 13, candidate: 48, delta: 35 },
    summary_differences: [{ key: "fused", baseline: 0, candidate: 1 }],
  });
  expect(byName.emit).toMatchObject({ classification: "incompatible", status: { baseline: "skipped", candidate: "available" } });
  expect(result.notes[0]).toContain("not a root-cause attribution");

  // Paged: one stage per page, the same digest on every page.
  const first = await callTool(session, "compare_artifact_pipelines", {
    baseline_pipeline_id: baseline.envelope.result.pipeline_id,
    candidate_pipeline_id: candidate.envelope.result.pipeline_id,
    limit: 1,
  });
  expect(first.envelope.result).toMatchObject({ returned: 1, total: 3, truncated: true, result_digest: result.result_digest });
  const second = await callTool(session, "compare_artifact_pipelines", {
    baseline_pipeline_id: baseline.envelope.result.pipeline_id,
    candidate_pipeline_id: candidate.envelope.result.pipeline_id,
    limit: 1,
    cursor: first.envelope.result.next_cursor,
  });
  expect(second.envelope.result.stages[0].name).toBe("optimize");
  const last = await callTool(session, "compare_artifact_pipelines", {
    baseline_pipeline_id: baseline.envelope.result.pipeline_id,
    candidate_pipeline_id: candidate.envelope.result.pipeline_id,
    limit: 1,
    cursor: second.envelope.result.next_cursor,
  });
  expect(last.envelope.result).toMatchObject({ returned: 1, total: 3, truncated: false, next_cursor: null });
  expect(last.envelope.result.stages[0].name).toBe("emit");
});

test("a pipeline whose stages contradict each other is refused naming every offending field, and nothing is stored", async () => {
  const project = temporaryFolder("pipelines-invalid");
  writeFileSync(join(project, "a.txt"), "a\n");
  session = await connectMcp(project, ["--init"]);
  const imported = await callTool(session, "import_artifact", { path: "a.txt" });
  const refused = await callTool(session, "register_artifact_pipeline", {
    request: {
      run_id: imported.envelope.result.run_id,
      pipeline_name: "p",
      pipeline_schema: "s",
      producer: "x",
      producer_version: "1",
      stages: [
        { name: "one", ordinal: 1, status: "available", format: "f", format_schema: "1" },
        { name: "one", ordinal: 1, status: "failed", format: "f", format_schema: "1", registration_id: "reg-missing", predecessor: "two" },
        { name: "two", ordinal: 2, status: "available", format: "f", format_schema: "1", registration_id: "sha256:00", extractor: "e" },
      ],
    },
  });
  expect(refused.envelope.error.code).toBe("INVALID_ARGUMENTS");
  expect(refused.envelope.error.details.fields.map((field: any) => field.field).sort()).toEqual([
    "request.stages[0].registration_id",
    "request.stages[1].name",
    "request.stages[1].ordinal",
    "request.stages[1].predecessor",
    "request.stages[1].registration_id",
    "request.stages[1].registration_id",
    "request.stages[2].extractor",
    "request.stages[2].registration_id",
  ]);
  const missing = await callTool(session, "compare_artifact_pipelines", { baseline_pipeline_id: "nope", candidate_pipeline_id: "nope" });
  expect(missing.envelope.error.code).toBe("INVALID_ARGUMENTS");
  expect(missing.envelope.error.details.missing_entity).toBe("pipeline");
});
