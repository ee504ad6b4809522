/**
 * flameox's ShrinkRay interestingness test, run for real with the tools interpreter (it needs only the
 * standard library) against a real predicate: one attempt line per call, the native classification of
 * exit statuses, max_attempts answered without running the predicate, and revalidation outside the budget.
 */
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  parseAttemptLines,
  type ShrinkrayTestConfig,
  shellQuote,
  shrinkrayFiles,
  shrinkrayTestSource,
} from "../../../../src/adapters/shrinkray/shrinkray-engine.ts";
import { partitionArtifact } from "../../../../src/analysis/reduction/partitioners.ts";
import type { ReductionPartitioner } from "../../../../src/domain/requests/reductions.ts";
import { python } from "../../../support/project.ts";

setDefaultTimeout(60_000);

/** Exits 0 when the candidate holds "keep", 3 when it holds "slow" after sleeping past the timeout, else 1. */
const predicate = `import os, sys, time
data = open(os.environ["FLAMEOX_REDUCTION_CANDIDATE"], "rb").read()
print("judged", len(data), flush=True)
if b"slow" in data:
    time.sleep(30)
sys.exit(0 if b"keep" in data else 1)
`;

const scratchFolders: string[] = [];
afterAll(() => {
  for (const folder of scratchFolders) rmSync(folder, { recursive: true, force: true });
});

function harness(maxAttempts: number) {
  const scratch = mkdtempSync(join(tmpdir(), "flameox-srtest-"));
  scratchFolders.push(scratch);
  writeFileSync(join(scratch, "predicate.py"), predicate);
  writeFileSync(join(scratch, shrinkrayFiles.test), shrinkrayTestSource);
  const config: ShrinkrayTestConfig = {
    argv: [python(), "-S", "predicate.py"],
    cwd: scratch,
    environment: { PATH: process.env.PATH ?? "" },
    candidate_variable: "FLAMEOX_REDUCTION_CANDIDATE",
    predicate_timeout_seconds: 2,
    repetitions: 1,
    wall_deadline_ms: Date.now() + 60_000,
    max_attempts: maxAttempts,
    partitioner: "text_lines",
    original_units: 3,
    original_bytes: 15,
    output_budget_bytes: 1024,
    log: join(scratch, "attempts.jsonl"),
    state: join(scratch, "state.json"),
    lock: join(scratch, "lock"),
    best: join(scratch, "best.txt"),
    limit_marker: join(scratch, "limit-reached"),
    stdout: join(scratch, "out.txt"),
    stderr: join(scratch, "err.txt"),
  };
  writeFileSync(join(scratch, shrinkrayFiles.config), JSON.stringify(config));
  const judge = (content: string, extra: string[] = []) => {
    const candidate = join(scratch, "candidate.txt");
    writeFileSync(candidate, content);
    return Bun.spawnSync([python(), "-I", "-S", join(scratch, shrinkrayFiles.test), ...extra, candidate]).exitCode;
  };
  const attempts = () => parseAttemptLines(existsSync(config.log) ? readFileSync(config.log, "utf8") : "").attempts;
  return { scratch, config, judge, attempts };
}

test("each call is one attempt line with the native classification, the best candidate kept, and the predicate's output saved", () => {
  const { config, judge, attempts } = harness(100);
  expect(judge("a\nkeep\nb\nc\n")).toBe(0);
  expect(judge("a\nb\n")).toBe(1);
  expect(judge("keep\n")).toBe(0);
  expect(judge("keep slow\n")).toBe(1);
  const rows = attempts();
  expect(rows.map((row) => [row.attempt, row.classification, row.units, row.byte_length, row.became_best])).toEqual([
    [1, "interesting", 4, 11, true],
    [2, "not_interesting", 2, 4, false],
    [3, "interesting", 1, 5, true],
    [4, "timed_out", 1, 10, false],
  ]);
  expect(rows[0]!.exit_codes).toEqual([0]);
  expect(rows[1]!.exit_codes).toEqual([1]);
  expect(rows[3]!.exit_codes).toEqual([null]);
  expect(rows[0]!.candidate_digest).toBe(`sha256:${new Bun.CryptoHasher("sha256").update("a\nkeep\nb\nc\n").digest("hex")}`);
  expect(readFileSync(config.best, "utf8")).toBe("keep\n");
  expect(readFileSync(config.stdout, "utf8")).toBe("judged 10\n");
});

