// In-process harness for adapter integration tests: a temp project with a workspace, declared
// workloads, and plan → execute through the real capture service (real tools, real broker).
import { cpSync } from "node:fs";
import { join, resolve } from "node:path";
import { Services } from "../../../src/services/services.ts";
import { FlameoxError } from "../../../src/domain/errors.ts";
import { temporaryFolder } from "../../support/temporary-folders.ts";

export const repositoryRoot = resolve(import.meta.dir, "../../..");
export const venvBin = join(repositoryRoot, ".tools", "venv", "bin");
export const venvPython = join(venvBin, "python");
export const pythonFixtures = join(repositoryRoot, "test", "fixtures", "python");

process.env.PATH = `${venvBin}:${process.env.PATH ?? ""}`;
process.env.PYTHONDONTWRITEBYTECODE = "1";

export async function project(prefix: string, fixtures: Record<string, string> = {}): Promise<{ root: string; services: Services }> {
  const root = temporaryFolder(prefix);
  for (const [target, source] of Object.entries(fixtures)) cpSync(source, join(root, target), { recursive: true });
  const services = new Services({ projectRoot: root });
  await services.workspaces.initialize();
  return { root, services };
}

export async function declare(services: Services, name: string, argv: string[], extra: Record<string, unknown> = {}): Promise<void> {
  await services.workloads.configure({ name, operation: "create", argv, timeout_seconds: 120, ...extra } as never);
}

export async function capture(services: Services, workload: string, adapter: string, adapterOptions: Record<string, unknown> = {}) {
  const plan = await services.captures.plan({
    workload_name: workload,
    adapter,
    parameters: {},
    adapter_options: adapterOptions,
    preflight_mode: "auto",
    capture_mode: "auto",
  });
  const receipt = await services.captures.execute(plan.plan_id);
  // Every receipt, with its first answer beside it, fits the default result budget of 8,000 characters
  // once wrapped in the envelope ({schema_version, ok, result, error}: 60 characters).
  const characters = JSON.stringify(receipt).length + 60;
  if (characters > 8_000) throw new Error(`The ${adapter} receipt is ${characters} characters, over the 8,000 budget.`);
  return receipt;
}

export async function failure(action: () => Promise<unknown>): Promise<FlameoxError> {
  try {
    await action();
  } catch (error) {
    if (error instanceof FlameoxError) return error;
    throw error;
  }
  throw new Error("expected a FlameoxError");
}
