/**
 * The workspace policy, `.diagnostics/config.toml`: limits, the resource sampling interval and
 * environment allowlist additions. Strict like flameox.toml: an unknown key is a refusal naming it,
 * because a misspelt limit silently falling back to its default would be worse than an error.
 */
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parse, TomlError } from "smol-toml";
import * as v from "valibot";
import { type FlameoxError, workspaceInvalid } from "../domain/errors.ts";
import { environmentNamePattern } from "./schema-primitives.ts";
import { formatFieldPath } from "./project-config.ts";

export const workspacePolicyPath = ".diagnostics/config.toml";

const gibibyte = 1024 ** 3;
const mebibyte = 1024 ** 2;

export const defaultWorkspacePolicy = Object.freeze({
  schema_version: 1 as const,
  limits: Object.freeze({
    max_artifact_bytes: 2 * gibibyte,
    max_output_bytes: 64 * mebibyte,
    max_row_limit: 1000,
    default_row_limit: 100,
    plan_ttl_seconds: 300,
    max_parallel_captures: 2,
    cleanup_grace_seconds: 5,
  }),
  sampling: Object.freeze({ resource_sample_interval_ms: 100 }),
  environment: Object.freeze({ allowlist_additions: Object.freeze([] as string[]) }),
});

const integerBetween = (min: number, max: number) => v.pipe(v.number(), v.safeInteger(), v.minValue(min), v.maxValue(max));
const limitDefaults = defaultWorkspacePolicy.limits;

export const WorkspacePolicySchema = v.pipe(
  v.strictObject({
    schema_version: v.optional(v.literal(1, "schema_version must be 1"), 1),
    limits: v.optional(
      v.strictObject({
        max_artifact_bytes: v.optional(integerBetween(1, 1024 * gibibyte), limitDefaults.max_artifact_bytes),
        max_output_bytes: v.optional(integerBetween(1024, 4 * gibibyte), limitDefaults.max_output_bytes),
        max_row_limit: v.optional(integerBetween(1, 100000), limitDefaults.max_row_limit),
        default_row_limit: v.optional(integerBetween(1, 100000), limitDefaults.default_row_limit),
        plan_ttl_seconds: v.optional(integerBetween(1, 86400), limitDefaults.plan_ttl_seconds),
        max_parallel_captures: v.optional(integerBetween(1, 128), limitDefaults.max_parallel_captures),
        cleanup_grace_seconds: v.optional(integerBetween(0, 300), limitDefaults.cleanup_grace_seconds),
      }),
      () => ({}),
    ),
    sampling: v.optional(
      v.strictObject({
        resource_sample_interval_ms: v.optional(integerBetween(10, 10000), defaultWorkspacePolicy.sampling.resource_sample_interval_ms),
      }),
      () => ({}),
    ),
    environment: v.optional(
      v.strictObject({
        allowlist_additions: v.optional(
          v.pipe(
            v.array(
              v.pipe(
                v.string(),
                v.maxLength(256),
                v.regex(environmentNamePattern, "environment names must match ^[A-Za-z_][A-Za-z0-9_]*$"),
              ),
            ),
            v.maxLength(128, "at most 128 names"),
            v.check((names) => new Set(names).size === names.length, "names must be unique"),
          ),
          () => [],
        ),
      }),
      () => ({}),
    ),
  }),
  v.check(
    (policy) => policy.limits.default_row_limit <= policy.limits.max_row_limit,
    "limits.default_row_limit must be <= limits.max_row_limit",
  ),
);

export type WorkspacePolicy = v.InferOutput<typeof WorkspacePolicySchema>;

function invalidPolicy(message: string, details: Record<string, unknown>): FlameoxError {
  return workspaceInvalid(`Workspace policy ${workspacePolicyPath} is invalid: ${message}`, {
    details: { invalid_policy: true, config_path: workspacePolicyPath, ...details },
    remediation: [`Fix ${workspacePolicyPath} (or delete it to use the defaults), then retry.`],
  });
}

