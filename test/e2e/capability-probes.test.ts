import { expect, test, setDefaultTimeout } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
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
  // Reuse is decided by the probe's recorded age (probed_at) against a 10-minute TTL, read from the cache
  // file: the second call comes well within it on any machine.
  const second = runCli(["--project-root", project, "capabilities", "--active", "--adapter", "py-spy", "--json"]);
  expect(second.json.capabilities[0].probed_at).toBe(report.probed_at);
  const refreshed = runCli(["--project-root", project, "capabilities", "--refresh", "--adapter", "py-spy", "--json"]);
  expect(Date.parse(refreshed.json.capabilities[0].probed_at)).toBeGreaterThan(Date.parse(report.probed_at));

  // Past the TTL the probe runs again. The service takes no injected clock, so the test ages the recorded
  // probe instead of waiting ten minutes.
  const cachePath = join(project, ".diagnostics", "tools", "capability-probes.json");
  const cache = JSON.parse(readFileSync(cachePath, "utf8"));
  const aged = new Date(Date.now() - 11 * 60 * 1000).toISOString();
  cache["py-spy"].report.probed_at = aged;
  writeFileSync(cachePath, JSON.stringify(cache));
  const expired = runCli(["--project-root", project, "capabilities", "--active", "--adapter", "py-spy", "--json"]);
  expect(expired.json.capabilities[0].status).toBe("available");
  expect(Date.parse(expired.json.capabilities[0].probed_at)).toBeGreaterThan(Date.parse(refreshed.json.capabilities[0].probed_at));
  // Passive runs nothing but shows the recent probe it finds cached, so it never calls an adapter unknown
  // that plan_capture's preflight has just accepted.
  const passive = runCli(["--project-root", project, "capabilities", "--adapter", "py-spy", "--json"]);
  expect(passive.json.capabilities[0].probe_kind).toBe("active");
  expect(passive.json.capabilities[0].status).toBe("available");
  expect(passive.json.capabilities[0].probed_at).toBe(expired.json.capabilities[0].probed_at);
  // Without a probe it stays unknown, and its remedy is to plan directly, not to probe first.
  const fresh = temporaryFolder("probes-fresh");
  expect(runCli(["init", fresh, "--json"]).exitCode).toBe(0);
  const unprobed = runCli(["--project-root", fresh, "capabilities", "--adapter", "py-spy", "--json"]).json.capabilities[0];
  expect(unprobed.probe_kind).toBe("passive");
  expect(unprobed.status).toBe("unknown");
  expect(unprobed.remediation[0]).toStartWith("Plan it directly: plan_capture (preflight_mode='auto', the default) checks");
});
