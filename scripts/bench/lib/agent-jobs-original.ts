/**
 * The same eleven jobs as the Python original (flameox 0.2.9) answers them over its own MCP server: its
 * own tool names (checked against its tools/list), arguments and hints. Its capture tools take an
 * explicit argv and an absolute cwd and answer in the same call; its analysis tools read artifact paths.
 * Where its answer says something only as raw text (a preview of a log's lines), the fact is read from
 * that text and the note says so. The original is only run, never read: everything here comes from its
 * tools/list, `flameox mcp inspect` and its answers. Not a benchmark module itself.
 */
import { expectedFacts, python, scalingSizes } from "./agent-job-workloads.ts";
import type { JobAnswer, JobId, JobPath } from "./agent-jobs-ours.ts";
import { CountingAgent, type ToolAnswer } from "./counting-agent.ts";

type Launcher = { command: string; args: string[] };

/** Every tool the paths below call: a release that lacks one fails that job with the name. */
const usedTools = [
  "prepare_providers",
  "capture_and_rank_cpu_hotspots",
  "inspect_cpu_callers",
  "capture_and_rank_allocation_hotspots",
  "capture_and_rank_retained_memory",
  "capture_and_summarize_failures",
  "capture_and_summarize_coverage",
  "capture_and_summarize_benchmarks",
  "capture_and_analyze_benchmark_scaling",
  "capture_and_summarize_pytorch_trace",
  "capture_and_preview_artifact",
  "preview_artifact",
];

/**
 * Starts the original and prepares the profilers its CPU and memory jobs need, as its own hints ask
 * (prepare_providers, then a relaunch with the launcher it names). Counted apart from the jobs.
 */
export async function connectOriginal(
  executable: string,
  project: string,
  env: Record<string, string>,
): Promise<{ agent: CountingAgent; setup: Record<string, unknown> }> {
  const agent = await CountingAgent.connect({ command: executable, args: ["mcp", "serve"], cwd: project, env });
  const tools = await agent.toolNames();
  const missing = usedTools.filter((tool) => !tools.includes(tool));
  agent.startJob();
  const prepared = await agent.call("prepare_providers", { provider_ids: ["py-spy", "memray"] });
  const launcher = launcherOf(prepared);
  if (launcher) await agent.reconnect({ ...launcher, cwd: project, env });
  const { calls } = agent.startJob();
  originalState.project = project;
  originalState.env = env;
  return {
    agent,
    setup: {
      tool_count: tools.length,
      missing_tools: missing,
      calls: calls.length,
      errors: calls.filter((call) => call.is_error).length,
      chars: calls.reduce((sum, call) => sum + call.text_chars, 0),
      relaunched_with: launcher ? [launcher.command, ...launcher.args].join(" ") : null,
      outcome: prepared.json?.status ?? prepared.json?.code ?? null,
    },
  };
}

const originalState: { project: string; env: Record<string, string> } = { project: "", env: {} };

function launcherOf(answer: ToolAnswer): Launcher | null {
  const next = answer.json?.next_action;
  if (next?.kind !== "reconnect_mcp" || !next.launcher?.command) return null;
  return { command: String(next.launcher.command), args: (next.launcher.args ?? []).map(String) };
}

/**
 * Calls a tool and follows the original's own recovery when it says a provider is missing: the tool its
 * next_action names, a relaunch if that asks for one, then the same call again (all counted).
 */
async function call(agent: CountingAgent, tool: string, args: Record<string, unknown>): Promise<ToolAnswer> {
  const first = await agent.call(tool, args);
  const next = first.json?.next_action;
  if (first.json?.code !== "UNAVAILABLE_CAPABILITY" || next?.kind !== "call_tool") return first;
  const recovery = await agent.call(String(next.tool), next.arguments ?? {});
  const launcher = launcherOf(recovery);
  if (launcher) await agent.reconnect({ ...launcher, cwd: originalState.project, env: originalState.env });
  return agent.call(tool, args);
}

/** The rows of the answer's table block (its analyses answer in blocks of metrics and tables). */
function tables(answer: ToolAnswer): any[][] {
  return (answer.json?.blocks ?? []).filter((block: any) => block.type === "table").map((block: any) => block.rows ?? []);
}

