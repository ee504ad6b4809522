/**
 * Every file of the real corpus (test/fixtures/formats/corpus), and every format flameox reads,
 * imported through the import service with no kind: it yields evidence at once, or its extract tool
 * yields it, or the receipt and the run carry a typed limitation naming the step to take. Nothing
 * ends as opaque collector_metadata with no next tool.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { gzipSync } from "node:zlib";
import type { ExtractionTool } from "../../../src/services/extraction-tools.ts";
import type { ImportReceipt } from "../../../src/services/import-service.ts";
import { corpusRoot, extractedCorpus, readableCorpus, unreadableCorpus } from "../../unit/adapters/formats/corpus.ts";
import { fixtures } from "../../unit/adapters/formats/helpers.ts";
import { project } from "./harness.ts";
import { projectImport } from "../../support/imports.ts";

setDefaultTimeout(120_000);

const workspace = project("import-corpus");

async function importFile(source: string, name = basename(source)): Promise<ImportReceipt> {
  const { root, services } = await workspace;
  copyFileSync(source, join(root, name));
  return services.imports.importArtifact(projectImport(name));
}

describe("every corpus file imports to evidence or to a typed limitation with its next step", () => {
  for (const [file, format] of readableCorpus) {
    test(`${file}: evidence at import (${format})`, async () => {
      const receipt = await importFile(join(corpusRoot, file), file.replaceAll("/", "-"));
      expect(receipt).toMatchObject({ format, evidence: { status: "available", next_tool: "analyze_hotspots" } });
      expect(receipt.evidence.tables.stacks).toBeGreaterThan(0);
      expect(receipt.kind).toBe("sample_profile");
    });
  }

  for (const [file, format, tool] of extractedCorpus) {
    test(`${file}: ${format}, evidence through ${tool}`, async () => {
      const receipt = await importFile(join(corpusRoot, file), file.replaceAll("/", "-"));
      expect(receipt).toMatchObject({ format, kind: "benchmark_samples", evidence: { status: "not_extracted", next_tool: tool } });
      const { services } = await workspace;
      const extracted = await services.extraction.extract(tool.replace("extract_", "") as ExtractionTool, { run_id: receipt.run_id });
      expect(extracted.tables.measurements).toBeGreaterThan(0);
    });
  }

  for (const [file, code] of unreadableCorpus) {
    test(`${file}: ${code} with its next step, on the receipt and the run`, async () => {
      const receipt = await importFile(join(corpusRoot, file), file.replaceAll("/", "-"));
      expect(receipt).toMatchObject({
        format: null,
        kind: "collector_metadata",
        evidence: { status: "not_extracted", next_tool: "import_artifact" },
      });
      expect(receipt.evidence.limitation_details).toEqual([expect.objectContaining({ source: "import", code })]);
      expect(receipt.evidence.limitations).toEqual(receipt.evidence.limitation_details.map((detail) => detail.message));
      const { services } = await workspace;
      const run = services.runs.getRun(receipt.run_id);
      expect(run.limitation_details).toEqual(receipt.evidence.limitation_details);
    });
  }
});

describe("the formats the issue found accepted silently are detected, compressed or not", () => {
  test("an Nsight Systems SQLite export goes to extract_nsight_systems, which yields its trace", async () => {
    const receipt = await importFile(join(fixtures, "..", "nsight-systems", "nsight-2025.5.2.sqlite"), "report.sqlite");
    expect(receipt).toMatchObject({
      format: "nsight_sqlite",
      kind: "execution_trace",
      producer: "nsight-systems",
      evidence: { status: "not_extracted", next_tool: "extract_nsight_systems", limitations: [] },
    });
    const { services } = await workspace;
    const extracted = await services.extraction.extract("nsight_systems", { run_id: receipt.run_id });
    expect(extracted.tables.trace_events).toBeGreaterThan(0);
  });

  test("a torch.profiler .json.gz trace and a .cpuprofile.gz are read at import", async () => {
    const trace = await importFile(join(fixtures, "kineto", "rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"));
    expect(trace).toMatchObject({
      format: "chrome_trace",
      kind: "execution_trace",
      producer: "torch.profiler",
      evidence: { status: "available" },
    });
    const { root } = await workspace;
    writeFileSync(join(root, "busy.cpuprofile.gz"), gzipSync(readFileSync(join(fixtures, "node-busy.cpuprofile"))));
    const receipt = await importFile(join(root, "busy.cpuprofile.gz"));
    expect(receipt).toMatchObject({ format: "v8_cpuprofile", evidence: { status: "available" } });
  });

  test("a profile imported under a kind that is not read as one says how to import it", async () => {
    const { root, services } = await workspace;
    copyFileSync(join(fixtures, "py-spy.raw.txt"), join(root, "raw.txt"));
    const receipt = await services.imports.importArtifact(projectImport("raw.txt", "collector_metadata"));
    expect(receipt).toMatchObject({ format: "py_spy_raw", evidence: { status: "not_extracted", next_tool: "import_artifact" } });
    expect(receipt.evidence.limitation_details[0]).toMatchObject({ code: "kind_not_read" });
    expect(receipt.evidence.limitations[0]).toContain("kind=sample_profile");
  });
});
