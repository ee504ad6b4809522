/**
 * A capture records the source and environment identity of its run whether the collector ends before
 * the identity probes are due to start (they then run once it has ended) or runs past that point (they
 * run meanwhile): real captures of a Python workload through the services.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Services } from "../../../src/services/services.ts";
import { temporaryFolder } from "../../support/binary.ts";
import { python } from "../../support/project.ts";
import { configureGatedWorkload, gateFile } from "./gated-workload.ts";

setDefaultTimeout(60_000);

async function capture(services: Services, name: string, onProgress: (message: string) => void = () => {}) {
  const plan = await services.captures.plan({
    workload_name: name,
    adapter: "command",
    parameters: {},
    adapter_options: {},
    preflight_mode: "passive",
    capture_mode: "auto",
  });
  const receipt = await services.captures.execute(plan.plan_id, { progress: (_progress, _total, message) => onProgress(message) });
  expect(receipt.execution_status).toBe("succeeded");
  return services.runs.getRun(receipt.run_id);
}

test("source and environment identity are recorded for a collector that ends at once and for one that runs on", async () => {
  const root = temporaryFolder("capture-identity");
  const services = new Services({ projectRoot: root, progressHeartbeatMs: 50 });
  try {
    await services.workspaces.initialize();
    const gate = join(root, gateFile);
    await services.workloads.configure({
      name: "instant",
      operation: "create",
      argv: [python(), "-c", "pass"],
      timeout_seconds: 30,
    } as never);
    await configureGatedWorkload(services, "gated", 30);
    const instant = await capture(services, "instant");
    let heartbeats = 0;
    // Ten heartbeats of 50 ms while the workload waits: well past the moment the probes start.
    const gated = await capture(services, "gated", (message) => {
      if (message.includes("still running")) heartbeats += 1;
      if (heartbeats >= 10 && !existsSync(gate)) writeFileSync(gate, "");
    });
    for (const run of [instant, gated]) {
      expect(run.source_state_id).toMatch(/^sha256:/);
      expect((run.source as { quality?: string } | null)?.quality).toBe("not_a_repository");
      expect(run.environment_id).toMatch(/^sha256:/);
      const interpreter = (run.environment as { interpreter?: { kind?: string; python?: { version?: string } } } | null)?.interpreter;
      expect(interpreter?.kind).toBe("python");
      expect(interpreter?.python?.version).toMatch(/^3\.\d+/);
    }
    expect(gated.environment_id).toBe(instant.environment_id);
  } finally {
    services.close();
  }
});
