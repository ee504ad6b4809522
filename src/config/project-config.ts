/**
 * Reading and validating `flameox.toml`. Reading never throws for a bad file: the status tool must
 * be able to report "invalid" with precise diagnostics so an agent (or a person) can repair it.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parse, TomlError } from "smol-toml";
import * as v from "valibot";
import { digestOf, sha256Hex } from "../domain/canonical-json.ts";
import { invalidArguments } from "../domain/errors.ts";
import {
  ProjectConfigSchema,
  WorkloadConfigSchema,
  type ProjectConfig,
  type WorkloadConfig,
  type WorkloadConfigInput,
} from "./project-config-schema.ts";
import { ConfigurationNameSchema } from "./schema-primitives.ts";
import { scanTemplate, workloadTemplateFields } from "./workload-template.ts";

export const projectConfigFileName = "flameox.toml";
export const maxProjectConfigBytes = 4 * 1024 * 1024;
export const maxDiagnostics = 8;
export const maxDiagnosticLength = 512;

export type ProjectConfigStatus = "missing" | "valid" | "invalid";

export type ProjectConfigRead = {
  status: ProjectConfigStatus;
  configPath: typeof projectConfigFileName;
  /** The decoded text, when the file exists and is UTF-8. */
  text?: string;
  /** The validated configuration with every default applied (valid only). */
  config?: ProjectConfig;
  /** `sha256:<hex>` of the file's raw bytes whenever the file exists (valid or invalid); null when missing. */
  configurationId: string | null;
  diagnostics: string[];
};

export type ProjectConfigParse =
  | { ok: true; config: ProjectConfig; document: Record<string, unknown> }
  | { ok: false; stage: "encoding" | "syntax" | "schema" | "references"; diagnostics: string[]; document?: Record<string, unknown> };

export function configurationIdOfBytes(bytes: Uint8Array): string {
  return `sha256:${sha256Hex(bytes)}`;
}

export function configurationIdOfText(text: string): string {
  return configurationIdOfBytes(new TextEncoder().encode(text));
}

function bounded(diagnostics: string[]): string[] {
  return diagnostics
    .slice(0, maxDiagnostics)
    .map((diagnostic) => (diagnostic.length > maxDiagnosticLength ? `${diagnostic.slice(0, maxDiagnosticLength - 1)}…` : diagnostic));
}

const barePathKey = /^[A-Za-z0-9_-]+$/;

/** A field path the way a person would find it in the TOML: `workloads.bench.argv.0`. */
export function formatFieldPath(path: readonly (string | number)[]): string {
  if (path.length === 0) return "(top level)";
  return path.map((key) => (typeof key === "number" || barePathKey.test(key) ? String(key) : JSON.stringify(key))).join(".");
}

function issueDiagnostic(issue: v.BaseIssue<unknown>): string {
  const path = (issue.path ?? []).map((item) => item.key as string | number);
  // valibot reports both an unknown key and a missing required key as a strict_object issue on that key.
  if (issue.type === "strict_object" && path.length > 0) {
    const key = JSON.stringify(String(path[path.length - 1]!));
    const where = formatFieldPath(path.slice(0, -1));
    return issue.expected === "never" ? `${where}: unknown key ${key} is not allowed here` : `${where}: required key ${key} is missing`;
  }
  const received = issue.received && issue.type !== "raw_check" && issue.kind === "schema" ? ` (received ${issue.received})` : "";
  const message =
    issue.kind === "schema" && issue.message.startsWith("Invalid type:") ? `expected ${issue.expected ?? "another type"}` : issue.message;
  return `${formatFieldPath(path)}: ${message}${received}`;
}

/** Validates a decoded TOML document: schema first, then references between sections. */
export function validateProjectDocument(document: Record<string, unknown>): ProjectConfigParse {
  const result = v.safeParse(ProjectConfigSchema, document, { abortEarly: false });
  if (!result.success) return { ok: false, stage: "schema", diagnostics: bounded(result.issues.map(issueDiagnostic)), document };
  const problems = projectCrossReferenceProblems(result.output);
  if (problems.length > 0) return { ok: false, stage: "references", diagnostics: bounded(problems), document };
  return { ok: true, config: result.output, document };
}

