import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { digestToc, summarizeToc, type XctraceTocDigest } from "../adapters/xctrace/xctrace-toc.ts";
import { inheritedEnvironment, loadWorkspacePolicy } from "../config/workspace-policy.ts";
import { capabilityUnavailable, processFailed, processTimeout } from "../domain/errors.ts";
import { artifactResourceUri, runResourceUri } from "../domain/resource-uris.ts";
import { runProcess } from "../exec/broker.ts";
import { type PublishArtifactInput, reclaimUnpublished } from "../store/artifact-placement.ts";
import { type StagedArtifact, stageArtifactFile } from "../store/artifact-store.ts";
import { archiveDirectory } from "../store/directory-archive.ts";
import { processStagingPath } from "../store/process-staging.ts";
import type { WorkspaceHandle } from "../store/workspace-handle.ts";
import { findOnPath } from "./capability-report.ts";
import type { ImportService } from "./import-service.ts";
import { publishImportRun } from "./import-run.ts";

export type XctraceImportReceipt = {
  schema_version: 1;
  run_id: string;
  /** The package: a deterministic tar of the .trace folder (sorted entries, zeroed owners and times). */
  artifact_id: string;
  toc_artifact_id: string;
  /** The fuller summary (every run up to 16, tables with attributes), stored as JSON. */
  toc_summary_artifact_id: string;
  package: { display_name: string; entries: number; content_bytes: number; archive_bytes: number; media_type: "application/x-tar" };
  sensitivity: "sensitive";
  toc: XctraceTocDigest;
  xctrace_version: string | null;
  corpus_commit_id: string;
  run_resource_uri: string;
  artifact_resource_uri: string;
  limitations: string[];
};

/** The TOC of even a long recording is a few hundred kilobytes; beyond this it is not a TOC. */
const tocOutputBytes = 8 * 1024 * 1024;
const tocTimeoutMs = 120_000;
const maxPackageEntries = 100_000;

const limitations = [
  "Only the table of contents was exported: flameox does not read xctrace's tables (no XPath queries); open the package in Instruments for them.",
  "The package is stored as a tar of the .trace folder; extract it with tar -xf to reopen it.",
];

/**
 * import_xctrace: keeps an Instruments .trace folder as one sensitive, immutable artifact with the
 * bounded summary of its table of contents. The TOC comes from `xctrace export --toc`; without xctrace
 * nothing is stored, since a package without its TOC is not what the operation promises.
 */
export class XctraceImportService {
  constructor(
    private readonly workspace: WorkspaceHandle,
    private readonly imports: ImportService,
  ) {}

