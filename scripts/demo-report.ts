/**
 * The demo's last step: `flameox report` for the sample project's capture, written inside the
 * (temporary) project, returning the path the binary printed.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";

export async function writeDemoReport(binary: string, projectRoot: string, runId: string): Promise<string> {
  const output = join(projectRoot, "flameox-report.html");
  const result = spawnSync(
    binary,
    ["--project-root", projectRoot, "--json", "report", runId, "--output", output, "--title", "flameox demo · sample project"],
    {
      cwd: projectRoot,
      encoding: "utf8",
    },
  );
  if (result.status !== 0) {
    throw new Error(`flameox report failed (exit ${result.status ?? result.signal}): ${result.stdout}${result.stderr}`);
  }
  const summary = JSON.parse(result.stdout) as { path: string };
  return summary.path;
}
