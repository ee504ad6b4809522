/**
 * The workload template language: `{name}` names a declared parameter, `{{` and `}}` are literal
 * braces, and nothing else is special. There is deliberately no shell here: argv is handed to the
 * process broker as an array, so shell expansion forms are refused instead of silently passed on.
 */
import { executionRefused, invalidConfiguration, planRefused } from "../domain/errors.ts";

export type Scalar = string | number | boolean;

export type TemplatePart = { kind: "literal"; text: string } | { kind: "placeholder"; name: string };

export type TemplateScan = { ok: true; parts: TemplatePart[]; placeholders: string[] } | { ok: false; message: string };

const identifierPattern = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Splits a template into literal text and placeholders, or says exactly why it is refused. */
export function scanTemplate(template: string): TemplateScan {
  const shellForm = /\$\(|\$\{|`/.exec(template);
  if (shellForm) {
    return {
      ok: false,
      message: `contains shell syntax "${shellForm[0]}" at offset ${shellForm.index}; argv is never run through a shell, so shell expansion is unsupported (use {name} for a declared parameter)`,
    };
  }
  const parts: TemplatePart[] = [];
  const placeholders: string[] = [];
  let literal = "";
  let index = 0;
  while (index < template.length) {
    const char = template[index]!;
    if (char === "{") {
      if (template[index + 1] === "{") {
        literal += "{";
        index += 2;
        continue;
      }
      const close = template.indexOf("}", index + 1);
      if (close === -1) {
        return { ok: false, message: `has an unmatched "{" at offset ${index}; write "{{" for a literal brace` };
      }
      const inner = template.slice(index + 1, close);
      if (inner.length === 0) {
        return {
          ok: false,
          message: `has an empty placeholder "{}" at offset ${index}; name a declared parameter such as {size}, or write "{{}}" for literal braces`,
        };
      }
      if (!identifierPattern.test(inner)) {
        const shown = inner.length > 40 ? `${inner.slice(0, 40)}…` : inner;
        return {
          ok: false,
          message: `has placeholder "{${shown}}" at offset ${index}, which is not a plain parameter name (only {name} with name matching [A-Za-z_][A-Za-z0-9_]* is allowed; write "{{" and "}}" for literal braces)`,
        };
      }
      if (literal.length > 0) parts.push({ kind: "literal", text: literal });
      literal = "";
      parts.push({ kind: "placeholder", name: inner });
      if (!placeholders.includes(inner)) placeholders.push(inner);
      index = close + 1;
      continue;
    }
    if (char === "}") {
      if (template[index + 1] === "}") {
        literal += "}";
        index += 2;
        continue;
      }
      return { ok: false, message: `has an unmatched "}" at offset ${index}; write "}}" for a literal brace` };
    }
    literal += char;
    index += 1;
  }
  if (literal.length > 0) parts.push({ kind: "literal", text: literal });
  return { ok: true, parts, placeholders };
}

// Exported for tests and for callers that want to pre-check one identifier.
export function isPlaceholderName(name: string): boolean {
  return identifierPattern.test(name);
}

/** How a scalar reads inside a rendered argument (JavaScript forms: `true`, `4`, `1.5`). */
export function scalarText(value: Scalar): string {
  return typeof value === "string" ? value : String(value);
}

export function renderTemplate(template: string, values: Record<string, Scalar>): string {
  const scan = scanTemplate(template);
  if (!scan.ok) {
    throw invalidConfiguration(`Template "${template.slice(0, 200)}" ${scan.message}.`, { repairable: true });
  }
  let out = "";
  for (const part of scan.parts) {
    if (part.kind === "literal") {
      out += part.text;
      continue;
    }
    const value = values[part.name];
    if (value === undefined) {
      throw invalidConfiguration(`Template field is not a declared parameter: ${part.name}`, {
        repairable: true,
        details: { parameter: part.name },
      });
    }
    out += scalarText(value);
  }
  return out;
}

/** Every template field of a workload: where it is (for messages) and its text. */
export function workloadTemplateFields(workload: {
  argv: readonly string[];
  cwd?: string | undefined;
  environment?: Readonly<Record<string, string>> | undefined;
  oracle?: { argv?: readonly string[] | undefined } | null | undefined;
}): { field: string; template: string }[] {
  const fields: { field: string; template: string }[] = [];
  workload.argv.forEach((item, position) => fields.push({ field: `argv.${position}`, template: item }));
  if (workload.cwd !== undefined) fields.push({ field: "cwd", template: workload.cwd });
  for (const [name, value] of Object.entries(workload.environment ?? {})) fields.push({ field: `environment.${name}`, template: value });
  (workload.oracle?.argv ?? []).forEach((item, position) => fields.push({ field: `oracle.argv.${position}`, template: item }));
  return fields;
}

/**
 * Problems with a workload's templates: malformed templates and placeholders that are not declared
 * parameters. Empty when all is well. Messages start with the field path.
 */
export function workloadTemplateProblems(
  workload: Parameters<typeof workloadTemplateFields>[0] & {
    parameters?: Readonly<Record<string, readonly Scalar[]>> | undefined;
  },
): string[] {
  const declared = new Set(Object.keys(workload.parameters ?? {}));
  const problems: string[] = [];
  const undeclared = new Set<string>();
  for (const { field, template } of workloadTemplateFields(workload)) {
    const scan = scanTemplate(template);
    if (!scan.ok) {
      problems.push(`${field}: template ${scan.message}`);
      continue;
    }
    for (const name of scan.placeholders) if (!declared.has(name)) undeclared.add(name);
  }
  if (undeclared.size > 0) {
    problems.push(`template fields are not declared parameters: ${[...undeclared].sort().join(", ")}`);
  }
  return problems;
}

export type WorkloadInvocation = {
  argv: string[];
  cwd: string;
  environment: Record<string, string>;
  /** Every declared parameter with its effective value (override, else the first choice). */
  parameters: Record<string, Scalar>;
  /** The rendered oracle argv, or null when the workload declares no oracle command. */
  oracleArgv: string[] | null;
};

type ResolvableWorkload = {
  argv: readonly string[];
  cwd: string;
  environment: Readonly<Record<string, string>>;
  parameters: Readonly<Record<string, readonly Scalar[]>>;
  oracle?: { argv: readonly string[] } | null | undefined;
};

export function matchChoice(choices: readonly Scalar[], received: unknown): { found: true; value: Scalar } | { found: false } {
  for (const choice of choices) if (choice === received) return { found: true, value: choice };
  // CLI overrides arrive as text: accept "4" for the choice 4 when exactly one choice reads that way.
  if (typeof received === "string") {
    const textual = choices.filter((choice) => typeof choice !== "string" && scalarText(choice) === received);
    if (textual.length === 1) return { found: true, value: textual[0]! };
  }
  return { found: false };
}

/**
 * Renders a validated workload for one set of parameter overrides. Unknown parameters and values
 * outside the declared choices are refused; nothing here touches the file system.
 */
export function resolveWorkloadInvocation(
  workload: ResolvableWorkload,
  overrides: Readonly<Record<string, unknown>> = {},
): WorkloadInvocation {
  const declared = Object.keys(workload.parameters).sort();
  const unknown = Object.keys(overrides)
    .filter((name) => !Object.hasOwn(workload.parameters, name))
    .sort();
  if (unknown.length > 0) {
    const first = unknown[0]!;
    throw planRefused(
      "capture",
      `Unknown workload parameters: ${unknown.join(", ")}. Declared parameters: ${declared.length > 0 ? declared.join(", ") : "(none)"}.`,
      {
        details: { parameter: first, parameters: unknown, allowed: declared, received: overrides[first] },
        remediation: ["Use only parameters declared in the workload's [parameters] table."],
      },
    );
  }
  const parameters: Record<string, Scalar> = {};
  for (const name of declared) {
    const choices = workload.parameters[name]!;
    if (choices.length === 0) {
      throw invalidConfiguration(`Workload parameter ${name} declares no choices.`, { repairable: true, details: { parameter: name } });
    }
    if (Object.hasOwn(overrides, name)) {
      const received = overrides[name];
      const match = matchChoice(choices, received);
      if (!match.found) {
        throw planRefused(
          "capture",
          `Parameter ${name} does not allow ${JSON.stringify(received) ?? String(received)}; allowed: ${choices.map((c) => JSON.stringify(c)).join(", ")}.`,
          { details: { parameter: name, allowed: [...choices], received }, remediation: [`Pick one of the declared choices for ${name}.`] },
        );
      }
      parameters[name] = match.value;
    } else {
      parameters[name] = choices[0]!;
    }
  }
  const argv = workload.argv.map((item) => renderTemplate(item, parameters));
  argv.forEach((item, position) => {
    if (item.length === 0 || item.length > 32768 || item.includes("\0")) {
      throw planRefused("capture", `Rendered argv.${position} must be 1..32768 characters without NUL.`, {
        details: { field: `argv.${position}`, parameters },
        remediation: ["Choose parameter values whose rendered arguments are 1..32768 characters without NUL."],
      });
    }
  });
  const cwd = renderTemplate(workload.cwd, parameters);
  if (!isContainedRelativePath(cwd)) {
    throw executionRefused(`The rendered working directory "${cwd.slice(0, 200)}" leaves the project root.`, {
      details: { field: "cwd", cwd, parameters },
      remediation: ["Declare a project-relative cwd whose parameter choices stay inside the project."],
    });
  }
  const environment: Record<string, string> = {};
  for (const [name, value] of Object.entries(workload.environment)) environment[name] = renderTemplate(value, parameters);
  const oracleArgv =
    workload.oracle && workload.oracle.argv.length > 0 ? workload.oracle.argv.map((item) => renderTemplate(item, parameters)) : null;
  return { argv, cwd, environment, parameters, oracleArgv };
}

/** A relative path that never climbs above its base (`a/../b` is fine, `../x` and `/x` are not). */
export function isContainedRelativePath(path: string): boolean {
  if (path.length === 0 || path.includes("\0")) return false;
  if (path.startsWith("/") || path.startsWith("\\") || /^[A-Za-z]:/.test(path)) return false;
  let depth = 0;
  for (const segment of path.split(/[\\/]/)) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") {
      depth -= 1;
      if (depth < 0) return false;
    } else {
      depth += 1;
    }
  }
  return true;
}
