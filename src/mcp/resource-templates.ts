import type { ResourceTemplate } from "./resources.ts";

/** Every addressable record, one entry each; readers call services only. */
export const resourceTemplateDefinitions: ResourceTemplate[] = [];
