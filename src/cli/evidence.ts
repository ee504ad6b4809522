import { defineCommand, type CommandDef } from "citty";
import { invalidInput } from "../domain/errors.ts";
import type { EvidenceRefType } from "../services/evidence-service.ts";
import { cliOptions, cliServices } from "./context.ts";
import { emit, renderTable } from "./output.ts";
import { pageLimits } from "../domain/requests/limits.ts";
import { limitArgument, limitOf, pageArguments, pageOf } from "./arguments.ts";

function text(value: unknown): string | null {
  return typeof value === "string" && value.length > 0 ? value : null;
}

function integer(value: unknown, field: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0) {
    throw invalidInput(
      `${field} must be a non-negative integer.`,
      [{ field, message: "must be a non-negative integer", type: "int_type" }],
      {
        remediation: [`Pass --${field.replace("_", "-")} as nanoseconds.`],
      },
    );
  }
  return number;
}

const milliseconds = (ns: number) => (ns / 1e6).toFixed(3);

/** `flameox analyze memory|execution|pytorch|accelerator-launches|failures`. */
export const moreAnalyzeCommands: Record<string, CommandDef> = {
  memory: defineCommand({
    meta: { name: "memory", description: "Peak, retained and total allocated memory; functions holding the most bytes." },
    args: {
      run_or_artifact: { type: "positional", required: true, description: "Run id or artifact id." },
      ...pageArguments(pageLimits.memory),
    },
    async run({ args }) {
      const result = await cliServices().memoryAnalysis.analyze({
        run_or_artifact: String(args.run_or_artifact),
        ...pageOf(args, pageLimits.memory),
      });
      emit(cliOptions(), result, () =>
        [
          `peak ${result.peak_bytes ?? "–"} bytes · retained ${result.retained_bytes ?? "–"} · allocated ${result.total_allocated_bytes ?? "–"} (${result.allocation_count ?? "–"} allocations) · process peak RSS ${result.process_peak_rss_bytes ?? "–"}`,
          renderTable(
            result.top_allocations.map((hotspot) => ({
              bytes: hotspot.self_weight,
              share: `${(hotspot.self_share * 100).toFixed(1)}%`,
              function: hotspot.function,
              location: hotspot.file ? `${hotspot.file}:${hotspot.line ?? ""}` : "",
            })),
            ["bytes", "share", "function", "location"],
          ),
        ].join("\n"),
      );
    },
  }) as CommandDef,
  execution: defineCommand({
    meta: {
      name: "execution",
      description:
        "Covered and missed statements per file (coverage), most missed first; --compare-to shows what differs from a second run.",
    },
    args: {
      run_or_artifact: { type: "positional", required: true, description: "Run id or artifact id." },
      limit: limitArgument(pageLimits.execution, "Files"),
      cursor: { type: "string", description: "next_cursor of the previous page." },
      "compare-to": { type: "string", alias: "compare", description: "A second run or artifact id." },
    },
    async run({ args }) {
      const result = await cliServices().executionAnalysis.analyze({
        run_or_artifact: String(args.run_or_artifact),
        limit: limitOf(args.limit, pageLimits.execution),
        comparison_run_or_artifact: text(args["compare-to"]),
        cursor: text(args.cursor),
      });
      emit(cliOptions(), result, () =>
        result.differences
          ? renderTable(
              result.differences.map((difference) => ({
                file: difference.file,
                only_base: difference.lines_only_in_base.join(","),
                only_comparison: difference.lines_only_in_comparison.join(","),
              })),
              ["file", "only_base", "only_comparison"],
            )
          : renderTable(
              result.files.map((file) => ({
                file: file.file,
                statements: file.statement_count ?? "?",
                missed: file.missed_line_count ?? "?",
                cover: file.percent_covered === null ? "?" : `${file.percent_covered}%`,
                missing: file.missed_line_ranges ?? "unknown",
              })),
              ["file", "statements", "missed", "cover", "missing"],
            ),
      );
    },
  }) as CommandDef,
  pytorch: defineCommand({
    meta: { name: "pytorch", description: "PyTorch operators by self or total time, shapes, allocations, CPU vs accelerator time." },
    args: {
      run_or_artifact: { type: "positional", required: true, description: "Run id or artifact id." },
      ...pageArguments(pageLimits.pytorch),
      "order-by": { type: "string", default: "self", description: "self | total" },
    },
    async run({ args }) {
      const result = await cliServices().traceAnalysis.pytorch({
        run_or_artifact: String(args.run_or_artifact),
        ...pageOf(args, pageLimits.pytorch),
        order_by: args["order-by"] === "total" ? "total" : "self",
      });
      emit(cliOptions(), result, () =>
        [
          renderTable(
            result.operators.map((operator) => ({
              rank: operator.rank,
              operator: operator.name,
              calls: operator.calls,
              self_ms: milliseconds(operator.self_ns),
              total_ms: milliseconds(operator.total_ns),
              shapes: operator.shapes.slice(0, 2).join(" "),
            })),
            ["rank", "operator", "calls", "self_ms", "total_ms", "shapes"],
          ),
          `allocated ${result.allocations.allocated_bytes} bytes in ${result.allocations.allocation_count} allocations · CPU operator self ${milliseconds(result.time_split.cpu_operator_self_ns)} ms · accelerator ${milliseconds(result.time_split.accelerator_ns)} ms (${result.time_split.kernel_count} kernels)`,
        ].join("\n"),
      );
    },
  }) as CommandDef,
  "accelerator-launches": defineCommand({
    meta: {
      name: "accelerator-launches",
      description: "Runtime and graph launches, kernels, per-stream idle gaps and correlation coverage.",
    },
    args: {
      run_or_artifact: { type: "positional", required: true, description: "Run id or artifact id." },
      limit: limitArgument(pageLimits.acceleratorLaunches, "Launch regions"),
      "compare-to": { type: "string", description: "A second run or artifact id." },
      phase: { type: "string", description: "Only inside this phase annotation." },
    },
    async run({ args }) {
      const result = await cliServices().traceAnalysis.acceleratorLaunches({
        run_or_artifact: String(args.run_or_artifact),
        limit: limitOf(args.limit, pageLimits.acceleratorLaunches),
        comparison_run_or_artifact: text(args["compare-to"]),
        phase: text(args.phase),
      });
      emit(cliOptions(), result, () =>
        [
          `${result.evidence.status}: ${result.evidence.reason}`,
          `launches ${result.summary.runtime_launches} (+${result.summary.graph_launches} graph) · kernels ${result.summary.kernels} · correlation ${result.summary.correlation_coverage === null ? "–" : `${(result.summary.correlation_coverage * 100).toFixed(1)}%`}`,
          renderTable(
            result.launch_regions.map((region) => ({
              kind: region.kind,
              name: region.name,
              count: region.count,
              total_ms: milliseconds(region.total_ns),
            })),
            ["kind", "name", "count", "total_ms"],
          ),
        ].join("\n"),
      );
    },
  }) as CommandDef,
  failures: defineCommand({
    meta: { name: "failures", description: "Failure clusters across runs and extracted test outcomes." },
    args: {
      limit: limitArgument(pageLimits.failures, "Clusters"),
      workload: { type: "string", description: "Only runs of this workload." },
      adapter: { type: "string", description: "Only runs of this adapter." },
    },
    async run({ args }) {
      const result = await cliServices().failureAnalysis.analyze({
        limit: limitOf(args.limit, pageLimits.failures),
        filter: { workload_name: text(args.workload), adapter: text(args.adapter) },
      });
      emit(cliOptions(), result, () =>
        renderTable(
          result.clusters.map((cluster) => ({
            count: cluster.count,
            runs: cluster.run_count,
            source: cluster.source,
            signature: cluster.signature,
          })),
          ["count", "runs", "source", "signature"],
        ),
      );
    },
  }) as CommandDef,
};

