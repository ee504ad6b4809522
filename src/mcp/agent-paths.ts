import { realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { sep } from "node:path";

/**
 * The last line of defence for "no absolute host path in agent-facing text": every string the MCP server
 * sends (tool results, errors, resources) has the project root replaced by project-relative paths ("." for
 * the root itself), a workspace outside the project by "<workspace>", and the system temporary folder by
 * "<temp>". Services already answer with relative paths where they can; this catches the rest (a message
 * that quotes a file the operating system named, a path inside a nested error).
 */
export type PathScrubber = <T>(value: T) => T;

type Root = { pattern: RegExp; label: string | null };

export function pathScrubber(roots: { projectRoot: string; workspaceRoot: string }): PathScrubber {
  const labelled: { path: string; label: string | null }[] = [];
  const add = (path: string, label: string | null) => {
    for (const form of new Set([path, realOrSelf(path)])) if (form.length > 1) labelled.push({ path: form, label });
  };
  add(roots.projectRoot, null);
  if (!isInside(roots.workspaceRoot, roots.projectRoot)) add(roots.workspaceRoot, "<workspace>");
  add(tmpdir(), "<temp>");
  // Longest first, so the project inside the temporary folder becomes relative, not "<temp>/…".
  const patterns: Root[] = labelled
    .sort((left, right) => right.path.length - left.path.length)
    .map(({ path, label }) => ({
      // A root ends where the path does: at a separator, or before anything that cannot continue a name
      // (a sentence's full stop can).
      pattern: new RegExp(`${escapePattern(path.replace(/\/+$/, ""))}(?:${escapePattern(sep)}+|(?![\\w-]|\\.[\\w.-]))`, "g"),
      label,
    }));
  const scrubText = (text: string): string => {
    if (!text.includes(sep)) return text;
    let scrubbed = text;
    for (const { pattern, label } of patterns)
      scrubbed = scrubbed.replace(pattern, (match) => {
        const followedByPath = match.endsWith(sep);
        if (label === null) return followedByPath ? "" : ".";
        return followedByPath ? `${label}/` : label;
      });
    return scrubbed;
  };
  const scrub = (value: unknown): unknown => {
    if (typeof value === "string") return scrubText(value);
    if (Array.isArray(value)) return value.map(scrub);
    if (value !== null && typeof value === "object") {
      const copy: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) copy[key] = scrub(item);
      return copy;
    }
    return value;
  };
  return <T>(value: T) => scrub(value) as T;
}

function isInside(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);
}

function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

export function escapePattern(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}
