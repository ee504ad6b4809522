import { existsSync, lstatSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, isAbsolute, relative, resolve, sep } from "node:path";
import {
  executionRefused,
  FlameoxError,
  invalidInput,
  type NextStep,
  retold,
  sensitiveArtifactRefused,
  toFlameoxError,
} from "../domain/errors.ts";
import { detectProfileFormat } from "../adapters/formats/detect.ts";
import type { DetectedFormat } from "../adapters/formats/format-catalog.ts";
import { extractProfile } from "../adapters/formats/extract-profile.ts";
import { extractFailureLog } from "../adapters/failures/failure-log.ts";
import { type ImportPlan, type LimitationDetail, failureLogToExtract, importPlan } from "./import-plan.ts";
import { type StagedArtifact, stageArtifactFile, syncStagedArtifacts } from "../store/artifact-store.ts";
import { reclaimUnpublished } from "../store/artifact-placement.ts";
import { crashPoint } from "../store/crash-points.ts";
import type { Workspace } from "../store/workspace.ts";
import { prepareBundle, type PreparedBundle } from "./evidence-publisher.ts";
import { publishImportRun } from "./import-run.ts";
import { artifactResourceUri, runResourceUri } from "../domain/resource-uris.ts";
import { artifactKinds } from "../domain/vocabulary.ts";
import { loadWorkspacePolicy } from "../config/workspace-policy.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";

export { artifactKinds, type ArtifactKind } from "../domain/vocabulary.ts";

/** Kinds that may hold secrets or source must be registered as sensitive. */
const sensitiveFloor = new Set<string>(["core_dump", "source_snapshot"]);

export type ImportRequest = {
  path: string;
  /** Checked here, so an unknown kind gets the remedy that names the right one. */
  kind: string | null;
  sensitivity: "normal" | "internal" | "sensitive";
  media_type: string | null;
  source_root: "project" | "temp";
  producer: string;
  producer_version: string | null;
};

export type ImportReceipt = {
  schema_version: 1;
  run_id: string;
  artifact_id: string;
  kind: string;
  /** The detected format (profile formats are read on import; others by the extract tool in next_tool). */
  format: Exclude<DetectedFormat, "unknown"> | null;
  producer: string | null;
  producer_version: string | null;
  byte_length: number;
  evidence: {
    status: "available" | "not_extracted";
    tables: Record<string, number>;
    next_tool: string | null;
    limitations: string[];
    /** The same limitations with a code each (`format_not_recognized`, `format_needs_conversion`, `extraction`). */
    limitation_details: LimitationDetail[];
  };
  corpus_commit_id: string;
  run_resource_uri: string;
  artifact_resource_uri: string;
};

export type { LimitationDetail } from "./import-plan.ts";

export class ImportService {
  constructor(private readonly workspace: WorkspaceHandle) {}

