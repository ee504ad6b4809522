import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { callTool, connectMcp, type McpSession, repositoryRoot, runCli, temporaryFolder, toolPath } from "../support/binary.ts";

setDefaultTimeout(120_000);

let session: McpSession | undefined;
afterEach(async () => {
  await session?.close();
  session = undefined;
});

const fixtures = join(repositoryRoot, "test", "fixtures", "xctrace");

/** A project holding the sample package, and a folder with a stand-in xctrace that prints the recorded TOC. */
function xctraceProject(): { project: string; fakeBin: string } {
  const project = temporaryFolder("xctrace");
  cpSync(join(fixtures, "sample.trace"), join(project, "sample.trace"), { recursive: true });
  const fakeBin = join(temporaryFolder("xctrace-bin"), "bin");
  mkdirSync(fakeBin);
  // Like `xcrun xctrace export --input X.trace --toc`: refuses other arguments and a missing package.
  writeFileSync(
    join(fakeBin, "xctrace"),
    `#!/bin/sh
[ "$1" = export ] && [ "$2" = --input ] && [ "$4" = --toc ] || { echo "unexpected arguments: $*" >&2; exit 64; }
[ -d "$3" ] || { echo "Cannot open $3" >&2; exit 1; }
case "$3" in *broken.trace) echo "Document Missing Template Error: $3" >&2; exit 1;; esac
cat '${join(fixtures, "time-profiler.toc.xml")}'
`,
  );
  chmodSync(join(fakeBin, "xctrace"), 0o755);
  return { project, fakeBin };
}

function storedObjects(project: string): number {
  const root = join(project, ".diagnostics", "artifacts", "sha256");
  return existsSync(root) ? readdirSync(root).flatMap((prefix) => readdirSync(join(root, prefix))).length : 0;
}

test("without xctrace the import is CAPABILITY_UNAVAILABLE and stores nothing; with it, the package and its TOC summary are kept", async () => {
  const { project, fakeBin } = xctraceProject();
  session = await connectMcp(project, ["--init"]);
  const missing = await callTool(session, "import_xctrace", { path: "sample.trace" });
  expect(missing.isError).toBe(true);
  expect(missing.envelope.error.code).toBe("CAPABILITY_UNAVAILABLE");
  expect(missing.envelope.error.details.missing_executable).toBe("xctrace");
  expect(missing.envelope.error.recovery.next_tool).toBe("list_capabilities");
  expect(storedObjects(project)).toBe(0);
  expect((await callTool(session, "list_runs", { limit: 10 })).envelope.result.total).toBe(0);
  await session.close();

  session = await connectMcp(project, [], { PATH: `${fakeBin}:${toolPath()}` });
  const imported = await callTool(session, "import_xctrace", { path: "sample.trace" });
  expect(imported.envelope.error).toBeNull();
  const result = imported.envelope.result;
  expect(result.sensitivity).toBe("sensitive");
  expect(result.package).toMatchObject({ display_name: "sample.trace", entries: 10, media_type: "application/x-tar" });
  expect(result.toc.run_count).toBe(2);
  expect(result.toc.runs[0]).toMatchObject({ template_name: "Time Profiler", duration_seconds: 5.111049, table_count: 8 });
  expect(result.xctrace_version).toBe("15.2 (15C500b)");
  expect(JSON.stringify(result)).not.toContain(project);
  expect(JSON.stringify(imported.envelope).length).toBeLessThan(8000);
  const artifact = await callTool(session, "get_artifact", { artifact_id: result.artifact_id });
  expect(artifact.envelope.result.effective_sensitivity).toBe("sensitive");
  expect(artifact.envelope.result.registrations[0]).toMatchObject({
    role: "xctrace_package",
    producer: "xctrace",
    format: "xctrace_trace_package",
  });
  const run = await callTool(session, "get_run", { run_id: result.run_id });
  expect(run.envelope.result.artifacts.map((entry: any) => entry.role)).toEqual(["xctrace_package", "xctrace_toc", "xctrace_toc_summary"]);

  // The package is a content identity: the same folder imported again (here by the CLI) is the same artifact.
  const cli = runCli(["--json", "--project-root", project, "import-xctrace", join(project, "sample.trace")], {
    env: { PATH: `${fakeBin}:${toolPath()}` },
  });
  expect(cli.exitCode).toBe(0);
  expect(cli.json.artifact_id).toBe(result.artifact_id);
  expect(cli.json.run_id).not.toBe(result.run_id);
  const withoutXctrace = runCli(["--json", "--project-root", project, "import-xctrace", join(project, "sample.trace")]);
  expect(withoutXctrace.exitCode).toBe(3);
  expect(withoutXctrace.json.error.code).toBe("CAPABILITY_UNAVAILABLE");
});

test("a file, a missing folder and a package xctrace cannot read are refused with nothing stored", async () => {
  const { project, fakeBin } = xctraceProject();
  writeFileSync(join(project, "not-a-package.trace"), "plain file\n");
  session = await connectMcp(project, ["--init"], { PATH: `${fakeBin}:${toolPath()}` });
  const file = await callTool(session, "import_xctrace", { path: "not-a-package.trace" });
  expect(file.envelope.error.code).toBe("EXECUTION_REFUSED");
  expect(file.envelope.error.recovery.next_tool).toBe("import_xctrace");
  mkdirSync(join(project, "broken.trace"));
  const broken = await callTool(session, "import_xctrace", { path: "broken.trace" });
  expect(broken.envelope.error.code).toBe("PROCESS_FAILED");
  expect(broken.envelope.error.details.stderr_tail).toBe("Document Missing Template Error: broken.trace");
  const outside = await callTool(session, "import_xctrace", { path: "../" });
  expect(outside.envelope.error.code).toBe("EXECUTION_REFUSED");
  expect(storedObjects(project)).toBe(0);
});