function tomlDiagnostic(error: unknown): string {
  if (error instanceof TomlError) {
    const first = error.message.split("\n")[0]!.replace(/^Invalid TOML document:\s*/, "");
    const duplicate = /redefine/.test(first) ? " (a key or table is defined twice)" : "";
    return `${projectConfigFileName}:${error.line}:${error.column}: TOML syntax error: ${first}${duplicate}`;
  }
  return `${projectConfigFileName}: TOML syntax error: ${error instanceof Error ? error.message : String(error)}`;
}

/** Parses and validates TOML text; never throws for bad input. */
export function parseProjectConfigText(text: string): ProjectConfigParse {
  let document: Record<string, unknown>;
  try {
    // Prototype-named keys are refused outright; nothing legitimate is called __proto__.
    document = parse(text, { unsafeKeyBehaviour: "throw" }) as Record<string, unknown>;
  } catch (error) {
    return { ok: false, stage: "syntax", diagnostics: bounded([tomlDiagnostic(error)]) };
  }
  return validateProjectDocument(document);
}

/** Decodes file bytes as strict UTF-8 (a byte-order mark is kept so edits stay byte-exact). */
export function decodeProjectConfigBytes(bytes: Uint8Array): { ok: true; text: string } | { ok: false; diagnostic: string } {
  try {
    return { ok: true, text: new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes) };
  } catch {
    let offset = 0;
    // Find the first offending byte so the person can locate it.
    for (; offset < bytes.length; offset += 1) {
      try {
        new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(0, offset + 1), { stream: true });
      } catch {
        break;
      }
    }
    return {
      ok: false,
      diagnostic: `${projectConfigFileName}: not valid UTF-8 (first invalid byte near offset ${offset}); save the file as UTF-8`,
    };
  }
}

/** Reads `<projectRoot>/flameox.toml` and reports missing, valid or invalid. */
export async function readProjectConfig(projectRoot: string): Promise<ProjectConfigRead> {
  const base = { configPath: projectConfigFileName } as const;
  let bytes: Uint8Array;
  try {
    bytes = await readFile(join(projectRoot, projectConfigFileName));
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "ENOENT") {
      return { ...base, status: "missing", configurationId: null, diagnostics: ["No named workload configuration exists yet."] };
    }
    if (code === "EISDIR") {
      return { ...base, status: "invalid", configurationId: null, diagnostics: [`${projectConfigFileName} is a directory, not a file`] };
    }
    throw error;
  }
  const configurationId = configurationIdOfBytes(bytes);
  if (bytes.length > maxProjectConfigBytes) {
    return {
      ...base,
      status: "invalid",
      configurationId,
      diagnostics: [`${projectConfigFileName} is ${bytes.length} bytes; the limit is ${maxProjectConfigBytes}`],
    };
  }
  const decoded = decodeProjectConfigBytes(bytes);
  if (!decoded.ok) return { ...base, status: "invalid", configurationId, diagnostics: [decoded.diagnostic] };
  const parsed = parseProjectConfigText(decoded.text);
  if (!parsed.ok) return { ...base, status: "invalid", text: decoded.text, configurationId, diagnostics: parsed.diagnostics };
  const diagnostics = Object.keys(parsed.config.workloads).length === 0 ? ["No named workloads are declared yet."] : [];
  return { ...base, status: "valid", text: decoded.text, config: parsed.config, configurationId, diagnostics };
}

