/**
 * configure_workload's edit of `flameox.toml`: the canonical table of one workload, planned as a surgical
 * edit of `[workloads.<name>]` (section-edit.ts), and the atomic write every configure tool uses.
 */
import { open, readFile, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { digestOf } from "../domain/canonical-json.ts";
import { staleInput } from "../domain/errors.ts";
import type { ProjectConfig, WorkloadConfig, WorkloadConfigInput } from "./project-config-schema.ts";
import { workloadDefaults } from "./project-config-schema.ts";
import { configurationIdOfBytes, normalizeWorkloadDefinition, projectConfigFileName, validateConfigurationName } from "./project-config.ts";
import { planSectionEdit, type SectionSpec } from "./section-edit.ts";
import { renderTomlKey, renderTomlValue } from "./toml-text.ts";

export type WorkloadEditOperation = "create" | "replace";

export type WorkloadEditRequest = {
  currentText: string | null;
  name: string;
  definition: WorkloadConfigInput | WorkloadConfig;
  operation: WorkloadEditOperation;
  expectedConfigurationId?: string | null;
};

export type WorkloadEditPlan = {
  action: "created" | "updated" | "unchanged";
  /** The complete new file text (the current text when unchanged). */
  text: string;
  /** `sha256:` of the new text's UTF-8 bytes. */
  configurationId: string;
  /** `sha256:` of the current bytes, null when there was no file; pass it to writeProjectConfigAtomically. */
  previousConfigurationId: string | null;
  workloadDefinitionId: string;
  definition: WorkloadConfig;
  config: ProjectConfig;
};

function byName([left]: [string, unknown], [right]: [string, unknown]): number {
  return left < right ? -1 : left > right ? 1 : 0;
}

/** The canonical TOML of one workload: only non-default fields, sub-tables for maps and nested tables. */
export function renderWorkloadTable(name: string, definition: WorkloadConfig, eol = "\n"): string {
  const head = ["workloads", name].map(renderTomlKey).join(".");
  const line = (key: string, value: unknown) => `${renderTomlKey(key)} = ${renderTomlValue(value)}`;
  const blocks: string[][] = [];
  const main = [`[${head}]`, line("argv", definition.argv)];
  if (definition.cwd !== workloadDefaults.cwd) main.push(line("cwd", definition.cwd));
  if (definition.timeout_seconds !== workloadDefaults.timeout_seconds) main.push(line("timeout_seconds", definition.timeout_seconds));
  if (definition.writable_paths.length > 0) main.push(line("writable_paths", definition.writable_paths));
  blocks.push(main);
  for (const key of ["parameters", "environment"] as const) {
    const entries = Object.entries(definition[key]).sort(byName);
    if (entries.length > 0) blocks.push([`[${head}.${key}]`, ...entries.map(([entry, value]) => line(entry, value))]);
  }
  if (definition.oracle !== undefined) {
    const oracle = [`[${head}.oracle]`, line("strength", definition.oracle.strength)];
    if (definition.oracle.argv.length > 0) oracle.push(line("argv", definition.oracle.argv));
    if (definition.oracle.receipt_schema !== undefined) oracle.push(line("receipt_schema", definition.oracle.receipt_schema));
    blocks.push(oracle);
  }
  const requirements: string[] = [];
  for (const key of ["executables", "python_distributions", "capabilities", "optional", "active"] as const) {
    if (definition.requirements[key].length > 0) requirements.push(line(key, definition.requirements[key]));
  }
  if (definition.requirements.allow_exploratory) requirements.push(line("allow_exploratory", true));
  if (requirements.length > 0) blocks.push([`[${head}.requirements]`, ...requirements]);
  const identity: string[] = [];
  for (const key of ["python_modules", "native_files"] as const) {
    if (definition.identity[key].length > 0) identity.push(line(key, definition.identity[key]));
  }
  if (definition.identity.environment.required.length > 0)
    identity.push(line("environment", { required: definition.identity.environment.required }));
  if (identity.length > 0) blocks.push([`[${head}.identity]`, ...identity]);
  return blocks.map((block) => block.join(eol)).join(eol + eol) + eol;
}

const workloadSection: SectionSpec<WorkloadConfig> = {
  section: "workloads",
  label: "Workload",
  tool: "configure_workload",
  inspect: () => ({ tool: "workload_configuration_status", arguments: {} }),
  render: renderWorkloadTable,
  definitionId: (name, definition) => digestOf({ name, definition }),
};

/**
 * Plans a create or replace of one workload against the current file text (null: no file).
 * Pure: the caller writes `text` with writeProjectConfigAtomically unless the action is "unchanged".
 */
export function planWorkloadEdit(request: WorkloadEditRequest): WorkloadEditPlan {
  const name = validateConfigurationName(request.name);
  const definition = normalizeWorkloadDefinition(request.definition);
  const plan = planSectionEdit(workloadSection, { ...request, name, definition });
  return { ...plan, workloadDefinitionId: digestOf({ name, definition }), definition };
}

async function currentBytesDigest(target: string): Promise<string | null> {
  try {
    return configurationIdOfBytes(await readFile(target));
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") return null;
    throw error;
  }
}

/**
 * Writes `<projectRoot>/flameox.toml` atomically: temp file in the same directory, fsync, recheck
 * that the current bytes still have `expectedCurrentBytesDigest` (null: no file yet), rename.
 * The existing file mode is kept (new files get 0644). The caller holds the workspace write lock.
 */
export async function writeProjectConfigAtomically(
  projectRoot: string,
  text: string,
  expectedCurrentBytesDigest: string | null,
): Promise<{ configurationId: string }> {
  const target = join(projectRoot, projectConfigFileName);
  let mode = 0o644;
  try {
    mode = (await stat(target)).mode & 0o7777;
  } catch (error) {
    if ((error as { code?: string }).code !== "ENOENT") throw error;
  }
  const bytes = new TextEncoder().encode(text);
  const temporary = join(projectRoot, `.${projectConfigFileName}.${process.pid}.${crypto.randomUUID()}.tmp`);
  const handle = await open(temporary, "wx", mode);
  try {
    try {
      await handle.writeFile(bytes);
      await handle.chmod(mode);
      await handle.sync();
    } finally {
      await handle.close();
    }
    const currentDigest = await currentBytesDigest(target);
    if (currentDigest !== expectedCurrentBytesDigest) {
      throw staleInput("flameox.toml changed while the edit was being prepared; nothing was written.", {
        details: {
          configuration_id: currentDigest,
          expected_configuration_id: expectedCurrentBytesDigest,
          config_path: projectConfigFileName,
          next_tool: "workload_configuration_status",
        },
        remediation: ["Call workload_configuration_status and retry with the current configuration_id."],
        fresh: { tool: "workload_configuration_status", arguments: {} },
      });
    }
    await rename(temporary, target);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  try {
    // Make the rename itself durable; not every platform lets a directory be opened for sync.
    const directory = await open(projectRoot, "r");
    try {
      await directory.sync();
    } finally {
      await directory.close();
    }
  } catch {
    // Best effort only.
  }
  return { configurationId: configurationIdOfBytes(bytes) };
}
