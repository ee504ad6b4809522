/**
 * benchmark-samples v1: the smallest portable shape for measured values from any harness.
 *
 *   {
 *     "schema": "flameox.benchmark-samples.v1",
 *     "benchmarks": [
 *       { "name": "parse_small", "unit": "ns", "values": [1200, 1180], "warmups": [2400] }
 *     ]
 *   }
 *
 * name: 1..200 characters of [A-Za-z0-9._:/-] starting with a letter or digit, unique in the file.
 * unit: "ns", "us", "ms" or "s" (stored as ns), "bytes", "count" or "ratio".
 * values: at least one finite number ≥ 0 (a ratio may be any finite number); warmups: optional, same rules.
 * Unknown keys are refused so a typo never silently drops data.
 */
import { readFileSync } from "node:fs";
import { artifactParseFailed, type FlameoxError } from "../../domain/errors.ts";
import type { EvidenceSink } from "../../domain/evidence.ts";

export const benchmarkSamplesSchema = "flameox.benchmark-samples.v1";

const timeScale: Record<string, number> = { ns: 1, us: 1e3, ms: 1e6, s: 1e9 };
const otherUnits = new Set(["bytes", "count", "ratio"]);

export type BenchmarkSamplesSummary = {
  benchmarks: { name: string; unit: string; values: number; warmups: number }[];
  valueCount: number;
  warmupCount: number;
};

function parseFailed(message: string): FlameoxError {
  return artifactParseFailed(`benchmark-samples v1: ${message}`, {
    remediation: [
      `Write {"schema":"${benchmarkSamplesSchema}","benchmarks":[{"name","unit","values":[…],"warmups":[…]}]} (units ns|us|ms|s|bytes|count|ratio) and import it again with kind benchmark_samples.`,
    ],
  });
}

/** Cheap sniff: the schema marker near the start of the file. */
export function looksLikeBenchmarkSamples(path: string): boolean {
  try {
    const head = readFileSync(path, { encoding: "utf8" }).slice(0, 4096);
    return head.includes(benchmarkSamplesSchema);
  } catch {
    return false;
  }
}

export function extractBenchmarkSamples(path: string, sink: EvidenceSink): BenchmarkSamplesSummary {
  let document: unknown;
  try {
    document = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw parseFailed(`not readable JSON (${String(error).slice(0, 200)})`);
  }
  if (typeof document !== "object" || document === null || Array.isArray(document)) throw parseFailed("the top level is not an object");
  const root = document as Record<string, unknown>;
  const extra = Object.keys(root).filter((key) => key !== "schema" && key !== "benchmarks");
  if (extra.length > 0) throw parseFailed(`unknown top-level key(s) ${extra.join(", ")}`);
  if (root.schema !== benchmarkSamplesSchema)
    throw parseFailed(`schema is ${JSON.stringify(root.schema)}, expected ${benchmarkSamplesSchema}`);
  if (!Array.isArray(root.benchmarks) || root.benchmarks.length === 0) throw parseFailed("benchmarks must be a non-empty array");
  const summary: BenchmarkSamplesSummary = { benchmarks: [], valueCount: 0, warmupCount: 0 };
  const seen = new Set<string>();
  root.benchmarks.forEach((entry, index) => {
    if (typeof entry !== "object" || entry === null || Array.isArray(entry)) throw parseFailed(`benchmarks[${index}] is not an object`);
    const benchmark = entry as Record<string, unknown>;
    const unknown = Object.keys(benchmark).filter((key) => !["name", "unit", "values", "warmups"].includes(key));
    if (unknown.length > 0) throw parseFailed(`benchmarks[${index}] has unknown key(s) ${unknown.join(", ")}`);
    const name = benchmark.name;
    if (typeof name !== "string" || !/^[A-Za-z0-9][A-Za-z0-9._:/-]{0,199}$/.test(name))
      throw parseFailed(`benchmarks[${index}].name is missing or not allowed`);
    if (seen.has(name)) throw parseFailed(`benchmark '${name}' appears twice`);
    seen.add(name);
    const unit = benchmark.unit;
    if (typeof unit !== "string" || !(unit in timeScale || otherUnits.has(unit)))
      throw parseFailed(`benchmark '${name}' has unit ${JSON.stringify(unit)}; use ns, us, ms, s, bytes, count or ratio`);
    const scale = timeScale[unit];
    const storedUnit = scale !== undefined ? "ns" : unit;
    const list = (key: "values" | "warmups", required: boolean): number[] => {
      const raw = benchmark[key];
      if (raw === undefined && !required) return [];
      if (!Array.isArray(raw) || (required && raw.length === 0))
        throw parseFailed(`benchmark '${name}'.${key} must be ${required ? "a non-empty" : "an"} array`);
      return raw.map((value, position) => {
        if (typeof value !== "number" || !Number.isFinite(value) || (unit !== "ratio" && value < 0))
          throw parseFailed(`benchmark '${name}'.${key}[${position}] is not a valid number`);
        return scale !== undefined ? value * scale : value;
      });
    };
    const values = list("values", true);
    const warmups = list("warmups", false);
    const dimensions = JSON.stringify({ benchmark: name, source_unit: unit });
    warmups.forEach((value, valueIndex) =>
      sink.measurement({
        name: `benchmark.${name}`,
        value,
        unit: storedUnit,
        aggregation: "sample",
        is_warmup: true,
        worker: null,
        run_index: 0,
        value_index: valueIndex,
        phase: "warmup",
        dimensions,
      }),
    );
    values.forEach((value, valueIndex) =>
      sink.measurement({
        name: `benchmark.${name}`,
        value,
        unit: storedUnit,
        aggregation: "sample",
        is_warmup: false,
        worker: null,
        run_index: 0,
        value_index: valueIndex,
        phase: "steady_state",
        dimensions,
      }),
    );
    summary.benchmarks.push({ name, unit: storedUnit, values: values.length, warmups: warmups.length });
    summary.valueCount += values.length;
    summary.warmupCount += warmups.length;
  });
  return summary;
}
