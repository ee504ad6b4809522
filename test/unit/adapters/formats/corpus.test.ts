/**
 * Real third-party profiles (test/fixtures/formats/corpus, origins and licences in its README):
 * each is detected by its content as the format it is, and every function's self and total share
 * per unit agrees with scripts/oracles/profile_shares.py (written without flameox's code) within
 * 1e-6. Files flameox does not read are named with the step that would make them readable.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { detectProfileFormat } from "../../../../src/adapters/formats/detect.ts";
import { extractProfile } from "../../../../src/adapters/formats/extract-profile.ts";
import { formatRoute } from "../../../../src/adapters/formats/format-catalog.ts";
import { type FrameRow, MemoryEvidenceSink } from "../../../../src/domain/evidence.ts";
import { repositoryRoot, runCommand, venvPython } from "../../../fixtures/python/tools.ts";
import { corpusRoot, extractedCorpus, readableCorpus, recordedProfiles, unreadableCorpus } from "./corpus.ts";

setDefaultTimeout(60_000);

type UnitShares = { total: number; functions: Record<string, [number, number]> };

async function oracle(format: string, path: string): Promise<Record<string, UnitShares>> {
  const result = await runCommand([venvPython, join(repositoryRoot, "scripts", "oracles", "profile_shares.py"), format, path], {
    timeoutMs: 60_000,
  });
  if (result.exitCode !== 0) throw new Error(`oracle failed on ${path}: ${result.stderr}`);
  return (JSON.parse(result.stdout) as { units: Record<string, UnitShares> }).units;
}

/** Self and total weight per function name and unit, the way hotspots count them (total once per stack). */
function flameoxShares(sink: MemoryEvidenceSink): Record<string, UnitShares> {
  const units: Record<string, UnitShares> = {};
  for (const stack of sink.stacks) {
    if (stack.frame_keys.length === 0 || !(stack.weight > 0)) continue;
    const names = stack.frame_keys.map((key) => (sink.frames.get(key) as FrameRow).function);
    units[stack.unit] ??= { total: 0, functions: Object.create(null) as UnitShares["functions"] };
    const unit = units[stack.unit] as UnitShares;
    unit.total += stack.weight;
    const leaf = names[names.length - 1] as string;
    for (const name of new Set(names)) {
      unit.functions[name] ??= [0, 0];
      const entry = unit.functions[name] as [number, number];
      entry[1] += stack.weight;
      if (name === leaf) entry[0] += stack.weight;
    }
  }
  return units;
}

function expectSameShares(actual: Record<string, UnitShares>, expected: Record<string, UnitShares>): void {
  expect(Object.keys(actual).sort()).toEqual(Object.keys(expected).sort());
  for (const [unit, wanted] of Object.entries(expected)) {
    const got = actual[unit] as UnitShares;
    expect(Object.keys(got.functions).sort()).toEqual(Object.keys(wanted.functions).sort());
    const mismatches: string[] = [];
    for (const [name, [self, total]] of Object.entries(wanted.functions)) {
      const [gotSelf, gotTotal] = got.functions[name] as [number, number];
      const selfGap = Math.abs(gotSelf / got.total - self / wanted.total);
      const totalGap = Math.abs(gotTotal / got.total - total / wanted.total);
      if (!(selfGap < 1e-6 && totalGap < 1e-6)) mismatches.push(`${unit} ${name}: self gap ${selfGap}, total gap ${totalGap}`);
    }
    expect(mismatches).toEqual([]);
  }
}

describe("real third-party profiles agree with an independent oracle on every function's self and total share", () => {
  for (const [file, format] of [...readableCorpus, ...recordedProfiles]) {
    test(`${file} (${format})`, async () => {
      const path = join(corpusRoot, file);
      expect((await detectProfileFormat(path)).format).toBe(format as never);
      const sink = new MemoryEvidenceSink();
      const result = await extractProfile(path, sink, { projectRoot: null });
      expect(result.format).toBe(format as never);
      expect(sink.stacks.length).toBeGreaterThan(0);
      expectSameShares(flameoxShares(sink), await oracle(format, path));
    });
  }
});

describe("the rest of the corpus is named, with the step that makes it evidence", () => {
  for (const [file, format, tool] of extractedCorpus) {
    test(`${file} → ${format}, read by ${tool}`, async () => {
      const detected = await detectProfileFormat(join(corpusRoot, file));
      expect(detected.format).toBe(format as never);
      expect(formatRoute(detected.format as never).extractTool).toBe(tool);
    });
  }
  for (const [file, code, message] of unreadableCorpus) {
    test(`${file} → ${code}`, async () => {
      const detected = await detectProfileFormat(join(corpusRoot, file));
      expect(detected.format).toBe("unknown");
      expect(detected.advice).toMatchObject({ code, next_tool: "import_artifact" });
      expect(detected.advice?.message).toMatch(message);
    });
  }
});
