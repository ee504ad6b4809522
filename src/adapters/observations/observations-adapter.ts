import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sha256Hex } from "../../domain/canonical-json.ts";
import { artifactParseFailed, type FlameoxError } from "../../domain/errors.ts";
import type { EvidenceSink } from "../../domain/evidence.ts";
import sdkSource from "./flameox_observations.py" with { type: "text" };

export const observationsFileName = "observations.jsonl";
export const observationsExtractorVersion = "flameox.observations@1";
const schema = "flameox.observations.v1";
const maxLineBytes = 16_384;

/** Every capture may carry observations: the workload's SDK writes where this variable points. */
export function observationsEnvironment(artifactDirectory: string): Record<string, string> {
  return { FLAMEOX_OBSERVATIONS_PATH: join(artifactDirectory, observationsFileName) };
}

export function writeObservationsSdk(baseDirectory: string): { directory: string; module: string } {
  const directory = join(baseDirectory, `observations-${sha256Hex(sdkSource).slice(0, 16)}`);
  mkdirSync(directory, { recursive: true });
  const module = join(directory, "flameox_observations.py");
  if (!existsSync(module)) {
    const temporary = `${module}.${process.pid}.${crypto.randomUUID()}.tmp`;
    writeFileSync(temporary, sdkSource);
    renameSync(temporary, module);
  }
  return { directory, module };
}

function parseFailed(message: string): FlameoxError {
  return artifactParseFailed(`observations: ${message}`, {
    remediation: ["Write observations only through flameox_observations (annotate / configuration) and capture again."],
  });
}

export type ObservationsSummary = { annotations: number; configurations: number };

export function extractObservations(path: string, sink: EvidenceSink): ObservationsSummary {
  let content: string;
  try {
    content = readFileSync(path, "utf8");
  } catch (error) {
    throw parseFailed(`cannot read ${path}: ${String(error)}`);
  }
  if (content.length > 0 && !content.endsWith("\n")) throw parseFailed("the file ends inside a line (truncated)");
  const summary: ObservationsSummary = { annotations: 0, configurations: 0 };
  const lines = content.split("\n");
  lines.pop();
  const allowedKeys = ["kind", "monotonic_ns", "name", "pid", "schema", "value"];
  lines.forEach((line, index) => {
    if (Buffer.byteLength(line) + 1 > maxLineBytes) throw parseFailed(`line ${index + 1} exceeds 16 KiB`);
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(line);
    } catch {
      throw parseFailed(`line ${index + 1} is not JSON`);
    }
    if (typeof record !== "object" || record === null || Object.keys(record).sort().join(",") !== allowedKeys.join(",")) {
      throw parseFailed(`line ${index + 1} does not have exactly the keys ${allowedKeys.join(", ")}`);
    }
    if (record.schema !== schema) throw parseFailed(`line ${index + 1} has schema ${JSON.stringify(record.schema)}`);
    if (record.kind !== "annotation" && record.kind !== "configuration")
      throw parseFailed(`line ${index + 1} has kind ${JSON.stringify(record.kind)}`);
    if (typeof record.name !== "string" || record.name.length === 0 || record.name.length > 200)
      throw parseFailed(`line ${index + 1} has a bad name`);
    sink.observation({
      kind: record.kind,
      name: record.name,
      file: null,
      lines: null,
      context: String(record.pid ?? ""),
      value: JSON.stringify({ value: record.value, monotonic_ns: record.monotonic_ns }),
    });
    if (record.kind === "annotation") summary.annotations += 1;
    else summary.configurations += 1;
  });
  return summary;
}
