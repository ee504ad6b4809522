import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { type ProfileFormat, detectProfileFormat } from "../../../../src/adapters/formats/detect.ts";
import { extractProfile } from "../../../../src/adapters/formats/extract-profile.ts";
import { MemoryEvidenceSink } from "../../../../src/domain/evidence.ts";
import { FlameoxError } from "../../../../src/domain/errors.ts";
import { fixtures, tempDir } from "./helpers.ts";
import { seededRandom as random } from "../../../support/random.ts";

/** Truncations, byte flips, NUL and invalid UTF-8, extreme numbers, deep nesting, a gzip of the original. */
function mutants(original: Buffer, seed: number): [string, Buffer][] {
  const next = random(seed);
  const text = original.toString("latin1");
  const out: [string, Buffer][] = [];
  for (const fraction of [0.01, 0.3, 0.5, 0.9, 0.999])
    out.push([`cut at ${fraction}`, original.subarray(0, Math.floor(original.length * fraction))]);
  for (let index = 0; index < 12; index++) {
    const copy = Buffer.from(original);
    const at = Math.floor(next() * copy.length);
    copy[at] = Math.floor(next() * 256);
    out.push([`byte ${at} flipped`, copy]);
  }
  out.push([
    "NUL inside",
    Buffer.concat([original.subarray(0, original.length >> 1), Buffer.from([0]), original.subarray(original.length >> 1)]),
  ]);
  out.push([
    "invalid UTF-8",
    Buffer.concat([original.subarray(0, original.length >> 2), Buffer.from([0xff, 0xfe, 0xc3]), original.subarray(original.length >> 2)]),
  ]);
  for (const extreme of ["1e308", "-1", "-1e308", "18446744073709551615", "0.000000001"]) {
    out.push([
      `numbers → ${extreme}`,
      Buffer.from(
        text.replace(/(?<=[:,[ ])\d+(\.\d+)?(?=[,\]} \n])/g, (match) => (next() < 0.2 ? extreme : match)),
        "latin1",
      ),
    ]);
  }
  out.push(["wrapped 50,000 deep", Buffer.from(`${"[".repeat(50_000)}${text}${"]".repeat(50_000)}`, "latin1")]);
  out.push(["gzip-compressed", gzipSync(original)]);
  return out;
}

const originals = [
  "py-spy.speedscope.json",
  "py-spy.raw.txt",
  "py-spy.chrometrace.json",
  "node-busy.cpuprofile",
  "devtools/chrome-141-no-arg-data.json",
  "devtools/multi-thread-with-samples.json",
  "kineto/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",
  "perf/hot.perf.txt",
  "pstats/busy.pstats",
  "corpus/speedscope/Firefox-63-simple-firefox.json",
  "corpus/firefox-profiler/processed-3.json",
  "corpus/speedscope/stackprof-simple-cpu-stackprof.json",
  "corpus/speedscope/haskell-simple.prof",
  "corpus/flamegraph/perf-dd-stacks-01.txt",
  "corpus/google-pprof/sample.cpu.pb",
];

/** Formats whose every prefix is itself a valid file of fewer samples. */
const readsWhatIsThere = new Set(["perf/hot.perf.txt", "corpus/flamegraph/perf-dd-stacks-01.txt"]);

describe("mutants of every format end in evidence or a typed error, never anything else", () => {
  for (const name of originals) {
    test(name, async () => {
      const { dir, cleanup } = tempDir();
      try {
        const original = readFileSync(join(fixtures, name));
        const format = (await detectProfileFormat(join(fixtures, name))).format;
        expect(format).not.toBe("unknown");
        let typed = 0;
        const totalWeight = (sink: MemoryEvidenceSink) => sink.stacks.reduce((sum, row) => sum + row.weight, 0);
        const whole = new MemoryEvidenceSink();
        await extractProfile(join(fixtures, name), whole, { projectRoot: null, format: format as ProfileFormat });
        const cutWeights: number[] = [];
        for (const [index, [label, bytes]] of mutants(original, name.length).entries()) {
          const path = join(dir, `mutant-${index}${name.slice(name.lastIndexOf("."))}`);
          writeFileSync(path, bytes);
          const sink = new MemoryEvidenceSink();
          const outcome = await extractProfile(path, sink, {
            projectRoot: null,
            format: format as ProfileFormat,
          }).then(
            () => "evidence",
            (error: unknown) => error,
          );
          if (outcome === "evidence") {
            if (label.startsWith("cut at ")) cutWeights.push(totalWeight(sink));
            continue;
          }
          if (!(outcome instanceof FlameoxError)) throw new Error(`${name}, ${label}: ${String(outcome)}`);
          expect(["ARTIFACT_PARSE_FAILED", "ARTIFACT_TOO_LARGE"]).toContain(outcome.code);
          typed++;
        }
        // The truncations alone guarantee refusals; a test that only ever succeeded would prove nothing.
        // `perf script` text is read sample by sample: a cut file is the samples before the cut, so no cut
        // gives more than the whole file (a cut in the last newline loses nothing) and the shortest gives less.
        if (!readsWhatIsThere.has(name)) expect(typed).toBeGreaterThan(0);
        else {
          expect(cutWeights.length).toBeGreaterThan(0);
          for (const weight of cutWeights) expect(weight).toBeLessThanOrEqual(totalWeight(whole));
          expect(Math.min(...cutWeights)).toBeLessThan(totalWeight(whole));
        }
      } finally {
        cleanup();
      }
    }, 60_000);
  }
});
