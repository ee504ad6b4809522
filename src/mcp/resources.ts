import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { type FlameoxError, toFlameoxError } from "../domain/errors.ts";
import { projectError } from "../domain/envelope.ts";
import type { Services } from "../services/services.ts";
import { withCallableRecovery } from "./call-recovery.ts";
import { toolsByName } from "./registry.ts";
import { resourceTemplateDefinitions } from "./resource-templates.ts";
import { escapePattern } from "./agent-paths.ts";

export type ResourceContents = { uri: string; mimeType: string; text: string };

export type ResourceTemplate = {
  uriTemplate: string;
  name: string;
  description: string;
  mimeType: "application/json" | "image/svg+xml";
  /** Returns the JSON-able projection (or SVG text) of the record the parameters name. */
  read(parameters: Record<string, string>, services: Services): Promise<unknown> | unknown;
};

export const resourceTemplates: ResourceTemplate[] = resourceTemplateDefinitions;

type CompiledTemplate = { template: ResourceTemplate; pattern: RegExp; names: string[] };
let compiled: CompiledTemplate[] | undefined;

function compile(): CompiledTemplate[] {
  compiled ??= resourceTemplates.map((template) => {
    const names: string[] = [];
    const source = template.uriTemplate
      .split(/(\{[a-z_]+\})/)
      .map((part) => {
        const match = /^\{([a-z_]+)\}$/.exec(part);
        if (match) {
          names.push(match[1]!);
          return "([^/]+)";
        }
        return escapePattern(part);
      })
      .join("");
    return { template, pattern: new RegExp(`^${source}$`), names };
  });
  return compiled;
}

/** MCP's code for a resource that does not exist (the specification's -32002). */
export const resourceNotFoundCode = -32002;

/**
 * Resolves a URI against the templates. A URI no template matches, and a record that does not exist, are
 * -32002 (resource not found); other refusals keep their meaning (-32602 for a malformed id, -32603
 * otherwise). `data` carries the domain error (code, message, recovery) either way.
 */
export async function readResource(uri: string, services: Services): Promise<ResourceContents> {
  for (const { template, pattern, names } of compile()) {
    const match = pattern.exec(uri);
    if (!match) continue;
    const parameters: Record<string, string> = {};
    names.forEach((name, index) => {
      parameters[name] = decodeURIComponent(match[index + 1]!);
    });
    try {
      const value = await template.read(parameters, services);
      const text = typeof value === "string" ? value : JSON.stringify(value, null, 2);
      return { uri, mimeType: template.mimeType, text };
    } catch (error) {
      throw resourceError(uri, toFlameoxError(error));
    }
  }
  throw new McpError(resourceNotFoundCode, `Resource not found: no resource template matches ${uri}.`, {
    uri,
    templates: resourceTemplates.map((template) => template.uriTemplate),
  });
}

function resourceError(uri: string, error: FlameoxError): McpError {
  const projection = projectError(withCallableRecovery(error, toolsByName()));
  const missing = error.code === "RUN_NOT_FOUND" || error.code === "WORKSPACE_NOT_FOUND" || "missing_entity" in error.details;
  const code = missing ? resourceNotFoundCode : error.code === "INVALID_ARGUMENTS" ? ErrorCode.InvalidParams : ErrorCode.InternalError;
  return new McpError(code, `${missing ? "Resource not found" : "Resource unavailable"}: ${error.message}`, {
    uri,
    error: projection,
  });
}
