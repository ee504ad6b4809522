/**
 * Surgical edits of one named table of `flameox.toml` (`[workloads.<name>]` for configure_workload,
 * `[experiments.<name>]` for configure_experiment). Only that table and its sub-tables change; every other
 * byte (comments, layout, other tables) is kept. The whole resulting file is re-parsed and validated before
 * anything is returned, and a replace is a compare-and-swap on the configuration digest.
 */
import { canonicalJson } from "../domain/canonical-json.ts";
import { executionRefused, type FlameoxError, invalidConfiguration, type NextStep, staleInput } from "../domain/errors.ts";
import type { ProjectConfig } from "./project-config-schema.ts";
import { configurationIdOfText, parseProjectConfigText, projectConfigFileName } from "./project-config.ts";
import { tableSpans } from "./toml-text.ts";

/** What differs between the sections an agent may edit: names, rendering, and where to look next. */
export type SectionSpec<Definition> = {
  section: "workloads" | "experiments";
  /** "Workload" / "Experiment", for messages. */
  label: string;
  /** The tool that edits this section. */
  tool: "configure_workload" | "configure_experiment";
  /** Where an agent reads the current configuration_id and the declaration. */
  inspect(name: string): NextStep;
  render(name: string, definition: Definition, eol: string): string;
  definitionId(name: string, definition: Definition): string;
};

export type SectionEditRequest<Definition> = {
  currentText: string | null;
  name: string;
  /** Already normalized: every default applied. */
  definition: Definition;
  operation: "create" | "replace";
  expectedConfigurationId?: string | null;
};

export type SectionEditPlan = {
  action: "created" | "updated" | "unchanged";
  /** The complete new file text (the current text when unchanged). */
  text: string;
  /** `sha256:` of the new text's UTF-8 bytes. */
  configurationId: string;
  /** `sha256:` of the current bytes, null when there was no file; pass it to writeProjectConfigAtomically. */
  previousConfigurationId: string | null;
  config: ProjectConfig;
};

const manualRemediation = ["Edit flameox.toml by hand until it parses and validates, then call workload_configuration_status to verify."];

export function lineEndingOf(text: string): string {
  return text.includes("\r\n") ? "\r\n" : "\n";
}

function appendTable<Definition>(spec: SectionSpec<Definition>, currentText: string | null, name: string, definition: Definition): string {
  if (currentText === null || currentText.length === 0) return `schema_version = 1\n\n${spec.render(name, definition, "\n")}`;
  const eol = lineEndingOf(currentText);
  let prefix = currentText;
  if (!prefix.endsWith("\n")) prefix += eol;
  if (!prefix.endsWith(eol + eol) && prefix.trim().length > 0) prefix += eol;
  return prefix + spec.render(name, definition, eol);
}

function notSurgicallyEditable(spec: SectionSpec<unknown>, name: string, reason: string): FlameoxError {
  const inspect = spec.inspect(name);
  return executionRefused(`${spec.label} '${name}' cannot be edited in place: ${reason}`, {
    details: { name, config_path: projectConfigFileName, next_tool: inspect.tool },
    remediation: [
      `Write ${spec.label.toLowerCase()} '${name}' as a [${spec.section}.${name}] table (no inline table or dotted keys elsewhere), or edit flameox.toml by hand.`,
    ],
    next: inspect,
  });
}

function replaceTable<Definition>(spec: SectionSpec<Definition>, currentText: string, name: string, definition: Definition): string {
  const spans = tableSpans(currentText, [spec.section, name]);
  if (spans.length === 0)
    throw notSurgicallyEditable(
      spec as SectionSpec<unknown>,
      name,
      "it is declared inline or with dotted keys rather than as its own table.",
    );
  const table = spec.render(name, definition, lineEndingOf(currentText));
  let out = currentText.slice(0, spans[0]!.start) + table;
  let cursor = spans[0]!.end;
  for (const span of spans.slice(1)) {
    out += currentText.slice(cursor, span.start);
    cursor = span.end;
  }
  return out + currentText.slice(cursor);
}

