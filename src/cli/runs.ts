import { defineCommand } from "citty";
import { cliOptions, cliServices } from "./context.ts";
import { emit, renderKeyValues, renderTable } from "./output.ts";
import { pageLimits } from "../domain/requests/limits.ts";
import { pageArguments, pageOf } from "./arguments.ts";
import { outputTail } from "../services/capture-outcome.ts";
import type { RunService } from "../services/run-service.ts";

export const runsCommand = defineCommand({
  meta: { name: "runs", description: "Captured and imported runs." },
  subCommands: {
    list: defineCommand({
      meta: { name: "list", description: "List runs, newest first." },
      args: {
        ...pageArguments(pageLimits.runs),
        workload: { type: "string", description: "Only runs of this workload." },
        adapter: { type: "string", description: "Only runs of this adapter." },
        status: { type: "string", description: "Only runs with this execution status." },
      },
      run({ args }) {
        const result = cliServices().runs.listRuns({
          ...pageOf(args, pageLimits.runs),
          filter: {
            workload_name: (args.workload as string | undefined) ?? null,
            adapter: (args.adapter as string | undefined) ?? null,
            execution_status: args.status ? [String(args.status)] : null,
          },
        });
        emit(
          cliOptions(),
          result,
          () =>
            `${renderTable(result.runs, ["run_id", "created_at", "run_type", "workload_name", "adapter", "execution_status", "validation_status"])}${result.truncated ? `\n(more: --cursor ${result.next_cursor})` : ""}`,
        );
      },
    }),
    show: defineCommand({
      meta: { name: "show", description: "Show one run's manifest." },
      args: { run_id: { type: "positional", required: true, description: "Run id." } },
      run({ args }) {
        const result = cliServices().runs.getRun(String(args.run_id));
        emit(cliOptions(), result, () =>
          [
            renderKeyValues(result, [
              "run_id",
              "run_type",
              "workload_name",
              "adapter",
              "execution_status",
              "capture_status",
              "validation_status",
              "created_at",
              "finished_at",
            ]),
            "measurements:",
            ...result.measurements.map((measurement) => `  ${measurement.name} = ${measurement.value} ${measurement.unit}`),
            ...result.unavailable_measurements.map((missing) => `  ${missing.name} unavailable: ${missing.reason}`),
            "artifacts:",
            ...result.artifacts.map(
              (artifact) => `  ${artifact.artifact_id}  ${artifact.kind}/${artifact.role}  ${artifact.byte_length} bytes`,
            ),
            ...renderCrash(result),
          ].join("\n"),
        );
      },
    }),
  },
});

export const artifactsCommand = defineCommand({
  meta: { name: "artifacts", description: "Stored native artifacts (metadata only)." },
  subCommands: {
    list: defineCommand({
      meta: { name: "list", description: "List artifacts." },
      args: {
        ...pageArguments(pageLimits.artifacts),
        run: { type: "string", description: "Only this run's artifacts." },
        kind: { type: "string", description: "Only artifacts of this kind." },
      },
      run({ args }) {
        const result = cliServices().runs.listArtifacts({
          ...pageOf(args, pageLimits.artifacts),
          run_id: (args.run as string | undefined) ?? null,
          kind: (args.kind as string | undefined) ?? null,
        });
        emit(cliOptions(), result, () => renderTable(result.artifacts, ["artifact_id", "byte_length", "kinds", "registration_count"]));
      },
    }),
    show: defineCommand({
      meta: { name: "show", description: "Show one artifact's metadata and registrations." },
      args: { artifact_id: { type: "positional", required: true, description: "Artifact id (sha256:…)." } },
      run({ args }) {
        const result = cliServices().runs.getArtifact(String(args.artifact_id));
        emit(cliOptions(), result, () =>
          [
            renderKeyValues(result, ["artifact_id", "byte_length", "kinds", "effective_sensitivity"]),
            ...result.registrations.map(
              (registration) => `  ${registration.run_id}  ${registration.kind}/${registration.role}  ${registration.display_name}`,
            ),
          ].join("\n"),
        );
      },
    }),
  },
});

export const recoverCommand = defineCommand({
  meta: {
    name: "recover",
    description:
      "Recover from dead flameox processes (kill -9, crash, reboot): close their runs (killing leftover workloads, quarantining partial outputs), reclaim their staging and unpublished objects, keep the quarantine within its bound. With --quarantine ID: register that quarantined run's outputs with its run.",
  },
  args: {
    quarantine: { type: "string", description: "A quarantine entry (run-<run id>) whose partial outputs to register with their run." },
  },
  async run({ args }) {
    if (args.quarantine !== undefined) {
      const restored = cliServices().quarantine.restore(String(args.quarantine));
      emit(
        cliOptions(),
        restored,
        () => `Registered ${restored.restored_artifacts.length} quarantined outputs with run ${restored.run_id}.`,
      );
      return;
    }
    const result = await cliServices().recovery.recover();
    emit(cliOptions(), result, () =>
      [
        ...(result.recovered.length === 0
          ? [
              `No run to recover${result.still_running.length > 0 ? ` (${result.still_running.length} runs still owned by live processes)` : ""}.`,
            ]
          : result.recovered.map(
              (run) =>
                `recovered ${run.run_id}: cancelled, cleanup_complete=${run.cleanup_complete}${run.workload_killed ? ", leftover workload killed" : ""}`,
            )),
        ...result.reclaimed.map((item) => `reclaimed ${item.kind} .diagnostics/${item.path} (${item.bytes} bytes)`),
        ...result.resumed_moves.map((id) => `finished the interrupted move ${id}`),
      ].join("\n"),
    );
  },
});

/** The exception a run died of, where it was raised, and the end of its stderr. */
export function renderCrash(run: ReturnType<RunService["getRun"]>): string[] {
  const lines: string[] = [];
  if (run.exception) {
    lines.push(`exception: ${run.exception.exception_type}${run.exception.message ? `: ${run.exception.message}` : ""}`);
    for (const frame of run.exception.frames) lines.push(`  ${frame.file}:${frame.line ?? "?"} in ${frame.function}`);
  }
  const stderr = outputTail(run).stderr.tail.trimEnd();
  if (stderr && run.execution_status !== "succeeded") lines.push("stderr (end):", ...stderr.split("\n").map((line) => `  ${line}`));
  return lines;
}
