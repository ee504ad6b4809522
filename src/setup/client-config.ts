/**
 * One client's config files as setup sees them: parse a snapshot into a document, tell its state
 * against the active runtime, and turn an intent (connect with these managed keys, or disconnect)
 * into the exact new bytes. Planning and applying both call `renderChange`: apply re-reads the file
 * and renders again, so a client that rewrote its config since the preview loses nothing.
 */
import { FlameoxError, retold } from "../domain/errors.ts";
import { clientDefinition, type ClientDefinition, type ClientId } from "./clients.ts";
import type { ConnectionRecord } from "./connections.ts";
import type { SetupEnvironment } from "./environment.ts";
import { decodeConfig, deepEqual, encodeConfig, type ConfigDocument, type SectionOrigin } from "./formats/document.ts";
import { openJsonDocument } from "./formats/json.ts";
import { openTomlDocument } from "./formats/toml.ts";
import { readSnapshot, type FileSnapshot } from "./files.ts";

export type LoadedConfig = { snapshot: FileSnapshot; text: string; bom: boolean; document: ConfigDocument };

/** `tools: "keep"` keeps the families the existing entry selects (an update never drops `--tools`). */
export type FileIntent = { kind: "connect"; launcher: string; tools: readonly string[] | null | "keep" } | { kind: "disconnect" };

export type Change =
  | { kind: "none"; text: string }
  | { kind: "write"; before: string; text: string; bytes: Uint8Array; origin: SectionOrigin | null }
  | { kind: "delete"; before: string };

export type ClientState = "absent" | "current" | "drift" | "malformed";

/** Prefixes the client's name to a refusal about its file, once. */
export function forClient(error: unknown, definition: ClientDefinition): unknown {
  if (!(error instanceof FlameoxError) || error.message.startsWith(`${definition.displayName}:`)) return error;
  // A file refusal may already name the client after the path; the prefix replaces that mention.
  const message = `${definition.displayName}: ${error.message.replace(` (${definition.displayName})`, "")}`;
  return retold(error, { message, details: { ...error.details, client: definition.id } });
}

function openDocument(definition: ClientDefinition, path: string, text: string): ConfigDocument {
  const format = definition.format(path);
  return format === "toml" ? openTomlDocument(text, path, definition.section) : openJsonDocument(text, format, path, definition.section);
}

export function parseSnapshot(definition: ClientDefinition, snapshot: FileSnapshot): LoadedConfig {
  try {
    const decoded = snapshot.bytes === null ? { text: "", bom: false } : decodeConfig(snapshot.bytes, snapshot.path);
    return { snapshot, text: decoded.text, bom: decoded.bom, document: openDocument(definition, snapshot.path, decoded.text) };
  } catch (error) {
    throw forClient(error, definition);
  }
}

export function loadConfig(definition: ClientDefinition, path: string): LoadedConfig {
  try {
    return parseSnapshot(definition, readSnapshot(path, definition.displayName));
  } catch (error) {
    throw forClient(error, definition);
  }
}

/** The managed keys an entry should hold for `launcher`, keeping the entry's own `--tools` when asked. */
export function wantedEntry(
  definition: ClientDefinition,
  launcher: string,
  tools: readonly string[] | null | "keep",
  existing: Record<string, unknown> | undefined,
): Record<string, unknown> {
  const families = tools === "keep" ? (existing ? definition.toolsOf(existing) : null) : tools;
  return definition.entry(launcher, families);
}

/** Every managed key matches: keys the user added to our entry are not drift. */
export function entryMatches(entry: Record<string, unknown> | undefined, wanted: Record<string, unknown>): boolean {
  return entry !== undefined && Object.entries(wanted).every(([key, value]) => deepEqual(entry[key], value));
}

export function renderChange(
  definition: ClientDefinition,
  loaded: LoadedConfig,
  intent: FileIntent,
  record: ConnectionRecord | null,
): Change {
  const { document, text, bom, snapshot } = loaded;
  try {
    if (intent.kind === "connect") {
      const wanted = wantedEntry(definition, intent.launcher, intent.tools, document.entry);
      if (entryMatches(document.entry, wanted)) return { kind: "none", text };
      const after = document.withEntry(wanted);
      const origin = document.entry === undefined ? { ...document.origin, file_existed: snapshot.bytes !== null } : null;
      return { kind: "write", before: text, text: after, bytes: encodeConfig(after, bom), origin };
    }
    if (document.entry === undefined) return { kind: "none", text };
    const origin = record && record.path === snapshot.path ? record.origin : null;
    const after = document.withoutEntry(origin);
    // A file that setup created, holding nothing else, goes away again.
    if (origin && !origin.file_existed && isEmptyDocument(definition, snapshot.path, after)) return { kind: "delete", before: text };
    return { kind: "write", before: text, text: after, bytes: encodeConfig(after, bom), origin: null };
  } catch (error) {
    throw forClient(error, definition);
  }
}

function isEmptyDocument(definition: ClientDefinition, path: string, text: string): boolean {
  if (text.trim() === "") return true;
  const document = openDocument(definition, path, text);
  return document.entry === undefined && document.origin.section === "absent" && document.origin.empty_text !== null;
}

export type ClientFiles = { primary: LoadedConfig; others: LoadedConfig[] };

/** The client's config files: the one we write, and other names it also reads that exist. */
export function loadClientFiles(id: ClientId, environment: SetupEnvironment): ClientFiles {
  const definition = clientDefinition(id);
  const path = definition.configPath(environment);
  const primary = loadConfig(definition, path);
  const others = definition
    .candidatePaths(environment)
    .filter((candidate) => candidate !== path)
    .map((candidate) => loadConfig(definition, candidate))
    .filter((loaded) => loaded.snapshot.bytes !== null);
  return { primary, others };
}

/** absent: no entry anywhere; current: the primary file launches `executable` and no other holds an entry. */
export function clientState(id: ClientId, files: ClientFiles, executable: string | null): ClientState {
  const definition = clientDefinition(id);
  const entries = [files.primary, ...files.others].filter((loaded) => loaded.document.entry !== undefined);
  if (entries.length === 0) return "absent";
  const entry = files.primary.document.entry;
  if (executable === null || files.others.some((loaded) => loaded.document.entry !== undefined)) return "drift";
  return entryMatches(entry, wantedEntry(definition, executable, "keep", entry)) ? "current" : "drift";
}
