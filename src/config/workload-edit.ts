/**
 * Surgical edits of `flameox.toml` for configure_workload. Only the `[workloads.<name>]` table and
 * its sub-tables change; every other byte (comments, layout, other tables) is kept. The whole
 * resulting file is re-parsed and validated before anything is returned.
 */
import { randomUUID } from "node:crypto";
import { open, readFile, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { canonicalJson, digestOf } from "../domain/canonical-json.ts";
import { executionRefused, type FlameoxError, invalidConfiguration, staleInput } from "../domain/errors.ts";
import type { ProjectConfig, WorkloadConfig, WorkloadConfigInput } from "./project-config-schema.ts";
import { workloadDefaults } from "./project-config-schema.ts";
import {
  configurationIdOfBytes,
  configurationIdOfText,
  normalizeWorkloadDefinition,
  parseProjectConfigText,
  projectConfigFileName,
  validateConfigurationName,
} from "./project-config.ts";
import { renderTomlKey, renderTomlValue, tableSpans } from "./toml-text.ts";

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

const manualRemediation = ["Edit flameox.toml by hand until it parses and validates, then call workload_configuration_status to verify."];

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

function lineEndingOf(text: string): string {
  return text.includes("\r\n") ? "\r\n" : "\n";
}

function appendTable(currentText: string | null, name: string, definition: WorkloadConfig): string {
  if (currentText === null || currentText.length === 0) {
    return `schema_version = 1\n\n${renderWorkloadTable(name, definition)}`;
  }
  const eol = lineEndingOf(currentText);
  let prefix = currentText;
  if (!prefix.endsWith("\n")) prefix += eol;
  if (!prefix.endsWith(eol + eol) && prefix.trim().length > 0) prefix += eol;
  return prefix + renderWorkloadTable(name, definition, eol);
}

function notSurgicallyEditable(name: string, reason: string): FlameoxError {
  return executionRefused(`Workload '${name}' cannot be edited in place: ${reason}`, {
    details: { name, config_path: projectConfigFileName, next_tool: "workload_configuration_status" },
    remediation: [
      `Write workload '${name}' as a [workloads.${name}] table (no inline table or dotted keys elsewhere), or edit flameox.toml by hand.`,
    ],
    next: { tool: "workload_configuration_status", arguments: {} },
  });
}

function replaceTable(currentText: string, name: string, definition: WorkloadConfig): string {
  const spans = tableSpans(currentText, ["workloads", name]);
  if (spans.length === 0) throw notSurgicallyEditable(name, "it is declared inline or with dotted keys rather than as its own table.");
  const table = renderWorkloadTable(name, definition, lineEndingOf(currentText));
  let out = currentText.slice(0, spans[0]!.start) + table;
  let cursor = spans[0]!.end;
  for (const span of spans.slice(1)) {
    out += currentText.slice(cursor, span.start);
    cursor = span.end;
  }
  return out + currentText.slice(cursor);
}

function withoutWorkload(document: Record<string, unknown>, name: string): string {
  const workloads = { ...((document.workloads as Record<string, unknown> | undefined) ?? {}) };
  delete workloads[name];
  return canonicalJson({ ...document, workloads });
}

function verifyCandidate(
  text: string,
  name: string,
  definition: WorkloadConfig,
  previous: { document: Record<string, unknown> } | null,
  repairing: { diagnostics: string[] } | null,
): ProjectConfig {
  const parsed = parseProjectConfigText(text);
  if (!parsed.ok) {
    const diagnostic = parsed.diagnostics[0] ?? "invalid configuration";
    if (repairing) {
      const original = repairing.diagnostics[0] ?? diagnostic;
      throw invalidConfiguration(`Project workload configuration is invalid: ${original}`, {
        repairable: false,
        diagnostic: original,
        details: {
          config_path: projectConfigFileName,
          diagnostic: original.slice(0, 500),
          diagnostics: repairing.diagnostics,
          candidate_diagnostics: parsed.diagnostics,
        },
        remediation: manualRemediation,
      });
    }
    if (parsed.stage === "syntax") throw notSurgicallyEditable(name, `the edited file would not parse (${diagnostic}).`);
    throw invalidConfiguration(`Project workload configuration is invalid: ${diagnostic}`, {
      repairable: true,
      details: { config_path: projectConfigFileName, diagnostic: diagnostic.slice(0, 500), diagnostics: parsed.diagnostics },
      remediation: ["Change the workload definition so the whole project configuration validates; nothing was written."],
    });
  }
  const written = parsed.config.workloads[name];
  if (written === undefined || canonicalJson(written) !== canonicalJson(definition)) {
    throw notSurgicallyEditable(name, "parts of it are declared outside its own table.");
  }
  if (previous && withoutWorkload(previous.document, name) !== withoutWorkload(parsed.document, name)) {
    throw notSurgicallyEditable(name, "the edit would change other declarations.");
  }
  return parsed.config;
}

function staleConfiguration(currentId: string | null, expected: string | null): FlameoxError {
  return staleInput(
    expected === null
      ? "Replacing a workload needs expected_configuration_id, the current configuration_id from workload_configuration_status."
      : `flameox.toml changed: expected configuration ${expected}, found ${currentId ?? "no file"}.`,
    {
      details: {
        configuration_id: currentId,
        expected_configuration_id: expected,
        config_path: projectConfigFileName,
        next_tool: "workload_configuration_status",
      },
      remediation: ["Call workload_configuration_status, review the current configuration, and retry with its configuration_id."],
      fresh: { tool: "workload_configuration_status", arguments: {} },
    },
  );
}

/**
 * Plans a create or replace of one workload against the current file text (null: no file).
 * Pure: the caller writes `text` with writeProjectConfigAtomically unless the action is "unchanged".
 */
export function planWorkloadEdit(request: WorkloadEditRequest): WorkloadEditPlan {
  const name = validateConfigurationName(request.name);
  const definition = normalizeWorkloadDefinition(request.definition);
  const definitionId = digestOf({ name, definition });
  const currentText = request.currentText;
  const currentId = currentText === null ? null : configurationIdOfText(currentText);
  const current = currentText === null ? null : parseProjectConfigText(currentText);
  const expected = request.expectedConfigurationId ?? null;
  const result = (action: WorkloadEditPlan["action"], text: string, config: ProjectConfig): WorkloadEditPlan => ({
    action,
    text,
    configurationId: action === "unchanged" && currentId !== null ? currentId : configurationIdOfText(text),
    previousConfigurationId: currentId,
    workloadDefinitionId: definitionId,
    definition,
    config,
  });

  if (request.operation === "replace") {
    if (current !== null && !current.ok) {
      throw invalidConfiguration(`Project workload configuration is invalid: ${current.diagnostics[0] ?? "invalid configuration"}`, {
        repairable: true,
        details: {
          config_path: projectConfigFileName,
          diagnostic: (current.diagnostics[0] ?? "").slice(0, 500),
          diagnostics: current.diagnostics,
        },
        remediation: ['Use operation "create" with a definition that makes the whole file valid, or repair flameox.toml by hand.'],
      });
    }
    const existing = current?.ok ? current.config.workloads[name] : undefined;
    if (current === null || !current.ok || existing === undefined) {
      throw staleInput(`Workload '${name}' is not declared, so it cannot be replaced.`, {
        details: { name, configuration_id: currentId, config_path: projectConfigFileName, next_tool: "configure_workload" },
        remediation: [`Use operation "create" to declare workload '${name}'.`],
        fresh: { tool: "configure_workload" },
      });
    }
    if (expected !== currentId) throw staleConfiguration(currentId, expected);
    if (canonicalJson(existing) === canonicalJson(definition)) return result("unchanged", currentText!, current.config);
    const text = replaceTable(currentText!, name, definition);
    return result("updated", text, verifyCandidate(text, name, definition, current, null));
  }

  if (expected !== null && expected !== currentId) throw staleConfiguration(currentId, expected);
  if (current?.ok) {
    const existing = current.config.workloads[name];
    if (existing !== undefined) {
      if (canonicalJson(existing) === canonicalJson(definition)) return result("unchanged", currentText!, current.config);
      throw executionRefused(`Workload '${name}' already exists with a different definition; create never overwrites.`, {
        details: {
          name,
          configuration_id: currentId,
          existing_workload_definition_id: digestOf({ name, definition: existing }),
          requested_workload_definition_id: definitionId,
          next_tool: "workload_configuration_status",
        },
        remediation: [`Inspect the current configuration, then use operation "replace" with its configuration_id to change '${name}'.`],
        next: { tool: "workload_configuration_status", arguments: {} },
      });
    }
  }
  // Repairing an invalid (but parseable) file may rewrite a broken declaration of this very workload.
  const repairInPlace =
    currentText !== null &&
    current !== null &&
    !current.ok &&
    current.stage !== "syntax" &&
    tableSpans(currentText, ["workloads", name]).length > 0;
  const text = repairInPlace ? replaceTable(currentText, name, definition) : appendTable(currentText, name, definition);
  const repairing = current !== null && !current.ok ? { diagnostics: current.diagnostics } : null;
  return result("created", text, verifyCandidate(text, name, definition, current?.ok ? current : null, repairing));
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
  const temporary = join(projectRoot, `.${projectConfigFileName}.${process.pid}.${randomUUID()}.tmp`);
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