  async importTrace(request: { path: string; source_root: "project" | "temp" }, signal?: AbortSignal): Promise<XctraceImportReceipt> {
    const workspace = this.workspace.open();
    const folder = this.imports.resolveImportPath(request.path, request.source_root, "folder");
    const xctrace = requireXctrace();
    const policy = loadWorkspacePolicy(workspace.root);
    const staging = processStagingPath(workspace, `xctrace-${crypto.randomUUID()}`);
    mkdirSync(staging, { recursive: true, mode: 0o700 });
    const staged: StagedArtifact[] = [];
    try {
      const toc = await exportToc(xctrace, folder, staging, policy, signal);
      const summary = summarizeToc(toc.xml);
      const displayName = basename(folder);
      const archivePath = join(staging, "package.tar");
      const archive = archiveDirectory(folder, displayName, archivePath, {
        maxBytes: policy.limits.max_artifact_bytes,
        maxEntries: maxPackageEntries,
      });
      const maxBytes = policy.limits.max_artifact_bytes;
      const packageArtifact = await stageArtifactFile(workspace, archivePath, { maxBytes, payloadExtension: ".tar" });
      staged.push(packageArtifact);
      // The archive is a second copy of the package: drop it now rather than hold both until the end.
      rmSync(archivePath, { force: true });
      const tocArtifact = await stageArtifactFile(workspace, toc.path, { maxBytes, payloadExtension: ".xml" });
      staged.push(tocArtifact);
      const summaryPath = join(staging, "toc-summary.json");
      writeFileSync(summaryPath, JSON.stringify(summary, null, 2));
      const summaryArtifact = await stageArtifactFile(workspace, summaryPath, { maxBytes, payloadExtension: ".json" });
      staged.push(summaryArtifact);
      const version = summary.runs.find((run) => run.instruments_version)?.instruments_version ?? null;
      const runId = crypto.randomUUID();
      const registration = (artifact: StagedArtifact, name: string, role: string, mediaType: string, format: string) =>
        xctraceRegistration({ runId, producerVersion: version }, { artifact, name, role, mediaType, format });
      const corpus = publishImportRun(workspace, {
        runId,
        registrations: [
          registration(packageArtifact, `${displayName}.tar`, "xctrace_package", "application/x-tar", "xctrace_trace_package"),
          registration(tocArtifact, `${displayName}.toc.xml`, "xctrace_toc", "application/xml", "xctrace_toc"),
          registration(summaryArtifact, `${displayName}.toc-summary.json`, "xctrace_toc_summary", "application/json", "json"),
        ],
        limitations,
        reasons: { run: "import", corpus: `import xctrace ${runId}` },
      }).commit_id;
      return {
        schema_version: 1,
        run_id: runId,
        artifact_id: packageArtifact.artifact_id,
        toc_artifact_id: tocArtifact.artifact_id,
        toc_summary_artifact_id: summaryArtifact.artifact_id,
        package: { display_name: displayName, ...archive, media_type: "application/x-tar" },
        sensitivity: "sensitive",
        toc: digestToc(summary),
        xctrace_version: version,
        corpus_commit_id: corpus,
        run_resource_uri: runResourceUri(runId),
        artifact_resource_uri: artifactResourceUri(packageArtifact.artifact_id),
        limitations,
      };
    } catch (error) {
      reclaimUnpublished(workspace, staged);
      throw error;
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  }
}

function requireXctrace(): string {
  const xctrace = findOnPath("xctrace", process.env.PATH ?? "");
  if (xctrace) return xctrace;
  throw capabilityUnavailable("xctrace is not on PATH; it ships with Xcode on macOS, so .trace packages can only be imported there.", {
    details: { missing_executable: "xctrace", next_tool: "list_capabilities" },
    remediation: ["On macOS, install Xcode (or its command line tools) so that xctrace is on PATH, then import again; nothing was stored."],
  });
}

/** The package is the execution trace; its table of contents and their summary are collector metadata. Everything is sensitive. */
function xctraceRegistration(
  run: { runId: string; producerVersion: string | null },
  file: { artifact: StagedArtifact; name: string; role: string; mediaType: string; format: string },
): PublishArtifactInput {
  return {
    runId: run.runId,
    artifact: file.artifact,
    displayName: file.name,
    kind: file.role === "xctrace_package" ? "execution_trace" : "collector_metadata",
    role: file.role,
    mediaType: file.mediaType,
    sensitivity: "sensitive",
    producer: "xctrace",
    producerVersion: run.producerVersion,
    format: file.format,
  };
}

async function exportToc(
  xctrace: string,
  folder: string,
  staging: string,
  policy: ReturnType<typeof loadWorkspacePolicy>,
  signal?: AbortSignal,
): Promise<{ xml: string; path: string }> {
  const path = join(staging, "toc.xml");
  const stderrPath = join(staging, "xctrace-stderr.txt");
  const result = await runProcess(
    {
      argv: [xctrace, "export", "--input", folder, "--toc"],
      cwd: dirname(folder),
      deadline: Date.now() + tocTimeoutMs,
      stdoutPath: path,
      stderrPath,
      outputBudgetBytes: tocOutputBytes,
    },
    {
      signal,
      gracePeriodMs: policy.limits.cleanup_grace_seconds * 1000,
      inheritEnvironment: inheritedEnvironment(policy),
      sampling: false,
    },
  );
  if (result.timed_out) throw processTimeout(`xctrace export --toc did not finish within ${tocTimeoutMs / 1000} s; nothing was stored.`);
  if (result.exit_code !== 0) {
    const stderr = readFileSync(stderrPath, "utf8").trim().split("\n").slice(-3).join(" ").slice(0, 300);
    throw processFailed(`xctrace export --toc exited ${result.exit_code ?? result.terminating_signal}; nothing was stored.`, {
      details: { exit_code: result.exit_code, stderr_tail: stderr.replaceAll(folder, basename(folder)) },
      remediation: ["Check that the folder is a complete Instruments .trace package (open it in Instruments)."],
    });
  }
  if (result.stdout.truncated || statSync(path).size === 0)
    throw processFailed("xctrace export --toc printed no table of contents (or more than 8 MiB); nothing was stored.", {
      remediation: ["Run xctrace export --toc on the package by hand to see what it prints."],
    });
  return { xml: readFileSync(path, "utf8"), path };
}
