/**
 * The table of contents `xctrace export --input X.trace --toc` prints, read into a bounded summary:
 * per recording run its template, duration, dates, target and the data tables (schemas) and tracks it
 * holds. Host paths, device names and identifiers in the TOC are left out: the summary is agent-facing.
 * The XML reader is deliberately small: elements, attributes and text, the five predefined entities
 * and character references; a document type with declarations is refused (no entity expansion).
 */
import { artifactParseFailed } from "../../domain/errors.ts";

export type XctraceRunSummary = {
  number: number | null;
  template_name: string | null;
  duration_seconds: number | null;
  start_date: string | null;
  end_date: string | null;
  end_reason: string | null;
  instruments_version: string | null;
  recording_mode: string | null;
  target: {
    platform: string | null;
    model: string | null;
    os_version: string | null;
    process_name: string | null;
    process_exit_status: string | null;
  };
  process_count: number;
  tables: { schema: string; attributes: Record<string, string> }[];
  table_count: number;
  tracks: string[];
  track_count: number;
};

export type XctraceTocSummary = { run_count: number; runs: XctraceRunSummary[]; runs_truncated: boolean };

export const tocBounds = { runs: 16, tables: 64, tracks: 32, tableAttributes: 8, text: 200, nodes: 200_000, depth: 64 };

/** The summary as a tool answers it: fewer runs, table schemas without attributes, fewer tracks. */
export type XctraceTocDigest = {
  run_count: number;
  runs: (Omit<XctraceRunSummary, "tables" | "tracks"> & { table_schemas: string[]; tracks: string[] })[];
  runs_truncated: boolean;
};

export const digestBounds = { runs: 2, tables: 16, tracks: 6, text: 60 };

/** Cut so a tool answer holding it stays well under 8,000 characters; the stored summary keeps the rest. */
export function digestToc(summary: XctraceTocSummary): XctraceTocDigest {
  const clip = <Value>(value: Value): Value =>
    (typeof value === "string" && value.length > digestBounds.text ? `${value.slice(0, digestBounds.text)}…` : value) as Value;
  const clipAll = <Record extends object>(record: Record): Record =>
    Object.fromEntries(Object.entries(record).map(([key, value]) => [key, clip(value)])) as Record;
  return {
    run_count: summary.run_count,
    runs: summary.runs.slice(0, digestBounds.runs).map(({ tables, tracks, target, ...run }) => ({
      ...clipAll(run),
      target: clipAll(target),
      table_schemas: tables.slice(0, digestBounds.tables).map((table) => clip(table.schema)),
      tracks: tracks.slice(0, digestBounds.tracks).map(clip),
    })),
    runs_truncated: summary.run_count > digestBounds.runs,
  };
}

type Element = { name: string; attributes: Record<string, string>; children: Element[]; text: string };

export function summarizeToc(xml: string): XctraceTocSummary {
  const root = parseXml(xml);
  if (root.name !== "trace-toc")
    throw artifactParseFailed(`xctrace's table of contents starts with <${root.name}>, not <trace-toc>.`, {
      remediation: ["Check that the xctrace on PATH is Apple's (xcrun xctrace) and the folder is a .trace package."],
    });
  const runs = root.children.filter((child) => child.name === "run");
  return { run_count: runs.length, runs: runs.slice(0, tocBounds.runs).map(summarizeRun), runs_truncated: runs.length > tocBounds.runs };
}

function summarizeRun(run: Element): XctraceRunSummary {
  const summary = find(run, ["info", "summary"]);
  const target = find(run, ["info", "target"]);
  const device = target ? child(target, "device") : null;
  const process = target ? child(target, "process") : null;
  const value = (name: string) => bounded(summary ? (child(summary, name)?.text ?? null) : null);
  const duration = Number.parseFloat(value("duration") ?? "");
  const tables = (find(run, ["data"])?.children ?? []).filter((node) => node.name === "table");
  const tracks = (find(run, ["tracks"])?.children ?? []).filter((node) => node.name === "track");
  const number = Number.parseInt(run.attributes.number ?? "", 10);
  return {
    number: Number.isFinite(number) ? number : null,
    template_name: value("template-name"),
    duration_seconds: Number.isFinite(duration) ? duration : null,
    start_date: value("start-date"),
    end_date: value("end-date"),
    end_reason: value("end-reason"),
    instruments_version: value("instruments-version"),
    recording_mode: value("recording-mode"),
    target: {
      platform: bounded(device?.attributes.platform ?? null),
      model: bounded(device?.attributes.model ?? null),
      os_version: bounded(device?.attributes["os-version"] ?? null),
      process_name: bounded(process?.attributes.name ?? null),
      process_exit_status: bounded(process?.attributes["return-exit-status"] ?? null),
    },
    process_count: (find(run, ["processes"])?.children ?? []).filter((node) => node.name === "process").length,
    tables: tables.slice(0, tocBounds.tables).map((table) => ({
      schema: bounded(table.attributes.schema ?? "") ?? "",
      attributes: Object.fromEntries(
        Object.entries(table.attributes)
          .filter(([key]) => key !== "schema" && !/path|uuid/i.test(key))
          .slice(0, tocBounds.tableAttributes)
          .map(([key, text]) => [key, bounded(text) ?? ""]),
      ),
    })),
    table_count: tables.length,
    tracks: tracks.slice(0, tocBounds.tracks).map((track) => bounded(track.attributes.name ?? "") ?? ""),
    track_count: tracks.length,
  };
}

