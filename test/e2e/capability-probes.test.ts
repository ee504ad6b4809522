import { expect, test, setDefaultTimeout } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { runCli, temporaryFolder } from "../support/binary.ts";

// Each step starts the binary, and active probes run py-spy. The suite's default per-test deadline is 30 s (scripts/test-deadline.ts).
setDefaultTimeout(60_000);

test("active probes are reused across invocations for a while, and --refresh reruns them", () => {
  const project = temporaryFolder("probes");
  expect(runCli(["init", project, "--json"]).exitCode).toBe(0);
  const first = runCli(["--project-root", project, "capabilities", "--active", "--adapter", "py-spy", "--json"]);
  expect(first.exitCode).toBe(0);
  const report = first.json.capabilities[0];
  expect(report.status).toBe("available");
  expect(report.permission_status).toBe("granted");
  expect(existsSync(join(project, ".diagnostics", "tools", "capability-probes.json"))).toBe(true);
  const second = runCli(["--project-root", project, "capabilities", "--active", "--adapter", "py-spy", "--json"]);
  expect(second.json.capabilities[0].probed_at).toBe(report.probed_at);
  const refreshed = runCli(["--project-root", project, "capabilities", "--refresh", "--adapter", "py-spy", "--json"]);
  expect(refreshed.json.capabilities[0].probed_at).not.toBe(report.probed_at);
  const passive = runCli(["--project-root", project, "capabilities", "--adapter", "py-spy", "--json"]);
  expect(passive.json.capabilities[0].probe_kind).toBe("passive");
});