test("past max_attempts it answers not interesting without running the predicate; revalidation is outside the budget", () => {
  const { config, judge, attempts } = harness(2);
  expect(judge("keep\n")).toBe(0);
  expect(judge("keep\n")).toBe(0);
  expect(existsSync(config.limit_marker)).toBe(false);
  expect(judge("keep\n")).toBe(1);
  expect(existsSync(config.limit_marker)).toBe(true);
  expect(attempts()).toHaveLength(2);
  expect(judge("keep\n", ["--revalidate"])).toBe(0);
  const rows = attempts();
  expect(rows).toHaveLength(3);
  expect(rows[2]).toMatchObject({ attempt: 3, classification: "interesting", revalidation: true, became_best: false });
});

test("a predicate that cannot start is failed_to_run with the reason", () => {
  const { scratch, config, judge, attempts } = harness(10);
  writeFileSync(join(scratch, shrinkrayFiles.config), JSON.stringify({ ...config, argv: [join(scratch, "missing-executable")] }));
  expect(judge("keep\n")).toBe(1);
  expect(attempts()[0]).toMatchObject({ classification: "failed_to_run", exit_codes: [] });
  expect(attempts()[0]!.failure).toContain("FileNotFoundError");
});

test("ShrinkRay's TEST argument survives shlex splitting of paths with spaces and quotes", () => {
  expect(shellQuote("/plain/path.py")).toBe("/plain/path.py");
  const odd = "/tmp/a b/it's.py";
  const split = Bun.spawnSync([python(), "-c", "import shlex, sys; print(shlex.split(sys.argv[1])[0])", shellQuote(odd)]);
  expect(split.stdout.toString().trim()).toBe(odd);
});

test("a torn last line is left for the next read", () => {
  const whole = '{"attempt": 1, "classification": "interesting", "exit_codes": [0]}\n';
  const { attempts, consumed } = parseAttemptLines(`${whole}{"attempt": 2, "classif`);
  expect(attempts).toHaveLength(1);
  expect(consumed).toBe(whole.length);
});

/** Samples of every partitioner's format, with the edges where counting rules could part ways. */
const unitSamples: { partitioner: ReductionPartitioner; text: string | Uint8Array }[] = [
  { partitioner: "text_lines", text: "a\nb\nc\n" },
  { partitioner: "text_lines", text: "a\nb\nc" },
  { partitioner: "text_lines", text: "a\r\n\r\nb\r\n" },
  { partitioner: "text_lines", text: "\n\n\n" },
  { partitioner: "text_lines", text: new Uint8Array([0xff, 0x0a, 0xfe, 0x00, 0x0a, 0x80]) },
  { partitioner: "jsonl_records", text: '{"a":1}\n{"b":2}\n' },
  { partitioner: "jsonl_records", text: '{"a":1}\r\n\r\n  \n\t\n{"b":2}' },
  { partitioner: "jsonl_records", text: '\n\n[1]\n"x"\n  {"c": [1, 2]}  \n' },
  { partitioner: "json_top_level", text: "[1, [2, 3], {}, null]" },
  { partitioner: "json_top_level", text: '{"a": 1, "b": [1, 2], "c": {}}' },
  { partitioner: "json_top_level", text: '  {"a": 1, "a": 2, "__proto__": 3}\n' },
  { partitioner: "chrome_trace_events", text: '[{"ph":"B","ts":1},{"ph":"E","ts":2}]' },
  { partitioner: "chrome_trace_events", text: '{"traceEvents":[{"ph":"X","ts":1,"dur":2},{"ph":"i","ts":3}],"displayTimeUnit":"ms"}' },
  { partitioner: "chrome_trace_events", text: '{"otherData":{},"traceEvents":[{"ph":"M","name":"thread_name","args":{"name":"é"}}]}' },
];

test("the test script counts a candidate's units as the native partitioners do", () => {
  const { scratch } = harness(10);
  const samples = unitSamples.map((sample, index) => {
    const path = join(scratch, `units-${index}`);
    writeFileSync(path, sample.text);
    return { ...sample, path };
  });
  const probe = `import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("units", ${JSON.stringify(join(scratch, shrinkrayFiles.test))})
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
for kind, path in json.loads(sys.argv[1]):
    module.CONFIG["partitioner"] = kind
    print(module.units_of(open(path, "rb").read()))
`;
  const child = Bun.spawnSync([
    python(),
    "-I",
    "-S",
    "-c",
    probe,
    JSON.stringify(samples.map((sample) => [sample.partitioner, sample.path])),
  ]);
  expect(child.stderr.toString()).toBe("");
  const fromScript = child.stdout.toString().trim().split("\n").map(Number);
  const native = samples.map((sample) => partitionArtifact(sample.partitioner, readFileSync(sample.path)).unitCount);
  expect(native.every((count) => count > 0)).toBe(true);
  expect(fromScript).toEqual(native);
});
