import { existsSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import type { CollectorOutput } from "../adapters/capture-adapter.ts";
import { captureAdapters } from "../adapters/capture-adapters.ts";
import { loadWorkspacePolicy } from "../config/workspace-policy.ts";
import { toFlameoxError } from "../domain/errors.ts";
import { runResourceUri } from "../domain/resource-uris.ts";
import type { ProcessResult } from "../exec/broker.ts";
import { runtimeMeasurementNames } from "../exec/resource-sampler.ts";
import { publishArtifact, reclaimUnpublished } from "../store/artifact-placement.ts";
import { type StagedArtifact, stageArtifactFile, syncStagedArtifacts } from "../store/artifact-store.ts";
import { advanceCorpus } from "../store/corpus.ts";
import { crashPoint } from "../store/crash-points.ts";
import { readRun, reviseRun, type RunArtifactReference, type RunManifest } from "../store/run-store.ts";
import type { Workspace } from "../store/workspace.ts";
import { type CaptureReceipt, type ConsumedPlan, trustedLocalLimitation } from "./capture-plan.ts";
import { brokerCommandRunner } from "../adapters/command-runner.ts";
import { type PreparedBundle, prepareBundle } from "./evidence-publisher.ts";
import { defaultNextStep } from "./receipt-next-step.ts";
import { outputTail, terminalFailure } from "./capture-outcome.ts";
import { crashException, placesOf, streamTail, tailCharacters } from "./run-output.ts";
import type { StackRecording } from "./stack-recording.ts";

/**
 * After the collector exits: keep every output as an artifact, extract what the adapter can read,
 * record runtime measurements, and publish the run's terminal revision with its artifacts and
 * evidence in one transaction. A cancelled or timed-out run is published, then reported as an error.
 */

type CapturedFile = {
  path: string;
  kind: string;
  role: string;
  name: string;
  mediaType: string;
  format: string | null;
  producer: string | null;
  output?: CollectorOutput;
};

type Stored = { entry: CapturedFile; artifact: StagedArtifact };

/** The run's terminal state as it is decided step by step. */
type Outcome = {
  execution: RunManifest["execution_status"];
  capture: RunManifest["capture_status"];
  validation: RunManifest["validation_status"];
  limitations: string[];
  /** The typed ones among them (an extractor's own codes), as limitation_details. */
  limitationDetails: RunManifest["limitation_details"];
};

function executionStatusOf(result: ProcessResult): RunManifest["execution_status"] {
  if (result.cancelled && !result.timed_out) return "cancelled";
  if (result.timed_out) return "timed_out";
  return result.exit_code === 0 ? "succeeded" : "failed";
}

/** stdout and stderr always; each collector output that was written; a missing required output fails validation. */
function capturedFiles(intent: ConsumedPlan, outcome: Outcome): CapturedFile[] {
  const processOutput = (role: "stdout" | "stderr"): CapturedFile => ({
    path: join(intent.artifact_directory, `${role}.txt`),
    kind: "process_output",
    role,
    name: `${role}.txt`,
    mediaType: "text/plain",
    format: "text",
    producer: null,
  });
  const files = [processOutput("stdout"), processOutput("stderr")];
  for (const output of intent.outputs) {
    const path = join(intent.artifact_directory, output.file);
    if (existsSync(path) && statSync(path).size > 0) {
      files.push({
        path,
        kind: output.kind,
        role: output.role,
        name: output.file,
        mediaType: output.mediaType,
        format: output.format,
        producer: output.producer,
        output,
      });
    } else if (output.required) {
      outcome.validation = "failed";
      outcome.limitations.push(`${intent.adapter} wrote no ${output.file}; see the stderr artifact.`);
    }
  }
  return files;
}

/** The adapter's extractor over each extractable output; a failure fails the capture but keeps the artifact. */
async function extractOutputs(
  workspace: Workspace,
  intent: ConsumedPlan,
  stored: Stored[],
  outcome: Outcome,
  recording: StackRecording | undefined,
): Promise<PreparedBundle[]> {
  const adapter = captureAdapters.get(intent.adapter)!;
  if (outcome.execution === "cancelled" || !adapter.extract) return [];
  const scratchDirectory = join(intent.artifact_directory, "extraction");
  const context = {
    projectRoot: workspace.projectRoot,
    workloadExecutable: intent.workload_executable,
    collectorDirectory: intent.collector_directory,
    run: brokerCommandRunner(scratchDirectory),
    scratchDirectory,
  };
  const bundles: PreparedBundle[] = [];
  for (const item of stored) {
    const output = item.entry.output;
    if (!output?.extract) continue;
    try {
      let keep: ((bundleId: string) => void) | undefined;
      const bundle = await prepareBundle(
        workspace,
        {
          runId: intent.run_id,
          artifactId: item.artifact.artifact_id,
          extractor: adapter.extractor.name,
          extractorVersion: adapter.extractor.version,
        },
        async (writer) => {
          const recorded = recording?.record(writer);
          keep = recorded?.keep;
          const extracted = await adapter.extract!(output, item.artifact.staged_path, recorded?.sink ?? writer, context);
          outcome.limitations.push(...extracted.limitations);
          for (const detail of extracted.limitationDetails ?? []) outcome.limitationDetails.push({ source: "extraction", ...detail });
          return extracted.limitations;
        },
      );
      keep?.(bundle.bundleId);
      bundles.push(bundle);
    } catch (error) {
      outcome.validation = "failed";
      outcome.capture = "failed";
      outcome.limitations.push(`${output.file} could not be extracted: ${toFlameoxError(error).message}`);
    }
  }
  return bundles;
}

function runtimeMeasurements(result: ProcessResult): RunManifest["measurements"] {
  const measurements = (result.resources?.measurements ?? []).map((measurement) => ({
    name: measurement.name,
    value: measurement.value,
    unit: measurement.unit,
  }));
  if (!measurements.some((measurement) => measurement.name === runtimeMeasurementNames.wallTimeNs))
    measurements.unshift({ name: runtimeMeasurementNames.wallTimeNs, value: result.wall_time_ns, unit: "ns" });
  return measurements;
}

/** Runtime measurements are evidence too, attached to the stdout artifact. */
async function runtimeBundle(
  workspace: Workspace,
  runId: string,
  stored: Stored[],
  measurements: RunManifest["measurements"],
  recording: StackRecording | undefined,
): Promise<PreparedBundle | null> {
  const stdout = stored.find((item) => item.entry.role === "stdout");
  if (!stdout || measurements.length === 0) return null;
  let keep: ((bundleId: string) => void) | undefined;
  const bundle = await prepareBundle(
    workspace,
    { runId, artifactId: stdout.artifact.artifact_id, extractor: "runtime", extractorVersion: "1" },
    async (writer) => {
      const recorded = recording?.record(writer);
      keep = recorded?.keep;
      const sink = recorded?.sink ?? writer;
      for (const measurement of measurements) {
        sink.measurement({
          name: measurement.name,
          value: measurement.value,
          unit: measurement.unit,
          aggregation: measurement.name.endsWith("bytes") ? "max" : "total",
          is_warmup: false,
          worker: null,
          run_index: 0,
          value_index: 0,
          phase: "capture",
          dimensions: null,
        });
      }
    },
  );
  keep?.(bundle.bundleId);
  return bundle;
}

function processRecord(workspace: Workspace, current: RunManifest, result: ProcessResult): Record<string, unknown> {
  const stream = (output: ProcessResult["stdout"], characters: number) => ({
    bytes_written: output.bytes_written,
    bytes_dropped: output.bytes_dropped,
    truncated: output.truncated,
    ...streamTail(output, characters, placesOf(workspace)),
  });
  return {
    ...(current.process ?? {}),
    pid: result.pid,
    exit_code: result.exit_code,
    terminating_signal: result.terminating_signal,
    wall_time_ns: result.wall_time_ns,
    timed_out: result.timed_out,
    cancelled: result.cancelled,
    cancellation_cause: result.cancellation_cause,
    cleanup_complete: result.cleanup_complete,
    leftover_processes: result.leftover_processes,
    stdout: stream(result.stdout, tailCharacters.stdout),
    stderr: stream(result.stderr, tailCharacters.stderr),
    resources: result.resources,
  };
}

/** One transaction: the artifact registrations, the terminal revision, the corpus commit, the bundles. */
function publish(
  workspace: Workspace,
  published: { intent: ConsumedPlan; revision: number; result: ProcessResult; outcome: Outcome },
  stored: Stored[],
  bundles: PreparedBundle[],
  measurements: RunManifest["measurements"],
): { corpusCommitId: string; references: RunArtifactReference[] } {
  const { intent, revision, result, outcome } = published;
  try {
    return workspace.state.write(() => {
      const database = workspace.state.database;
      const references = stored.map(
        ({ entry, artifact }) =>
          publishArtifact(workspace, {
            runId: intent.run_id,
            artifact,
            displayName: entry.name,
            kind: entry.kind,
            role: entry.role,
            mediaType: entry.mediaType,
            sensitivity: "internal",
            producer: entry.producer,
            producerVersion: null,
            format: entry.format,
          }).reference,
      );
      reviseRun(
        database,
        intent.run_id,
        revision,
        (current) => ({
          ...current,
          finished_at: result.finished_at,
          execution_status: outcome.execution,
          capture_status: outcome.capture,
          validation_status: outcome.validation,
          process: processRecord(workspace, current, result),
          lease: null,
          artifacts: references,
          measurements,
          unavailable_measurements: result.resources?.unavailable ?? [],
          limitations: [...current.limitations, ...outcome.limitations],
          limitation_details: [...current.limitation_details, ...outcome.limitationDetails],
          // Parsed whatever the exit status: a profiler wrapping the workload (py-spy) may exit 0 after the workload crashed.
          exception: outcome.execution === "cancelled" ? null : crashException(result.stderr, placesOf(workspace)),
        }),
        "execution finished",
      );
      const head = advanceCorpus(database, workspace.id, `capture ${intent.run_id}`);
      for (const bundle of bundles) bundle.register(head);
      return { corpusCommitId: head.commit_id, references };
    });
  } catch (error) {
    for (const bundle of bundles) bundle.discard();
    reclaimUnpublished(
      workspace,
      stored.map((item) => item.artifact),
    );
    throw error;
  }
}

/** Row counts per evidence table across every bundle a capture published. */
function sumTables(tables: Record<string, number>[]): Record<string, number> {
  const total: Record<string, number> = {};
  for (const table of tables) for (const [name, rows] of Object.entries(table)) total[name] = (total[name] ?? 0) + rows;
  return total;
}

/**
 * Stages a capture's outputs and extracts them into bundles, with the runtime measurements' bundle written
 * meanwhile; on any failure every bundle and staged copy is discarded before the error goes on.
 */
async function stageAndExtract(
  workspace: Workspace,
  intent: ConsumedPlan,
  outcome: Outcome,
  measurements: ReturnType<typeof runtimeMeasurements>,
  options: { maxBytes: number; report: (step: number, message: string) => Promise<void>; recording?: StackRecording },
): Promise<{ stored: Stored[]; bundles: PreparedBundle[] }> {
  const files = capturedFiles(intent, outcome);
  const stored: Stored[] = [];
  const bundles: PreparedBundle[] = [];
  // The runtime measurements' bundle is written while the adapter's outputs are extracted (its own DuckDB).
  let runtime: Promise<PreparedBundle | null> = Promise.resolve(null);
  // The staged copies reach the disk together, while the outputs are extracted; publish waits for them.
  let durable: Promise<void> = Promise.resolve();
  try {
    for (const entry of files.filter((file) => existsSync(file.path)))
      stored.push({ entry, artifact: await stageArtifactFile(workspace, entry.path, { maxBytes: options.maxBytes, sync: false }) });
    durable = syncStagedArtifacts(stored.map((item) => item.artifact));
    durable.catch(() => undefined);
    runtime = runtimeBundle(workspace, intent.run_id, stored, measurements, options.recording);
    runtime.catch(() => undefined);
    bundles.push(...(await extractOutputs(workspace, intent, stored, outcome, options.recording)));
    await options.report(6, "Validation complete");
    const written = await runtime;
    if (written) bundles.push(written);
    await durable;
    return { stored, bundles };
  } catch (error) {
    await durable.catch(() => undefined);
    const written = await runtime.catch(() => null);
    if (written && !bundles.includes(written)) written.discard();
    for (const bundle of bundles) bundle.discard();
    reclaimUnpublished(
      workspace,
      stored.map((item) => item.artifact),
    );
    throw error;
  }
}

export async function publishCapture(
  workspace: Workspace,
  capture: { intent: ConsumedPlan; revision: number; result: ProcessResult },
  report: (step: number, message: string) => Promise<void>,
  recording?: StackRecording,
): Promise<CaptureReceipt> {
  const { intent, result } = capture;
  const policy = loadWorkspacePolicy(workspace.root);
  const execution = executionStatusOf(result);
  const outcome: Outcome = {
    execution,
    capture: execution === "cancelled" ? "cancelled" : "registered",
    validation: intent.outputs.length > 0 ? "passed" : "not_requested",
    limitations: [...result.limitations],
    limitationDetails: [],
  };
  const measurements = runtimeMeasurements(result);
  const { stored, bundles } = await stageAndExtract(workspace, intent, outcome, measurements, {
    maxBytes: policy.limits.max_artifact_bytes,
    report,
    recording,
  });
  await report(7, "Artifacts registered");
  const { corpusCommitId, references } = publish(workspace, { ...capture, outcome }, stored, bundles, measurements);
  crashPoint("published");
  rmSync(intent.artifact_directory, { recursive: true, force: true });
  await report(8, "Evidence publication complete");
  const run = readRun(workspace.state.database, intent.run_id);
  const next = defaultNextStep(intent.adapter, intent.run_id, intent.workload_name);
  const receipt: CaptureReceipt = {
    schema_version: 1,
    run_id: intent.run_id,
    execution_status: outcome.execution,
    capture_status: outcome.capture,
    validation_status: outcome.validation,
    exit_code: result.exit_code,
    source_state_id: run?.source_state_id ?? null,
    environment_id: run?.environment_id ?? null,
    artifact_ids: [...new Set(references.map((reference) => reference.artifact_id))],
    evidence_tables: sumTables(bundles.map((bundle) => bundle.tables)),
    limitations: outcome.limitations,
    limitation_details: [trustedLocalLimitation, ...outcome.limitationDetails],
    corpus_commit_id: corpusCommitId,
    resource_uri: runResourceUri(intent.run_id),
    // What went wrong travels with a failed run's receipt: the ends of its output and the exception it died of.
    output_tail: outcome.execution === "succeeded" && !run?.exception ? null : outputTail(run),
    exception: run?.exception ?? null,
    analysis: null,
    next_tool: next.tool,
    next_arguments: next.arguments,
  };
  const failure = terminalFailure(intent, result, receipt);
  if (failure) throw failure;
  return receipt;
}
