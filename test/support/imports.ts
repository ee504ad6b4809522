import type { ImportRequest } from "../../src/services/import-service.ts";

/** An import of a file under the project root with the defaults the CLI and MCP apply when nothing else is asked. */
export function projectImport(path: string, kind: string | null = null): ImportRequest {
  return { path, kind, sensitivity: "internal", media_type: null, source_root: "project", producer: "auto", producer_version: null };
}