function bounded(text: string | null): string | null {
  if (text === null) return null;
  const trimmed = text.trim();
  return trimmed.length > tocBounds.text ? `${trimmed.slice(0, tocBounds.text)}…` : trimmed;
}

function child(element: Element, name: string): Element | null {
  return element.children.find((node) => node.name === name) ?? null;
}

function find(element: Element, path: string[]): Element | null {
  let current: Element | null = element;
  for (const name of path) current = current ? child(current, name) : null;
  return current;
}

const entities: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

function decode(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]{1,6}|#[0-9]{1,7}|[a-z]+);/g, (whole, name: string) => {
    if (!name.startsWith("#")) return entities[name] ?? whole;
    const code = name.startsWith("#x") ? Number.parseInt(name.slice(2), 16) : Number.parseInt(name.slice(1), 10);
    return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}

function malformed(message: string) {
  return artifactParseFailed(`xctrace's table of contents is not well-formed XML: ${message}.`, {
    remediation: ["Run xctrace export --toc on the package by hand to see what it prints."],
  });
}

const tagPattern = /<(\/?)([A-Za-z_][\w.:-]*)((?:\s+[\w.:-]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)>/y;
const attributePattern = /([\w.:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g;

/** Elements with attributes and text, bounded in node count and depth; the document element is returned. */
export function parseXml(xml: string): Element {
  const document: Element = { name: "#document", attributes: {}, children: [], text: "" };
  const stack: Element[] = [document];
  let nodes = 0;
  let index = 0;
  while (index < xml.length) {
    const open = xml.indexOf("<", index);
    const textEnd = open === -1 ? xml.length : open;
    if (textEnd > index) stack[stack.length - 1]!.text += decode(xml.slice(index, textEnd));
    if (open === -1) break;
    if (xml.startsWith("<?", open) || xml.startsWith("<!--", open)) {
      const end = xml.indexOf(xml.startsWith("<?", open) ? "?>" : "-->", open);
      if (end === -1) throw malformed("an unterminated declaration or comment");
      index = end + (xml.startsWith("<?", open) ? 2 : 3);
      continue;
    }
    if (xml.startsWith("<!", open)) {
      const end = xml.indexOf(">", open);
      if (end === -1 || xml.slice(open, end).includes("[")) throw malformed("a document type with declarations");
      index = end + 1;
      continue;
    }
    tagPattern.lastIndex = open;
    const tag = tagPattern.exec(xml);
    if (!tag) throw malformed(`an unreadable tag at offset ${open}`);
    index = tagPattern.lastIndex;
    const [, closing, name, attributeText, selfClosing] = tag;
    if (closing) {
      const top = stack.pop();
      if (!top || top.name !== name || stack.length === 0) throw malformed(`</${name}> closes <${top?.name ?? "nothing"}>`);
      continue;
    }
    if (++nodes > tocBounds.nodes) throw malformed(`more than ${tocBounds.nodes} elements`);
    const attributes: Record<string, string> = {};
    for (const match of attributeText!.matchAll(attributePattern)) attributes[match[1]!] = decode(match[2] ?? match[3] ?? "");
    const element: Element = { name: name!, attributes, children: [], text: "" };
    stack[stack.length - 1]!.children.push(element);
    if (!selfClosing) {
      if (stack.length > tocBounds.depth) throw malformed(`nesting deeper than ${tocBounds.depth}`);
      stack.push(element);
    }
  }
  if (stack.length !== 1) throw malformed(`<${stack[stack.length - 1]!.name}> is never closed`);
  const root = document.children[0];
  if (!root || document.children.length !== 1) throw malformed("there is not exactly one document element");
  return root;
}
