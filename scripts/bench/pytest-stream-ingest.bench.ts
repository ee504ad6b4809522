/**
 * Issue 4, pytest: a flameox pytest event stream (flameox.pytest-events.v1, the JSONL the plugin in
 * src/adapters/pytest/ writes) of BENCH_PYTEST_TESTS tests (default 100,000) through
 *   `flameox import --kind test_execution` and `flameox extract pytest <run>`,
 * with wall time, MiB/s and peak RSS of each child; then the latency of each analysis over one MCP
 * session (query_measurements, analyze_failures, summarize_evidence): median of BENCH_ANALYSIS_REPEATS
 * (default 3) calls, the first (cold) call reported on its own, with the 1-minute load average.
 *
 * The stream is a serial run as the plugin writes it: run_started, session_started, collection, one
 * test_collected per test, then per test its function-scoped fixture setups and setup/call/teardown
 * test_phase events (94% pass, 3% fail with one of 40 assertion messages, 2% skip, ~0.5% xfail/xpass,
 * ~0.3% setup errors), durations log-normal around 2 ms with a slow tail, then session_finished.
 * Generated once (streamed) and cached under .test-output/bench/.
 */
import { closeSync, existsSync, mkdirSync, openSync, renameSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import { connectMcp } from "../../test/support/binary.ts";
import { ingestStep, placeInProject, toolLatency } from "./lib/ingest-figures.ts";
import { benchOutput, binary, initProject, load1, measure, mebibytes, requireBinary, withTempFolder } from "./lib/measure.ts";
import { seededRandom as random } from "../../test/support/random.ts";

const tests = Number(process.env.BENCH_PYTEST_TESTS ?? 100_000);
const repeats = Number(process.env.BENCH_ANALYSIS_REPEATS ?? 3);
const rssGuardBytes = Number(process.env.BENCH_RSS_GUARD_MB ?? 12288) * (1 << 20);
const timeoutMs = Number(process.env.BENCH_INGEST_TIMEOUT_S ?? 900) * 1000;
const generatorVersion = 1;

function pytestStream(count: number): { path: string; bytes: number; generated_ms: number | null } {
  mkdirSync(benchOutput, { recursive: true });
  const path = join(benchOutput, `pytest-events-${count}-tests-v${generatorVersion}.jsonl`);
  if (existsSync(path)) return { path, bytes: statSync(path).size, generated_ms: null };
  const started = performance.now();
  const partial = `${path}.partial`;
  const handle = openSync(partial, "w");
  const next = random(count);
  let parts: string[] = [];
  let pending = 0;
  let clock = 1_760_000_000_000_000_000;
  const schema = "flameox.pytest-events.v1";
  // Keys sorted as the plugin's json.dumps(sort_keys=True) writes them.
  const line = (fields: Record<string, unknown>) => {
    const record = Object.fromEntries(Object.entries({ schema, ...fields }).sort(([left], [right]) => (left < right ? -1 : 1)));
    const text = `${JSON.stringify(record)}\n`;
    parts.push(text);
    pending += text.length;
    if (pending >= 4 << 20) {
      writeSync(handle, parts.join(""));
      parts = [];
      pending = 0;
    }
  };
  const at = (advance: number) => (clock += advance);
  const duration = () => Math.round(Math.exp(Math.log(2e6) + 1.1 * (next() + next() + next() - 1.5)) * (next() < 0.002 ? 400 : 1));
  const nodeids = Array.from({ length: count }, (_, index) => {
    const file = `tests/${["api", "core", "storage", "ui", "cli"][index % 5]}/test_module_${String(Math.floor(index / 50)).padStart(4, "0")}.py`;
    const parametrized = index % 7 === 0 ? `[case-${index % 13}]` : "";
    return `${file}::test_behaviour_${index % 50}${parametrized}`;
  });
  const messages = Array.from(
    { length: 40 },
    (_, index) =>
      `assert response.status_code == 200\nE       AssertionError: assert ${400 + index} == 200\nE        +  where ${400 + index} = <Response [${400 + index}]>.status_code\n\ntests/api/helpers.py:${100 + index}: AssertionError`,
  );
  line({
    event: "run_started",
    observed_at_ns: at(0),
    run_started_at_ns: clock,
    pytest_version: "8.4.2",
    python_version: "3.12.3",
    platform: "linux",
    scheduler: "no",
    requested_workers: null,
    worker_id: "controller",
  });
  line({ event: "session_started", observed_at_ns: at(20_000_000), worker_id: "controller" });
  line({ event: "collection_started", observed_at_ns: at(1_000_000), worker_id: "controller" });
  const collectionStart = clock;
  at(Math.round(count * 40_000));
  line({
    event: "collection_finished",
    observed_at_ns: clock,
    worker_id: "controller",
    duration_ns: clock - collectionStart,
    test_count: count,
  });
  for (const nodeid of nodeids) line({ event: "test_collected", observed_at_ns: at(50), nodeid });
  line({
    event: "fixture_setup",
    observed_at_ns: at(5_000_000),
    fixture: "database",
    scope: "session",
    nodeid: nodeids[0],
    duration_ns: 480_000_000,
    outcome: "passed",
    worker_id: "controller",
  });
  for (const nodeid of nodeids) {
    const roll = next();
    const kind =
      roll < 0.94
        ? "passed"
        : roll < 0.97
          ? "failed"
          : roll < 0.99
            ? "skipped"
            : roll < 0.9945
              ? "xfailed"
              : roll < 0.997
                ? "xpassed"
                : "error";
    const phase = (name: string, outcome: string, ns: number, extra: Record<string, unknown> = {}) => {
      const begin = clock;
      at(ns);
      line({
        event: "test_phase",
        observed_at_ns: at(30_000),
        nodeid,
        phase: name,
        outcome,
        duration_ns: ns,
        started_at_ns: begin,
        stopped_at_ns: begin + ns,
        worker_id: "controller",
        wasxfail: null,
        ...extra,
      });
    };
    if (next() < 0.2)
      line({
        event: "fixture_setup",
        observed_at_ns: at(200_000),
        fixture: next() < 0.5 ? "tmp_path" : "client",
        scope: "function",
        nodeid,
        duration_ns: 150_000 + Math.round(next() * 400_000),
        outcome: "passed",
        worker_id: "controller",
      });
    if (kind === "error") {
      phase("setup", "failed", 300_000, { message: "fixture 'client' raised ConnectionRefusedError: [Errno 111] Connection refused" });
      phase("teardown", "passed", 40_000);
      continue;
    }
    phase("setup", "passed", 60_000 + Math.round(next() * 200_000));
    if (kind === "skipped") phase("call", "skipped", 20_000, { message: undefined });
    else if (kind === "xfailed") phase("call", "skipped", duration(), { wasxfail: "known bug #1234" });
    else if (kind === "xpassed") phase("call", "passed", duration(), { wasxfail: "known bug #1234" });
    else if (kind === "failed") phase("call", "failed", duration(), { message: messages[Math.floor(next() * messages.length)] });
    else phase("call", "passed", duration());
    phase("teardown", "passed", 30_000 + Math.round(next() * 100_000));
  }
  line({ event: "session_finished", observed_at_ns: at(10_000_000), exit_status: 1, worker_id: "controller" });
  writeSync(handle, parts.join(""));
  closeSync(handle);
  renameSync(partial, path);
  return { path, bytes: statSync(path).size, generated_ms: Math.round(performance.now() - started) };
}

export async function run(): Promise<Record<string, unknown>> {
  requireBinary();
  const input = pytestStream(tests);
  return withTempFolder(
    "pytest-ingest-",
    async (project) => {
      initProject(project);
      const inside = join(project, "pytest-events.jsonl");
      placeInProject(input.path, inside);
      const loadImport = load1();
      const imported = await measure([binary, "import", inside, "--kind", "test_execution", "--json", "--project-root", project], {
        cwd: project,
        rssGuardBytes,
        timeoutMs,
      });
      const importFigures = { ...ingestStep(imported, input.bytes), load1: loadImport };
      if (imported.exitCode !== 0) return { tests, input_mb: mebibytes(input.bytes), flameox_import: importFigures };
      const receipt = JSON.parse(imported.stdout) as { run_id: string };
      const loadExtract = load1();
      const extracted = await measure([binary, "extract", "pytest", receipt.run_id, "--json", "--project-root", project], {
        cwd: project,
        rssGuardBytes,
        timeoutMs,
      });
      const extractFigures = { ...ingestStep(extracted, input.bytes), load1: loadExtract };
      let counts: unknown = null;
      if (extracted.exitCode === 0) counts = (JSON.parse(extracted.stdout) as { counts?: unknown }).counts ?? null;
      const session = await connectMcp(project);
      try {
        const analyses: Record<string, unknown> = {
          query_measurements_durations: await toolLatency(
            session,
            "query_measurements",
            { run_id: receipt.run_id, name_prefix: "test.duration_ns", limit: 100 },
            repeats,
          ),
          query_measurements_all: await toolLatency(session, "query_measurements", { run_id: receipt.run_id, limit: 1000 }, repeats),
          analyze_failures: await toolLatency(session, "analyze_failures", { limit: 20 }, repeats),
          summarize_evidence: await toolLatency(session, "summarize_evidence", { request: { run_ids: [receipt.run_id] } }, repeats),
        };
        return {
          tests,
          input_mb: mebibytes(input.bytes),
          input_generated_ms: input.generated_ms,
          extracted_counts: counts,
          flameox_import: importFigures,
          flameox_extract_pytest: extractFigures,
          analysis_repeats: repeats,
          analyses,
        };
      } finally {
        await session.close();
      }
    },
    benchOutput,
  );
}

if (import.meta.main) console.log(JSON.stringify(await run(), null, 2));
