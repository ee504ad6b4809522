/**
 * Progress of a real capture through the services, with a 20 ms heartbeat: the workload waits until the
 * test has seen three "still running" notifications while it runs, so the heartbeat is observed during
 * the workload itself, with no sleep standing in for it.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Services } from "../../../src/services/services.ts";
import { progressPhases } from "../../../src/services/progress.ts";
import { temporaryFolder } from "../../support/binary.ts";
import { configureGatedWorkload, gateFile } from "./gated-workload.ts";

// One real capture of a Python process.
setDefaultTimeout(60_000);

test("a capture reports every phase in order, monotonic, and repeats itself while the workload runs", async () => {
  const root = temporaryFolder("capture-progress");
  const services = new Services({ projectRoot: root, progressHeartbeatMs: 20 });
  await services.workspaces.initialize();
  const gate = join(root, gateFile);
  await configureGatedWorkload(services, "gated", 60);
  const plan = await services.captures.plan({
    workload_name: "gated",
    adapter: "command",
    parameters: {},
    adapter_options: {},
    preflight_mode: "passive",
    capture_mode: "auto",
  });
  expect(plan.execution_guidance.recommended_tool).toBe("start_detached_capture");
  expect(plan.execution_guidance.reason).toContain("timeout_seconds is 60 (over 45 s)");
  const notes: { progress: number; total: number; message: string }[] = [];
  const receipt = await services.captures.execute(plan.plan_id, {
    progress: (progress, total, message) => {
      notes.push({ progress, total, message });
      const running = notes.filter((note) => note.message.startsWith("capturing: workload running (still running")).length;
      if (running === 3 && !existsSync(gate)) writeFileSync(gate, "");
    },
  });
  services.close();
  expect(receipt.execution_status).toBe("succeeded");
  const progress = notes.map((note) => note.progress);
  expect(progress).toEqual([...progress].sort((left, right) => left - right));
  expect(new Set(progress).size).toBe(progress.length);
  for (const note of notes) expect(note.message).toMatch(/\d s elapsed\)$/);
  const phases = notes.map((note) => note.message.split(":")[0]);
  const order = [...new Set(phases)];
  expect(order).toEqual(progressPhases.filter((phase) => phase !== "analyzing"));
  expect(notes.filter((note) => note.message.includes("still running")).length).toBeGreaterThanOrEqual(3);
  expect(notes[notes.length - 1]!.progress).toBe(8);
});
