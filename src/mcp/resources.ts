import { toFlameoxError } from "../domain/errors.ts";
import { projectError } from "../domain/envelope.ts";
import type { Services } from "../services/services.ts";
import { resourceTemplateDefinitions } from "./resource-templates.ts";

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
        return part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      })
      .join("");
    return { template, pattern: new RegExp(`^${source}$`), names };
  });
  return compiled;
}

/** Resolves a URI against the templates; domain failures become a JSON error body, not a protocol error. */
export async function readResource(uri: string, services: Services): Promise<ResourceContents | null> {
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
      const projection = projectError(toFlameoxError(error));
      const { recovery: _recovery, ...rest } = projection;
      return { uri, mimeType: "application/json", text: JSON.stringify({ ok: false, error: rest }, null, 2) };
    }
  }
  return null;
}