/** Parses policy text; throws WORKSPACE_INVALID naming the first offending key. */
export function parseWorkspacePolicy(text: string): WorkspacePolicy {
  let document: unknown;
  try {
    document = parse(text, { unsafeKeyBehaviour: "throw" });
  } catch (error) {
    const where = error instanceof TomlError ? ` at line ${error.line}, column ${error.column}` : "";
    const first = (error instanceof Error ? error.message : String(error)).split("\n")[0]!.replace(/^Invalid TOML document:\s*/, "");
    throw invalidPolicy(`TOML syntax error${where}: ${first}`, {});
  }
  const result = v.safeParse(WorkspacePolicySchema, document, { abortEarly: false });
  if (result.success) return result.output;
  const diagnostics = result.issues.map((issue) => {
    const path = (issue.path ?? []).map((item) => item.key as string | number);
    if (issue.type === "strict_object") return { key: formatFieldPath(path), text: `unknown key ${formatFieldPath(path)}` };
    return { key: formatFieldPath(path), text: `${formatFieldPath(path)}: ${issue.message}` };
  });
  const first = diagnostics[0]!;
  throw invalidPolicy(first.text, { key: first.key, diagnostics: diagnostics.slice(0, 8).map((item) => item.text) });
}

/** Reads the policy file at `configPath`; a missing file means the defaults. */
export async function readWorkspacePolicy(configPath: string): Promise<WorkspacePolicy> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(configPath);
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") return v.parse(WorkspacePolicySchema, {});
    throw error;
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw invalidPolicy("the file is not valid UTF-8", {});
  }
  return parseWorkspacePolicy(text);
}

/**
 * The effective policy of the workspace at `workspaceRoot`. Initialization always writes the file, so
 * a missing or unreadable one is a damaged workspace (unlike readWorkspacePolicy's defaults).
 */
export function loadWorkspacePolicy(workspaceRoot: string): WorkspacePolicy {
  let text: string;
  try {
    text = readFileSync(join(workspaceRoot, "config.toml"), "utf8");
  } catch (error) {
    throw workspaceInvalid(`The workspace policy ${workspacePolicyPath} cannot be read.`, {
      remediation: ["Run flameox init to restore the default policy file."],
      cause: error,
    });
  }
  return parseWorkspacePolicy(text);
}

/** The environment names every workload process inherits: a fixed base plus the policy's additions. */
export function inheritedEnvironment(policy: WorkspacePolicy): string[] {
  return ["PATH", "HOME", "LANG", "LC_*", "TZ", "TMPDIR", "TERM", "USER", "LOGNAME", ...policy.environment.allowlist_additions];
}

/** The commented default policy written by initialization. Parsing it yields the defaults. */
export function renderDefaultPolicy(): string {
  const limits = defaultWorkspacePolicy.limits;
  return `# flameox workspace policy. Unknown keys are refused, so a misspelt limit fails loudly.
schema_version = 1

[limits]
# Largest artifact one capture may keep, in bytes (2 GiB).
max_artifact_bytes = ${limits.max_artifact_bytes}
# Most bytes of stdout and stderr kept per process (64 MiB); the rest is truncated.
max_output_bytes = ${limits.max_output_bytes}
# Most rows any query may return, and the rows returned when a query names no limit.
max_row_limit = ${limits.max_row_limit}
default_row_limit = ${limits.default_row_limit}
# Seconds a capture plan stays valid before it must be planned again.
plan_ttl_seconds = ${limits.plan_ttl_seconds}
# Captures that may run at the same time.
max_parallel_captures = ${limits.max_parallel_captures}
# Seconds between asking a process tree to stop and killing it.
cleanup_grace_seconds = ${limits.cleanup_grace_seconds}

[sampling]
# Milliseconds between resource samples (memory, CPU) of a running workload.
resource_sample_interval_ms = ${defaultWorkspacePolicy.sampling.resource_sample_interval_ms}

[environment]
# Extra environment variable names passed to workloads, beyond flameox's built-in allowlist.
allowlist_additions = []
`;
}