  /**
   * Resolves an import path inside its root, refusing NUL bytes, escapes and anything but a regular
   * file (or, for a package such as an xctrace .trace, a folder).
   */
  resolveImportPath(path: string, sourceRoot: "project" | "temp", expect: "file" | "folder" = "file"): string {
    const tool = expect === "file" ? "import_artifact" : "import_xctrace";
    // Only a file that is in the other root has a call that works as given; any other path is the caller's to fix.
    const refuse = (message: string, remedy: string, next: NextStep | null = null) =>
      executionRefused(message, {
        details: { next_tool: tool, source_root: sourceRoot },
        remediation: [remedy],
        next: next ?? { tool, arguments: { source_root: sourceRoot }, callerSupplies: ["path"] },
      });
    if (path.includes("\u0000")) throw refuse("The import path contains a NUL byte.", "Pass a path without NUL bytes.");
    const root = realpathSync(sourceRoot === "project" ? this.workspace.projectRoot : tmpdir());
    const candidate = isAbsolute(path) ? resolve(path) : resolve(root, path);
    if (!existsSync(candidate))
      throw refuse(
        `The file to import does not exist: ${relativeOrName(root, candidate)}.`,
        "Check the path; relative paths resolve against the source root.",
      );
    const real = realpathSync(candidate);
    const inside = (child: string) => child === root || child.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);
    if (!inside(candidate) && !inside(resolve(realpathSync(resolve(candidate, "..")), basename(candidate)))) {
      const temporary = realpathSync(tmpdir());
      const inTemporary = sourceRoot === "project" && real.startsWith(`${temporary}${sep}`);
      throw refuse(
        `The path is outside the ${sourceRoot} root.`,
        sourceRoot === "project"
          ? "Import files inside the project, or use source_root='temp' for files under the system temporary folder."
          : "Import files under the system temporary folder.",
        inTemporary ? { tool, arguments: { path: relative(temporary, real), source_root: "temp" } } : null,
      );
    }
    if (!inside(real))
      throw refuse(
        "The path leads (through a symbolic link) outside its root.",
        "Import the real file inside the root, not a link to a file elsewhere.",
      );
    if (expect === "folder" && !lstatSync(real).isDirectory())
      throw refuse("The path is not a folder.", "Pass the path of the .trace folder.");
    if (expect === "file" && !lstatSync(real).isFile())
      throw refuse("Only regular files can be imported.", "Pass the path of a regular file.");
    return real;
  }

  async importArtifact(request: ImportRequest): Promise<ImportReceipt> {
    const workspace = this.workspace.open();
    checkImportKind(request);
    const source = this.resolveImportPath(request.path, request.source_root);
    const policy = loadWorkspacePolicy(workspace.root);
    const detected = await detectProfileFormat(source);
    const plan = importPlan(detected, request.kind, extractToolFor);
    const failureLog = plan.profileFormat ? null : failureLogToExtract(request.kind, source, detected.format === "unknown");
    const kind = failureLog ?? plan.kind;
    const stored: StagedArtifact = await stageArtifactFile(workspace, source, { maxBytes: policy.limits.max_artifact_bytes, sync: false });
    // The copy reaches the disk while it is extracted (the fsync runs off the main thread); publishing waits for it.
    const durable = syncStagedArtifacts([stored]);
    durable.catch(() => undefined);
    const runId = crypto.randomUUID();
    const producer = request.producer !== "auto" ? request.producer : (detected.producer ?? plan.producer);
    const producerVersion = request.producer_version ?? detected.producer_version ?? null;
    let bundle: PreparedBundle | null = null;
    try {
      const extracted = await this.extractOnImport(workspace, { runId, stored }, plan.profileFormat, failureLog !== null);
      bundle = extracted.bundle;
      let limitations = extracted.limitations;
      const details: LimitationDetail[] = bundle
        ? limitations.map((message) => ({ source: "extraction", code: "extraction", message }))
        : plan.notes;
      if (!bundle) limitations = details.map((detail) => detail.message);
      await durable;
      const corpus = publishImportRun(workspace, {
        runId,
        registrations: [
          {
            runId,
            artifact: stored,
            displayName: basename(source),
            kind,
            role: "imported",
            mediaType: request.media_type,
            sensitivity: request.sensitivity,
            producer,
            producerVersion,
            format: plan.profileFormat,
          },
        ],
        limitations,
        limitationDetails: details,
        reasons: { run: "import", corpus: `import ${runId}` },
        bundle,
      });
      crashPoint("published");
      return {
        schema_version: 1,
        run_id: runId,
        artifact_id: stored.artifact_id,
        kind,
        format: detected.format === "unknown" ? null : detected.format,
        producer,
        producer_version: producerVersion,
        byte_length: stored.byte_length,
        evidence: bundle
          ? {
              status: "available",
              tables: bundle.tables,
              next_tool: failureLog ? "analyze_failures" : "analyze_hotspots",
              limitations,
              limitation_details: details,
            }
          : {
              status: "not_extracted",
              tables: {},
              next_tool: plan.nextTool === undefined ? await extractToolForFile(kind, source) : plan.nextTool,
              limitations,
              limitation_details: details,
            },
        corpus_commit_id: corpus.commit_id,
        run_resource_uri: runResourceUri(runId),
        artifact_resource_uri: artifactResourceUri(stored.artifact_id),
      };
    } catch (error) {
      bundle?.discard();
      await durable.catch(() => undefined);
      // Only what this import staged, and an object it placed that no committed row names (checked under the write lock).
      reclaimUnpublished(workspace, [stored]);
      // Typed first: a failed background fsync is a plain node error whose message names the staging path.
      throw withoutStorePath(toFlameoxError(error), stored.staged_path, basename(source));
    }
  }

  /** A profile or a failure log is extracted as it is imported; any other kind waits for its extract tool (no bundle). */
  private async extractOnImport(
    workspace: Workspace,
    input: { runId: string; stored: StagedArtifact },
    profileFormat: ImportPlan["profileFormat"],
    isFailureLog: boolean,
  ): Promise<{ bundle: PreparedBundle | null; limitations: string[] }> {
    const projectRoot = this.workspace.projectRoot;
    const path = input.stored.staged_path;
    let limitations: string[] = [];
    const context = { runId: input.runId, artifactId: input.stored.artifact_id, extractorVersion: "1" };
    if (profileFormat) {
      const bundle = await prepareBundle(workspace, { ...context, extractor: "profile" }, async (sink) => {
        limitations = (await extractProfile(path, sink, { projectRoot, format: profileFormat })).limitations;
        return limitations;
      });
      return { bundle, limitations };
    }
    if (!isFailureLog) return { bundle: null, limitations };
    const bundle = await prepareBundle(workspace, { ...context, extractor: "failure-log" }, async (sink) => {
      limitations = extractFailureLog(path, sink, { projectRoot }).limitations;
      return limitations;
    });
    return { bundle, limitations };
  }
}