function metrics(answer: ToolAnswer): Record<string, unknown>[] {
  return (answer.json?.blocks ?? []).filter((block: any) => block.type === "metrics").map((block: any) => block.values ?? {});
}

function why(answer: ToolAnswer): string {
  const json = answer.json ?? {};
  const failure = json.analysis_failure?.message ?? json.message ?? null;
  const limitation = (json.limitations ?? []).find((entry: string) => !entry.startsWith("Observed artifact contents")) ?? null;
  return [json.status, failure, limitation]
    .filter((part) => part)
    .join("; ")
    .slice(0, 300);
}

/** The row whose `field` is largest (its memory tables rank memray's own frames first, by inclusive bytes). */
function largest(rows: any[], field: string): any {
  return rows.reduce((best, row) => (best === null || Number(row[field]) > Number(best[field]) ? row : best), null);
}

function target(project: string, argv: string[]): Record<string, unknown> {
  return { argv, cwd: project };
}

export function originalJobs(project: string): Record<JobId, JobPath> {
  let cpuProfile: { path: string; format: string; top: string } | null = null;
  return {
    async cpu_hotspots(agent) {
      const answer = await call(agent, "capture_and_rank_cpu_hotspots", {
        target: target(project, [python, "hot.py", "1.5"]),
        provider: { kind: "py-spy" },
      });
      const top = largest(tables(answer)[0] ?? [], "self_weight");
      const input = answer.json?.inputs?.[0];
      if (top && input) cpuProfile = { path: input.path, format: input.format, top: top.function };
      return { fact: top?.function ?? null, note: top ? "top self_weight row" : why(answer) };
    },

    async callers(agent) {
      if (!cpuProfile) return { fact: null, note: "no CPU profile from the hotspot job" };
      const answer = await call(agent, "inspect_cpu_callers", {
        sources: [{ kind: "path", path: cpuProfile.path, format: cpuProfile.format }],
        function: cpuProfile.top,
        direction: "callers",
      });
      const edge = largest(tables(answer)[0] ?? [], "weight");
      return { fact: edge?.caller_function ?? null, note: edge ? "heaviest caller edge of the profile from the hotspot job" : why(answer) };
    },

    async allocations(agent) {
      const answer = await call(agent, "capture_and_rank_allocation_hotspots", {
        target: target(project, [python, "allocate.py"]),
        provider: { kind: "memray" },
      });
      const rows = tables(answer)[0] ?? [];
      const top = largest(rows, "self_bytes");
      return {
        fact: top?.function ?? null,
        note: top ? `largest self_bytes row (rank ${top.rank}; rank 1 is ${rows[0]?.function})` : why(answer),
      };
    },

    async leak(agent) {
      const answer = await call(agent, "capture_and_rank_retained_memory", {
        target: target(project, [python, "leak.py"]),
        provider: { kind: "memray" },
      });
      const rows = tables(answer)[0] ?? [];
      const top = largest(rows, "self_bytes");
      return {
        fact: top?.function ?? null,
        note: top ? `largest retained self_bytes row (rank ${top.rank}; rank 1 is ${rows[0]?.function})` : why(answer),
      };
    },

    async pytest(agent) {
      const answer = await call(agent, "capture_and_summarize_failures", {
        target: target(project, [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "suite"]),
        provider: { kind: "pytest" },
      });
      const failed = (tables(answer)[0] ?? []).find((row) => row.classification === "failed");
      return { fact: failed?.nodeid ?? null, note: failed ? "failed row" : why(answer) };
    },

    async coverage(agent) {
      const answer = await call(agent, "capture_and_summarize_coverage", {
        target: target(project, [python, "branches.py"]),
        provider: { kind: "coverage" },
      });
      const rows = tables(answer)[0] ?? [];
      const missed = rows.filter((row) => row.kind !== "line_hit" && String(row.file).endsWith("branches.py")).map((row) => row.line_from);
      const hit = rows.filter((row) => row.kind === "line_hit").map((row) => row.line_from);
      return {
        fact: missed.includes(expectedFacts.missed_line) ? expectedFacts.missed_line : null,
        note:
          missed.length > 0
            ? `missed rows ${JSON.stringify(missed)}`
            : `lists executed lines only (${JSON.stringify(hit)}); no missed line`,
      };
    },

    async benchmark_compare(agent) {
      // Its randomized paired experiment: the first case is the baseline; every design field is required.
      const answer = await call(agent, "capture_and_summarize_benchmarks", {
        target: target(project, [python, "bench.py", "base"]),
        provider: { kind: "pyperf" },
        experiment: {
          cases: [
            { name: "base", argv: [python, "bench.py", "base"] },
            { name: "candidate", argv: [python, "bench.py", "candidate"] },
          ],
          blocks: 10,
          seed: 0,
          metric: "wall_time_ns",
          estimand: "median_difference",
          practical_threshold: 0,
        },
      });
      const row = tables(answer)
        .flat()
        .find((entry) => entry.candidate_case === "candidate");
      if (!row) return { fact: null, note: why(answer) };
      const classification = String(row.point_estimate_classification ?? "");
      // Its classification describes the point estimate only; a verdict also needs the interval to exclude 0.
      const decisive = row.confidence_low !== null && Number(row.confidence_low) > 0;
      const fact = classification === "practically_regressed" && decisive ? "regressed" : classification;
      const basis = metrics(answer).find((values) => "decision_basis" in values)?.decision_basis;
      return {
        fact,
        note: `${classification} (${basis}), median difference ${row.estimate} ns, ${row.confidence_level} interval [${row.confidence_low}, ${row.confidence_high}]`,
      };
    },

    async scaling(agent) {
      const [first, ...rest] = scalingSizes;
      const answer = await call(agent, "capture_and_analyze_benchmark_scaling", {
        target: target(project, [python, "scale.py", String(first)]),
        provider: { kind: "pyperf" },
        input_dimension: "n",
        experiment: {
          cases: [first!, ...rest].map((size) => ({ name: `n=${size}`, argv: [python, "scale.py", String(size)] })),
          blocks: 3,
          seed: 0,
          metric: "wall_time_ns",
          estimand: "median_difference",
          practical_threshold: 0,
        },
      });
      const fitted = tables(answer)
        .flat()
        .find((row) => row.exponent !== undefined && row.exponent !== null);
      if (!fitted) {
        const status =
          tables(answer)
            .flat()
            .find((row) => row.status)?.reason ?? why(answer);
        return { fact: null, note: `no fit: ${status}` };
      }
      const exponent = Number(fitted.exponent);
      return {
        fact: Math.abs(exponent - 2) < 0.35 ? expectedFacts.scaling_model : `exponent ${exponent}`,
        note: `power-law exponent ${exponent}`,
      };
    },

    async torch_trace(agent) {
      const answer = await call(agent, "capture_and_summarize_pytorch_trace", {
        target: target(project, [python, "matmul.py"]),
        provider: { kind: "torch-profiler" },
      });
      const rows = tables(answer).flat();
      const top = rows.find((row) => typeof row.name === "string" && row.name.startsWith("aten::"));
      return { fact: top?.name ?? null, note: top ? "first aten:: row" : why(answer) };
    },

    async crash(agent) {
      const answer = await call(agent, "capture_and_preview_artifact", {
        target: target(project, [python, "crash.py"]),
        provider: { kind: "direct" },
      });
      const lines: string[] = tables(answer)
        .flat()
        .map((row) => String(row.text ?? ""));
      const last = lines.filter((line) => /^[A-Za-z_][\w.]*(Error|Exception): /.test(line)).pop();
      return { fact: last ? last.split(":")[0]! : null, note: last ? `raw stderr lines: ${last}` : why(answer) };
    },

    async asan_log(agent) {
      const answer = await call(agent, "preview_artifact", { sources: [{ kind: "path", path: `${project}/asan.log`, format: "text" }] });
      const lines: string[] = tables(answer)
        .flat()
        .map((row) => String(row.text ?? ""));
      const match = lines.map((line) => /ERROR: AddressSanitizer: ([\w-]+)/.exec(line)).find((found) => found !== null);
      return { fact: match?.[1] ?? null, note: match ? "raw text lines of the log (no sanitizer parser)" : why(answer) };
    },
  } satisfies Record<JobId, JobPath> as Record<JobId, (agent: CountingAgent) => Promise<JobAnswer>>;
}