/** References between sections that a per-table schema cannot see. */
export function projectCrossReferenceProblems(config: ProjectConfig): string[] {
  const problems: string[] = [];
  const workloads = config.workloads;
  const path = (...keys: string[]) => formatFieldPath(keys);
  for (const [name, experiment] of Object.entries(config.experiments)) {
    if (!Object.hasOwn(workloads, experiment.workload)) {
      problems.push(
        `${path("experiments", name, "workload")}: experiment references unknown workload ${JSON.stringify(experiment.workload)}`,
      );
    }
  }
  for (const [name, experiment] of Object.entries(config.fault_experiments)) {
    const workload = workloads[experiment.workload];
    if (workload === undefined) {
      problems.push(
        `${path("fault_experiments", name, "workload")}: fault experiment references unknown workload ${JSON.stringify(experiment.workload)}`,
      );
      continue;
    }
    if (!Object.hasOwn(workload.parameters, experiment.endpoint_parameter)) {
      problems.push(
        `${path("fault_experiments", name, "endpoint_parameter")}: fault experiments must inject a declared workload parameter; ${JSON.stringify(experiment.endpoint_parameter)} is not a parameter of ${JSON.stringify(experiment.workload)}`,
      );
      continue;
    }
    const rendered = workloadTemplateFields({ argv: workload.argv, cwd: workload.cwd, environment: workload.environment }).some(
      ({ template }) => {
        const scan = scanTemplate(template);
        return scan.ok && scan.placeholders.includes(experiment.endpoint_parameter);
      },
    );
    if (!rendered) {
      problems.push(
        `${path("fault_experiments", name, "endpoint_parameter")}: endpoint_parameter ${JSON.stringify(experiment.endpoint_parameter)} must be rendered by the workload's argv, cwd or environment`,
      );
    }
  }
  for (const [name, server] of Object.entries(config.inference_servers)) {
    if (server.workload !== undefined && !Object.hasOwn(workloads, server.workload)) {
      problems.push(
        `${path("inference_servers", name, "workload")}: inference server references unknown workload ${JSON.stringify(server.workload)}`,
      );
    }
  }
  for (const [name, scenario] of Object.entries(config.inference_scenarios)) {
    const server = config.inference_servers[scenario.server];
    if (server === undefined) {
      problems.push(
        `${path("inference_scenarios", name, "server")}: scenario references unknown server ${JSON.stringify(scenario.server)}`,
      );
    } else if ((scenario.provider === "sglang_bench") !== (server.provider === "sglang")) {
      problems.push(
        `${path("inference_scenarios", name, "provider")}: sglang_bench scenarios pair with sglang servers only (server ${JSON.stringify(scenario.server)} is ${server.provider})`,
      );
    }
    if (scenario.semantic_oracle_workload !== undefined) {
      const oracleWorkload = workloads[scenario.semantic_oracle_workload];
      if (oracleWorkload === undefined) {
        problems.push(
          `${path("inference_scenarios", name, "semantic_oracle_workload")}: unknown oracle workload ${JSON.stringify(scenario.semantic_oracle_workload)}`,
        );
      } else if (oracleWorkload.oracle?.strength !== "contract_check" || oracleWorkload.oracle.receipt_schema === undefined) {
        problems.push(
          `${path("inference_scenarios", name, "semantic_oracle_workload")}: oracle workloads must declare a contract_check oracle with a receipt_schema`,
        );
      }
    }
  }
  return problems;
}

/**
 * Applies every default to a workload definition, so hand-written and generated spellings of the
 * same definition compare equal. Throws INVALID_ARGUMENTS naming each bad field.
 */
export function normalizeWorkloadDefinition(
  definition: WorkloadConfigInput | WorkloadConfig,
  subject = "configure_workload",
): WorkloadConfig {
  const result = v.safeParse(WorkloadConfigSchema, definition, { abortEarly: false });
  if (result.success) return result.output;
  throw invalidArguments(
    subject,
    result.issues.slice(0, 32).map((issue) => {
      const field = formatFieldPath((issue.path ?? []).map((item) => item.key as string | number));
      const text = issueDiagnostic(issue);
      return { field, message: text.slice(text.indexOf(": ") + 2), type: issue.type };
    }),
  );
}

export function validateConfigurationName(name: string, subject = "configure_workload"): string {
  const result = v.safeParse(ConfigurationNameSchema, name);
  if (result.success) return result.output;
  throw invalidArguments(subject, [{ field: "name", message: result.issues[0].message, type: result.issues[0].type }]);
}

/** `sha256:` digest of the canonical `{name, definition}` with all defaults applied. */
export function workloadDefinitionId(name: string, workload: WorkloadConfigInput | WorkloadConfig): string {
  return digestOf({ name, definition: normalizeWorkloadDefinition(workload) });
}