function relativeOrName(root: string, path: string): string {
  const rel = relative(root, path);
  return rel.startsWith("..") ? basename(path) : rel;
}

/** benchmark_samples covers pyperf JSON and flameox's own benchmark-samples v1 files; the file says which. */
async function extractToolForFile(kind: string, path: string): Promise<string | null> {
  if (kind === "benchmark_samples") {
    const head = await Bun.file(path).slice(0, 4096).text();
    if (head.includes("flameox.benchmark-samples.v1")) return "extract_benchmark_samples";
  }
  return extractToolFor(kind);
}

/** The extraction tool that turns a non-profile artifact kind into evidence. */
export function extractToolFor(kind: string): string | null {
  switch (kind) {
    case "benchmark_samples":
      return "extract_pyperf";
    case "test_execution":
      return "extract_pytest";
    case "execution_coverage":
      return "extract_coverage";
    case "memory_profile":
      return "extract_memray";
    case "python_startup":
      return "extract_python_startup";
    case "semantic_observations":
      return "extract_observations";
    case "execution_trace":
      return "extract_perfetto";
    default:
      return null;
  }
}

/** The kind, when given, must be a known artifact kind, and kinds with a sensitivity floor must be imported as sensitive. */
function checkImportKind(request: ImportRequest): void {
  if (request.kind !== null && !(artifactKinds as readonly string[]).includes(request.kind)) {
    throw invalidInput(
      `Unknown artifact kind '${request.kind}'.`,
      [{ field: "kind", message: `Input should be one of ${artifactKinds.join(", ")}`, type: "literal_error" }],
      {
        remediation: [
          "Use kind='execution_trace' for Chrome and Torch traces and 'sample_profile' for profiles, or omit kind to detect it.",
        ],
      },
    );
  }
  if (request.kind && sensitiveFloor.has(request.kind) && request.sensitivity !== "sensitive") {
    throw sensitiveArtifactRefused(`Artifacts of kind ${request.kind} must be imported with sensitivity 'sensitive'.`, {
      remediation: ["Repeat the import with sensitivity='sensitive'."],
    });
  }
}

/** Agents see the name they imported, never the workspace's internal storage path. */
function withoutStorePath(error: unknown, storedPath: string, displayName: string): unknown {
  if (!(error instanceof FlameoxError) || !error.message.includes(storedPath)) return error;
  return retold(error, {
    message: error.message.replaceAll(storedPath, displayName),
    details: JSON.parse(JSON.stringify(error.details).replaceAll(JSON.stringify(storedPath).slice(1, -1), displayName)) as Record<
      string,
      unknown
    >,
  });
}
