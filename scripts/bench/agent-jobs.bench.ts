/**
 * Issue 13: the eleven jobs an agent brings to flameox, counted the way the agent pays for them — tool
 * calls, calls that came back as errors (isError), and characters of the results' text content (with
 * structuredContent's characters beside them) — for this build and, when FLAMEOX_ORIGINAL names its
 * executable, for the Python original over its own MCP server (its own tool names, arguments and hints).
 *
 * Jobs (one fresh project per server, small real workloads, one server session for all jobs):
 *   cpu_hotspots (py-spy, from a workspace that does not exist yet), callers of the top hotspot,
 *   allocations and a leak (memray), pytest with a failing test, coverage, two pyperf benchmarks
 *   compared (candidate does 2x the work), a scaling sweep (quadratic loop), a torch.profiler CPU trace
 *   (the tools venv's torch; without it the job is skipped), a crashing script, an AddressSanitizer log
 *   (gcc -fsanitize=address; without gcc the job is skipped).
 * Every job checks that its answer states the expected fact (the hot function, its caller, the
 * allocating and the leaking function, the failing test, a missed line, "regressed", a growth exponent
 * of 2, the top operator, the exception type, the ASan error kind); a job whose answer lacks it counts
 * as unanswered, with the reason, for either server. A job that throws is reported with its error.
 *
 * The original prepares its profilers itself (prepare_providers, which needs `uvx` and a Python 3.12 on
 * PATH; FLAMEOX_ORIGINAL_PATH adds folders to the PATH it gets) and then asks to be relaunched; that
 * setup is done once before its jobs and reported on its own line, not inside a job. Its HOME is
 * .test-output/bench/agent-jobs/original-home so its caches survive between runs.
 *
 * Environment: FLAMEOX_BINARY (default dist/flameox), FLAMEOX_ORIGINAL (unset: ours only),
 * FLAMEOX_ORIGINAL_PATH, BENCH_AGENT_JOBS (comma-separated job ids, default all), BENCH_AGENT_JOBS_SIDE
 * (ours or original: one side only),
 * BENCH_AGENT_JOBS_TRANSCRIPT=1 writes every call and answer to .test-output/bench/agent-jobs/.
 * Prints the table on stderr; the figures are the returned object.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { layOutWorkloads } from "./lib/agent-job-workloads.ts";
import { type JobAnswer, type JobId, oursJobs } from "./lib/agent-jobs-ours.ts";
import { connectOriginal, originalJobs } from "./lib/agent-jobs-original.ts";
import { type CallRecord, CountingAgent } from "./lib/counting-agent.ts";
import { expectedFactOf, jobIds, jobQuestions, matchesFact } from "./lib/agent-job-facts.ts";
import { benchOutput, binary, requireBinary, toolsBin, withTempFolder } from "./lib/measure.ts";

const selected = (process.env.BENCH_AGENT_JOBS ?? "")
  .split(",")
  .map((id) => id.trim())
  .filter((id) => id !== "");
const original = process.env.FLAMEOX_ORIGINAL || null;
/** "ours" or "original" runs one side only (for working on one path); default both. */
const onlySide = process.env.BENCH_AGENT_JOBS_SIDE ?? null;
const transcript = process.env.BENCH_AGENT_JOBS_TRANSCRIPT === "1";
const outputFolder = join(benchOutput, "agent-jobs");

type JobFigures = {
  calls: number;
  errors: number;
  chars: number;
  structured_chars: number;
  answered: boolean;
  /** The expected name appears verbatim in the text the agent read (not only in structuredContent); null for a number. */
  fact_in_text: boolean | null;
  fact: string | number | null;
  note: string;
  tools: string[];
};

type SideFigures = { jobs: Partial<Record<JobId, JobFigures>>; totals: Record<string, number>; setup?: Record<string, unknown> };

function environment(extraPath: string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
  env.PATH = [...extraPath, process.env.PATH ?? ""].join(":");
  env.PYTHONDONTWRITEBYTECODE = "1";
  return env;
}

function figuresOf(calls: CallRecord[], texts: string[], answer: JobAnswer, id: JobId): JobFigures {
  const expected = expectedFactOf(id);
  return {
    calls: calls.length,
    errors: calls.filter((call) => call.is_error).length,
    chars: calls.reduce((sum, call) => sum + call.text_chars, 0),
    structured_chars: calls.reduce((sum, call) => sum + call.structured_chars, 0),
    answered: matchesFact(id, answer.fact),
    fact_in_text: typeof expected === "number" ? null : texts.some((text) => text.includes(expected)),
    fact: answer.fact,
    note: answer.note,
    tools: calls.map((call) => (call.is_error ? `${call.tool}!` : call.tool)),
  };
}

