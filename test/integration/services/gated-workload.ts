import type { Services } from "../../../src/services/services.ts";
import { python } from "../../support/project.ts";

/** The file whose creation (in the project root) lets a gated workload end. */
export const gateFile = "go";

/**
 * Declares a Python workload that runs until the test creates `gateFile` in the project root, so a
 * test observes what happens while it runs with no sleep standing in for it.
 */
export async function configureGatedWorkload(services: Services, name: string, timeoutSeconds: number): Promise<void> {
  await services.workloads.configure({
    name,
    operation: "create",
    argv: [python(), "-c", `import os, time\nwhile not os.path.exists(${JSON.stringify(gateFile)}):\n    time.sleep(0.01)`],
    timeout_seconds: timeoutSeconds,
  } as never);
}
