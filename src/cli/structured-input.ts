import { readFileSync } from "node:fs";
import { invalidRequest } from "../domain/errors.ts";

/** JSON text or `@path/to/file.json`; anything else is a usage error naming the option. */
export function parseStructuredInput(value: string | undefined, option: string): Record<string, unknown> {
  if (value === undefined || value === "") return {};
  let text = value;
  if (value.startsWith("@")) {
    try {
      text = readFileSync(value.slice(1), "utf8");
    } catch {
      throw invalidRequest(`Structured input is invalid: cannot read ${value.slice(1)} for ${option}.`, {
        remediation: [`Pass ${option} as JSON text or @file.json.`],
      });
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw invalidRequest(`Structured input is invalid for ${option}: ${error instanceof Error ? error.message : String(error)}`, {
      remediation: [`Pass ${option} as a JSON object, e.g. ${option} '{"size": 10}'.`],
    });
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw invalidRequest(`Structured input is invalid for ${option}: expected a JSON object.`, {
      remediation: [`Pass ${option} as a JSON object.`],
    });
  }
  return parsed as Record<string, unknown>;
}