async function runJobs(
  side: "ours" | "original",
  agent: CountingAgent,
  paths: Record<JobId, (agent: CountingAgent) => Promise<JobAnswer>>,
  available: { sanitizerLog: boolean; torch: boolean },
): Promise<SideFigures> {
  const jobs: Partial<Record<JobId, JobFigures>> = {};
  const log: unknown[] = [];
  // A subset without the first job still needs the workspace it creates (not counted).
  if (side === "ours" && selected.length > 0 && !selected.includes("cpu_hotspots")) await agent.call("initialize_workspace");
  for (const id of jobIds) {
    if (selected.length > 0 && !selected.includes(id)) continue;
    if ((id === "asan_log" && !available.sanitizerLog) || (id === "torch_trace" && !available.torch)) continue;
    agent.startJob();
    let answer: JobAnswer;
    try {
      answer = await paths[id](agent);
    } catch (error) {
      answer = { fact: null, note: `failed: ${error instanceof Error ? error.message : String(error)}`.slice(0, 400) };
    }
    const { calls, texts, structured } = agent.startJob();
    jobs[id] = figuresOf(calls, texts, answer, id);
    log.push({ job: id, answer, calls, texts, structured });
    console.error(`agent-jobs: ${side} ${id}: ${calls.length} calls, answered ${jobs[id]!.answered} (${answer.note})`);
  }
  if (transcript) {
    mkdirSync(outputFolder, { recursive: true });
    writeFileSync(join(outputFolder, `transcript-${side}.json`), `${JSON.stringify(log, null, 1)}\n`);
  }
  const all = Object.values(jobs) as JobFigures[];
  return {
    jobs,
    totals: {
      jobs: all.length,
      answered: all.filter((job) => job.answered).length,
      calls: all.reduce((sum, job) => sum + job.calls, 0),
      errors: all.reduce((sum, job) => sum + job.errors, 0),
      chars: all.reduce((sum, job) => sum + job.chars, 0),
      structured_chars: all.reduce((sum, job) => sum + job.structured_chars, 0),
    },
  };
}

async function measureOurs(): Promise<SideFigures> {
  return withTempFolder("agent-jobs-ours-", async (project) => {
    const available = await layOutWorkloads(project);
    const env = environment([toolsBin]);
    env.FLAMEOX_CACHE_DIR = join(outputFolder, "cache");
    const agent = await CountingAgent.connect({ command: binary, args: ["mcp", "serve", "--project-root", project], cwd: project, env });
    try {
      return await runJobs("ours", agent, oursJobs, available);
    } finally {
      await agent.close();
    }
  });
}

/**
 * The folder of the Python installation the original's venv was made from: its managed providers are
 * built with `--python 3.12`, which uv resolves among installed interpreters only (not venvs, not pyenv
 * shims).
 */
function basePython(executable: string): string[] {
  const config = join(dirname(dirname(executable)), "pyvenv.cfg");
  if (!existsSync(config)) return [];
  const home = /^home\s*=\s*(.+)$/m.exec(readFileSync(config, "utf8"))?.[1]?.trim();
  return home ? [home] : [];
}

async function measureOriginal(executable: string): Promise<SideFigures> {
  return withTempFolder("agent-jobs-original-", async (project) => {
    const available = await layOutWorkloads(project);
    const home = join(outputFolder, "original-home");
    mkdirSync(home, { recursive: true });
    const extraPath = [...(process.env.FLAMEOX_ORIGINAL_PATH ?? "").split(":").filter((entry) => entry !== ""), ...basePython(executable)];
    const env = { ...environment(extraPath), HOME: home };
    const { agent, setup } = await connectOriginal(executable, project, env);
    try {
      return { ...(await runJobs("original", agent, originalJobs(project), available)), setup };
    } finally {
      await agent.close();
    }
  });
}

function cell(job: JobFigures | undefined): string {
  if (!job) return "—";
  return `${job.calls} / ${job.errors} / ${job.chars} (${job.structured_chars})${job.answered ? "" : " ✗"}`;
}

function table(ours: SideFigures, theirs: SideFigures | null): string {
  const rows = [
    "| job | ours: calls / errors / text chars (structured chars) | original 0.2.9: calls / errors / text chars (structured chars) |",
    "| --- | --- | --- |",
  ];
  for (const id of jobIds) {
    if (!ours.jobs[id] && !theirs?.jobs[id]) continue;
    rows.push(`| ${jobQuestions[id]} | ${cell(ours.jobs[id])} | ${theirs ? cell(theirs.jobs[id]) : "not run"} |`);
  }
  const total = (side: SideFigures) =>
    `${side.totals.calls} / ${side.totals.errors} / ${side.totals.chars} (${side.totals.structured_chars}); ${side.totals.answered} of ${side.totals.jobs} answered`;
  rows.push(`| **total** | ${total(ours)} | ${theirs ? total(theirs) : "not run"} |`);
  return `${rows.join("\n")}\n✗: the answer does not state the expected fact.`;
}

export async function run(): Promise<Record<string, unknown>> {
  requireBinary();
  const empty: SideFigures = { jobs: {}, totals: { jobs: 0, answered: 0, calls: 0, errors: 0, chars: 0, structured_chars: 0 } };
  const ours = onlySide === "original" ? empty : await measureOurs();
  const theirs = original && onlySide !== "ours" ? await measureOriginal(original) : null;
  console.error(table(ours, theirs));
  const unanswered = (side: SideFigures | null) =>
    side
      ? Object.entries(side.jobs)
          .filter(([, job]) => !job.answered)
          .map(([id, job]) => ({ job: id, fact: job.fact, note: job.note }))
      : null;
  return {
    ours,
    original: theirs,
    original_executable: original,
    unanswered: { ours: unanswered(ours), original: unanswered(theirs) },
    table: table(ours, theirs),
  };
}

if (import.meta.main) console.log(JSON.stringify(await run(), null, 2));