export const traceCommand = defineCommand({
  meta: { name: "trace", description: "Trace events of one artifact." },
  subCommands: {
    window: defineCommand({
      meta: { name: "window", description: "Events overlapping [start, end) nanoseconds, in time order." },
      args: {
        artifact_id: { type: "positional", required: true, description: "Artifact id (sha256:…)." },
        "start-ns": { type: "string", alias: "start", required: true, description: "Window start (ns)." },
        "end-ns": { type: "string", alias: "end", required: true, description: "Window end (ns), greater than start." },
        ...pageArguments(pageLimits.traceWindow),
      },
      async run({ args }) {
        const result = await cliServices().traceAnalysis.window({
          artifact_id: String(args.artifact_id),
          start_ns: integer(args["start-ns"], "start_ns"),
          end_ns: integer(args["end-ns"], "end_ns"),
          ...pageOf(args, pageLimits.traceWindow),
        });
        emit(cliOptions(), result, () =>
          renderTable(
            result.events.map((event) => ({
              ts_ns: event.ts_ns,
              dur_ns: event.dur_ns,
              depth: event.depth,
              category: event.category,
              name: event.name,
            })),
            ["ts_ns", "dur_ns", "depth", "category", "name"],
          ),
        );
      },
    }),
  },
});

export const measurementsCommand = defineCommand({
  meta: { name: "measurements", description: "Query extracted measurements." },
  subCommands: {
    query: defineCommand({
      meta: { name: "query", description: "Measurements by run, artifact and name prefix (warm-ups only with --include-warmups)." },
      args: {
        "run-id": { type: "string", description: "Only this run." },
        "artifact-id": { type: "string", description: "Only this artifact." },
        "name-prefix": { type: "string", description: "Only names starting with this." },
        "include-warmups": { type: "boolean", description: "Include warm-up values." },
        ...pageArguments(pageLimits.measurements),
      },
      async run({ args }) {
        const result = await cliServices().measurements.query({
          run_id: text(args["run-id"]),
          artifact_id: text(args["artifact-id"]),
          name_prefix: text(args["name-prefix"]),
          include_warmups: Boolean(args["include-warmups"]),
          ...pageOf(args, pageLimits.measurements),
        });
        emit(cliOptions(), result, () =>
          [
            `${result.returned} of ${result.total}${result.next_cursor ? ` (next: --cursor ${result.next_cursor})` : ""}`,
            renderTable(
              result.measurements.map((row) => ({
                name: row.name,
                value: row.value,
                unit: row.unit,
                warmup: row.is_warmup,
                phase: row.phase,
                dimensions: row.dimensions,
              })),
              ["name", "value", "unit", "warmup", "phase", "dimensions"],
            ),
          ].join("\n"),
        );
      },
    }),
  },
});