function withoutEntry(document: Record<string, unknown>, section: string, name: string): string {
  const entries = { ...((document[section] as Record<string, unknown> | undefined) ?? {}) };
  delete entries[name];
  return canonicalJson({ ...document, [section]: entries });
}

function verifyCandidate<Definition>(
  spec: SectionSpec<Definition>,
  text: string,
  request: { name: string; definition: Definition },
  previous: { document: Record<string, unknown> } | null,
  repairing: { diagnostics: string[] } | null,
): ProjectConfig {
  const { name, definition } = request;
  const parsed = parseProjectConfigText(text);
  if (!parsed.ok) {
    const diagnostic = parsed.diagnostics[0] ?? "invalid configuration";
    if (repairing) {
      const original = repairing.diagnostics[0] ?? diagnostic;
      throw invalidConfiguration(`Project ${spec.label.toLowerCase()} configuration is invalid: ${original}`, {
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
    if (parsed.stage === "syntax")
      throw notSurgicallyEditable(spec as SectionSpec<unknown>, name, `the edited file would not parse (${diagnostic}).`);
    throw invalidConfiguration(`Project ${spec.label.toLowerCase()} configuration is invalid: ${diagnostic}`, {
      repairable: true,
      repairTool: spec.tool,
      details: { config_path: projectConfigFileName, diagnostic: diagnostic.slice(0, 500), diagnostics: parsed.diagnostics },
      remediation: [`Change the ${spec.label.toLowerCase()} definition so the whole project configuration validates; nothing was written.`],
    });
  }
  const written = (parsed.config[spec.section] as Record<string, unknown>)[name];
  if (written === undefined || canonicalJson(written) !== canonicalJson(definition)) {
    throw notSurgicallyEditable(spec as SectionSpec<unknown>, name, "parts of it are declared outside its own table.");
  }
  if (previous && withoutEntry(previous.document, spec.section, name) !== withoutEntry(parsed.document, spec.section, name)) {
    throw notSurgicallyEditable(spec as SectionSpec<unknown>, name, "the edit would change other declarations.");
  }
  return parsed.config;
}

function staleConfiguration(spec: SectionSpec<unknown>, name: string, currentId: string | null, expected: string | null): FlameoxError {
  const inspect = spec.inspect(name);
  return staleInput(
    expected === null
      ? `Replacing ${spec.label.toLowerCase()} '${name}' needs expected_configuration_id, the current configuration_id from ${inspect.tool}.`
      : `flameox.toml changed: expected configuration ${expected}, found ${currentId ?? "no file"}.`,
    {
      details: {
        configuration_id: currentId,
        expected_configuration_id: expected,
        config_path: projectConfigFileName,
        next_tool: inspect.tool,
      },
      remediation: [`Call ${inspect.tool}, review the current configuration, and retry with its configuration_id.`],
      fresh: inspect,
    },
  );
}

type Current = { text: string | null; id: string | null; parsed: ReturnType<typeof parseProjectConfigText> | null };

function planReplace<Definition>(spec: SectionSpec<Definition>, request: SectionEditRequest<Definition>, current: Current) {
  const { name, definition } = request;
  if (current.parsed !== null && !current.parsed.ok) {
    throw invalidConfiguration(
      `Project ${spec.label.toLowerCase()} configuration is invalid: ${current.parsed.diagnostics[0] ?? "invalid configuration"}`,
      {
        repairable: true,
        repairTool: spec.tool,
        details: {
          config_path: projectConfigFileName,
          diagnostic: (current.parsed.diagnostics[0] ?? "").slice(0, 500),
          diagnostics: current.parsed.diagnostics,
        },
        remediation: ['Use operation "create" with a definition that makes the whole file valid, or repair flameox.toml by hand.'],
      },
    );
  }
  const existing = current.parsed?.ok ? (current.parsed.config[spec.section] as Record<string, unknown>)[name] : undefined;
  if (current.parsed === null || !current.parsed.ok || existing === undefined) {
    throw staleInput(`${spec.label} '${name}' is not declared, so it cannot be replaced.`, {
      details: { name, configuration_id: current.id, config_path: projectConfigFileName, next_tool: spec.tool },
      remediation: [`Use operation "create" to declare ${spec.label.toLowerCase()} '${name}'.`],
      fresh: { tool: spec.tool },
    });
  }
  const expected = request.expectedConfigurationId ?? null;
  if (expected !== current.id) throw staleConfiguration(spec as SectionSpec<unknown>, name, current.id, expected);
  if (canonicalJson(existing) === canonicalJson(definition))
    return { action: "unchanged" as const, text: current.text!, config: current.parsed.config };
  const text = replaceTable(spec, current.text!, name, definition);
  return { action: "updated" as const, text, config: verifyCandidate(spec, text, request, current.parsed, null) };
}

function planCreate<Definition>(spec: SectionSpec<Definition>, request: SectionEditRequest<Definition>, current: Current) {
  const { name, definition } = request;
  const expected = request.expectedConfigurationId ?? null;
  if (expected !== null && expected !== current.id) throw staleConfiguration(spec as SectionSpec<unknown>, name, current.id, expected);
  if (current.parsed?.ok) {
    const existing = (current.parsed.config[spec.section] as Record<string, Definition>)[name];
    if (existing !== undefined) {
      if (canonicalJson(existing) === canonicalJson(definition))
        return { action: "unchanged" as const, text: current.text!, config: current.parsed.config };
      const inspect = spec.inspect(name);
      const kind = spec.label.toLowerCase();
      throw executionRefused(`${spec.label} '${name}' already exists with a different definition; create never overwrites.`, {
        details: {
          name,
          configuration_id: current.id,
          [`existing_${kind}_definition_id`]: spec.definitionId(name, existing),
          [`requested_${kind}_definition_id`]: spec.definitionId(name, definition),
          next_tool: inspect.tool,
        },
        remediation: [`Inspect the current configuration, then use operation "replace" with its configuration_id to change '${name}'.`],
        next: inspect,
      });
    }
  }
  // Repairing an invalid (but parseable) file may rewrite a broken declaration of this very name.
  const repairInPlace =
    current.text !== null &&
    current.parsed !== null &&
    !current.parsed.ok &&
    current.parsed.stage !== "syntax" &&
    tableSpans(current.text, [spec.section, name]).length > 0;
  const text = repairInPlace ? replaceTable(spec, current.text!, name, definition) : appendTable(spec, current.text, name, definition);
  const repairing = current.parsed !== null && !current.parsed.ok ? { diagnostics: current.parsed.diagnostics } : null;
  const previous = current.parsed?.ok ? current.parsed : null;
  return { action: "created" as const, text, config: verifyCandidate(spec, text, request, previous, repairing) };
}

/**
 * Plans a create or replace of one table against the current file text (null: no file). Pure: the caller
 * writes `text` with writeProjectConfigAtomically unless the action is "unchanged".
 */
export function planSectionEdit<Definition>(spec: SectionSpec<Definition>, request: SectionEditRequest<Definition>): SectionEditPlan {
  const text = request.currentText;
  const current: Current = {
    text,
    id: text === null ? null : configurationIdOfText(text),
    parsed: text === null ? null : parseProjectConfigText(text),
  };
  const planned = request.operation === "replace" ? planReplace(spec, request, current) : planCreate(spec, request, current);
  return {
    ...planned,
    configurationId: planned.action === "unchanged" && current.id !== null ? current.id : configurationIdOfText(planned.text),
    previousConfigurationId: current.id,
  };
}
