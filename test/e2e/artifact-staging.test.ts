import { expect, setDefaultTimeout, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { callTool, connectMcp, runCli, temporaryFolder } from "../support/binary.ts";
import { waitFor } from "../support/wait.ts";

setDefaultTimeout(120_000);

/** Every entry under the workspace's staging folder, one level into each process's folder. */
function stagingEntries(project: string): string[] {
  const staging = join(project, ".diagnostics", "staging");
  if (!existsSync(staging)) return [];
  return readdirSync(staging).flatMap((name) => [name, ...readdirSync(join(staging, name)).map((entry) => `${name}/${entry}`)]);
}

/** A Chrome trace of a few MB: large enough that its staged copy is more than a page or two. */
function traceBytes(): string {
  const events = Array.from(
    { length: 60_000 },
    (_, index) => `{"name":"op_${index % 40}","cat":"cpu_op","ph":"X","ts":${index * 3},"dur":2,"pid":1,"tid":1}`,
  );
  return `{"traceEvents":[${events.join(",")}]}`;
}

test("the same bytes imported again, by the CLI and by a live server, are one object and leave no staged copy behind", async () => {
  const project = temporaryFolder("artifact-staging");
  expect(runCli(["init", project, "--json"]).exitCode).toBe(0);
  const bytes = traceBytes();
  writeFileSync(join(project, "trace.json"), bytes);
  const hex = createHash("sha256").update(bytes).digest("hex");

  const imports = [0, 1].map(() =>
    runCli(["--project-root", project, "import", "trace.json", "--kind", "execution_trace", "--json"], { cwd: project }),
  );
  for (const imported of imports) {
    expect(imported.exitCode).toBe(0);
    expect(imported.json.artifact_id).toBe(`sha256:${hex}`);
    expect(imported.json.evidence.status).toBe("available");
  }
  // Each CLI process has exited: its staging folder, the second import's dropped copy included, is gone.
  expect(stagingEntries(project)).toEqual([]);

  const session = await connectMcp(project);
  try {
    for (let round = 0; round < 2; round++) {
      const imported = await callTool(session, "import_artifact", { path: "trace.json", kind: "execution_trace" });
      expect(imported.envelope.ok).toBe(true);
      expect(imported.envelope.result.artifact_id).toBe(`sha256:${hex}`);
    }
    // The server lives on: its own folder stays, but the copies of bytes already stored do not.
    await waitFor("the server's duplicate staged copies to be removed", () =>
      stagingEntries(project).every((entry) => !entry.includes("/artifact-")),
    );
  } finally {
    await session.close();
  }

  const folder = join(project, ".diagnostics", "artifacts", "sha256", hex.slice(0, 2), hex);
  expect(readdirSync(folder)).toEqual(["payload.json"]);
  expect(
    createHash("sha256")
      .update(readFileSync(join(folder, "payload.json")))
      .digest("hex"),
  ).toBe(hex);
  const validated = runCli(["--project-root", project, "validate", "--full", "--json"]);
  expect({ exit: validated.exitCode, issues: validated.json.issues }).toEqual({ exit: 0, issues: [] });
});