export const evidenceLookupCommand = defineCommand({
  meta: { name: "evidence", description: "Look up and summarize evidence." },
  subCommands: {
    get: defineCommand({
      meta: { name: "get", description: "One piece of evidence by type and id." },
      args: {
        ref_type: {
          type: "positional",
          required: true,
          description: "analysis | artifact | comparison | generation | observation | run | run_set | trial",
        },
        ref_id: { type: "positional", required: true, description: "Its id." },
      },
      async run({ args }) {
        const result = cliServices().evidence.get({
          ref_type: String(args.ref_type) as EvidenceRefType,
          ref_id: String(args.ref_id),
        });
        emit(cliOptions(), result, () => JSON.stringify(result.data, null, 2));
      },
    }),
    summarize: defineCommand({
      meta: {
        name: "summarize",
        description: "Summarize runs (and recorded comparisons/analyses, findings) as Markdown (JSON with --json).",
      },
      args: {
        run: { type: "string", description: "Run ids, comma separated." },
        baseline: { type: "string", description: "Baseline run id." },
        candidate: { type: "string", description: "Candidate run id." },
        comparison: { type: "string", description: "Comparison ids, comma separated." },
        analysis: { type: "string", description: "Analysis ids, comma separated." },
        finding: { type: "string", description: "Finding ids, comma separated." },
        format: {
          type: "enum",
          options: ["markdown", "json"],
          description: "markdown (default) or json (the result document, as --json).",
        },
      },
      async run({ args }) {
        const list = (value: unknown) =>
          text(value)
            ? String(value)
                .split(",")
                .map((item) => item.trim())
                .filter(Boolean)
            : null;
        const result = await cliServices().evidence.summarize({
          baseline_run_id: text(args.baseline),
          candidate_run_id: text(args.candidate),
          run_ids: list(args.run),
          comparison_ids: list(args.comparison),
          analysis_ids: list(args.analysis),
          finding_ids: list(args.finding),
        });
        const options = cliOptions();
        emit(args.format === "json" ? { ...options, json: true } : options, result, () => result.markdown);
      },
    }),
  },
});
