/**
 * What setup remembers about each client it connected, in `<data>/connections.json`: the config path
 * and how its server section looked before our entry went in. A disconnect uses it to give back the
 * exact bytes (no section, `{}`, no file at all), and `--refresh` uses it to name a connected client
 * whose config became unreadable instead of skipping it. A damaged record file counts as empty: the
 * records only refine what the configs themselves say.
 */
import { readFileSync } from "node:fs";
import type { ClientId } from "./clients.ts";
import type { SectionOrigin } from "./formats/document.ts";

export type ConnectionRecord = { path: string; origin: SectionOrigin; connected_at: string };

export type Connections = { schema_version: 1; clients: Partial<Record<ClientId, ConnectionRecord>> };

export function readConnections(path: string): Connections {
  try {
    const parsed = JSON.parse(readFileSync(path, "utf8")) as Connections;
    if (parsed?.schema_version === 1 && parsed.clients && typeof parsed.clients === "object") return parsed;
  } catch {
    // Absent or damaged: no records.
  }
  return { schema_version: 1, clients: {} };
}

export function connectionsText(connections: Connections): string {
  return `${JSON.stringify(connections, null, 2)}\n`;
}
