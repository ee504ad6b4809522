/**
 * GHC cost-centre profiles: the text report of `+RTS -p` (`<program>.prof`) and the JSON one of
 * `+RTS -pj`. Both hold the cost-centre tree; a node's individual time becomes the weight of its
 * root→node stack (cost centres are the frames: label, module, source location), so self and total
 * per cost centre follow from the tree as in the report.
 *
 * Weights are ticks: the JSON and `-P` text reports give them per node; otherwise the individual
 * %time is turned back into ticks with the report's `total time … (N ticks …)` line, rounded to whole
 * ticks (the percentages are rounded to 0.1 in the report), or kept as percentages when the total
 * is missing. The text is read line by line; the JSON tree is walked without recursion.
 */
import type { EvidenceSink } from "../../domain/evidence.ts";
import { FrameTable, RowEmitter, fileParseFailed, boundStaging, type ExtractOptions, type ExtractResult } from "./common.ts";
import { readArtifactLines } from "./artifact-lines.ts";
import { readJsonWithVisitor } from "./json-file.ts";
import { StackAggregator } from "./stack-aggregator.ts";

export const ghcReportTitle = /(Time and Allocation|Time and Space) Profiling Report/;

type CostCentre = { label: string; module: string; source: string | null };

/** `src/A.hs:(21,1)-(25,44)` or `src/A.hs:12:3-9` → file and first line; `<built-in>` has neither. */
export function ghcSourcePlace(source: string | null): { file: string | null; line: number | null } {
  if (!source || source.startsWith("<")) return { file: null, line: null };
  const match = /^(.*?):\(?(\d+)[,:]/.exec(source);
  return match ? { file: match[1] as string, line: Number(match[2]) } : { file: source, line: null };
}

class CostCentreStacks {
  readonly frames = new FrameTable();
  readonly aggregator = new StackAggregator();
  readonly group = this.aggregator.group("", { thread: null, process: null, unit: "samples", scale: 1 });
  constructor(private readonly language: string) {}
  frame(centre: CostCentre): number {
    const place = ghcSourcePlace(centre.source);
    return this.frames.intern({ function: centre.label, module: centre.module, ...place, language: this.language });
  }
  emit(sink: EvidenceSink, maxRows: number | undefined): ExtractResult {
    const emitter = new RowEmitter(sink, maxRows);
    this.aggregator.emit(emitter, (frameId) => this.frames.rows[frameId] as (typeof this.frames.rows)[number]);
    return { rows: emitter.counts, producer: "ghc", limitations: [...this.aggregator.limitations(), ...emitter.limitations()] };
  }
}

/** Column layout of the tree's header line: where MODULE and SRC start and how many numbers follow. */
type TreeLayout = { moduleAt: number; sourceAt: number | null; numbers: number; ticksColumn: number | null };

function treeLayout(header: string): TreeLayout | null {
  if (!/^COST CENTRE\s+MODULE\b/.test(header) || !/\bno\.\s/.test(`${header} `)) return null;
  const moduleAt = header.indexOf("MODULE");
  const source = header.search(/\bSRC\b/);
  const numberNames = header.slice(header.indexOf("no.")).trim().split(/\s+/);
  const ticks = numberNames.indexOf("ticks");
  return { moduleAt, sourceAt: source === -1 ? null : source, numbers: numberNames.length, ticksColumn: ticks === -1 ? null : ticks };
}

export async function extractGhcProf(path: string, sink: EvidenceSink, options: ExtractOptions): Promise<ExtractResult> {
  boundStaging(sink, path);
  const head = new TextDecoder().decode(await Bun.file(path).slice(0, 4096).arrayBuffer());
  if (/^\s*\{/.test(head) && !/^\s*\{[^\n]*Profiling Report/.test(head)) return extractGhcJson(path, sink, options);
  const stacks = new CostCentreStacks(options.language ?? "haskell");
  let totalTicks: number | null = null;
  let layout: TreeLayout | null = null;
  const path_: { depth: number; node: number }[] = [];
  let nodes = 0;
  const pendingPercent: { node: number; percent: number }[] = [];
  for await (const { line } of readArtifactLines(path)) {
    if (layout === null) {
      const total = /total time\s*=.*\((\d+) ticks/.exec(line);
      if (total) totalTicks = Number(total[1]);
      layout = treeLayout(line.trimStart() === line ? line : "");
      continue;
    }
    if (line.trim() === "") continue;
    const depth = line.length - line.trimStart().length;
    const numbers = line.trimEnd().split(/\s+/).slice(-layout.numbers);
    const label = line.slice(0, layout.moduleAt).trim();
    const moduleEnd = layout.sourceAt ?? line.length;
    const module = line.slice(layout.moduleAt, moduleEnd).trim().split(/\s+/)[0] ?? "";
    const source = layout.sourceAt === null ? null : sourceField(line, layout.sourceAt, numbers.length);
    while (path_.length > 0 && (path_[path_.length - 1] as { depth: number }).depth >= depth) path_.pop();
    const parent = path_[path_.length - 1]?.node ?? 0;
    const node = stacks.aggregator.child(parent, stacks.frame({ label: label || "<unnamed>", module, source }));
    path_.push({ depth, node });
    nodes++;
    // no., entries, individual %time, %alloc, inherited %time, %alloc[, ticks, bytes]
    if (layout.ticksColumn !== null) {
      const ticks = Number(numbers[layout.ticksColumn]) || 0;
      stacks.aggregator.add(stacks.group, node, ticks, ticks);
    } else pendingPercent.push({ node, percent: Number(numbers[2]) || 0 });
  }
  if (layout === null || nodes === 0) throw fileParseFailed(path, "no cost-centre tree (`COST CENTRE MODULE … no. entries …`) was found");
  const limitations: string[] = [];
  for (const { node, percent } of pendingPercent) {
    const weight = totalTicks === null ? percent : Math.round((percent * totalTicks) / 100);
    if (weight > 0) stacks.aggregator.add(stacks.group, node, weight, weight);
  }
  if (layout.ticksColumn === null) {
    limitations.push(
      totalTicks === null
        ? "Weights are the report's individual %time (no tick counts in it)."
        : `Weights are ticks recovered from the report's individual %time (rounded to 0.1%) and its ${totalTicks} total ticks; rerun with +RTS -P for exact ticks.`,
    );
  }
  const result = stacks.emit(sink, options.maxRows);
  result.limitations.unshift(...limitations);
  return result;
}

/** The SRC column runs from its header position to the numbers (a location such as `<no location info>` holds spaces). */
function sourceField(line: string, sourceAt: number, numberCount: number): string | null {
  const tokens = line.slice(sourceAt).trim().split(/\s+/);
  const text = tokens.slice(0, Math.max(0, tokens.length - numberCount)).join(" ");
  return text === "" ? null : text;
}

type JsonNode = { id?: unknown; ticks?: unknown; children?: unknown };

async function extractGhcJson(path: string, sink: EvidenceSink, options: ExtractOptions): Promise<ExtractResult> {
  const centres = new Map<number, CostCentre>();
  let profile: JsonNode | null = null;
  await readJsonWithVisitor(
    path,
    {
      select: (at) =>
        at.length === 0
          ? "enter"
          : at[0] === "cost_centres"
            ? at.length === 1
              ? "enter"
              : "capture"
            : at[0] === "profile"
              ? "capture"
              : "skip",
      value(at, value) {
        if (at[0] === "profile") profile = value as JsonNode;
        else if (value && typeof value === "object") {
          const centre = value as { id?: unknown; label?: unknown; module?: unknown; src_loc?: unknown };
          if (typeof centre.id === "number")
            centres.set(centre.id, {
              label: String(centre.label ?? "<unnamed>"),
              module: String(centre.module ?? ""),
              source: typeof centre.src_loc === "string" ? centre.src_loc : null,
            });
        }
      },
    },
    { mode: options.parseMode },
  );
  if (profile === null || centres.size === 0)
    throw fileParseFailed(path, "no `cost_centres` and `profile` tree: this is not a GHC -pj profile");
  const stacks = new CostCentreStacks(options.language ?? "haskell");
  let unknown = 0;
  const pending: { node: JsonNode; parent: number }[] = [{ node: profile, parent: 0 }];
  while (pending.length > 0) {
    const { node, parent } = pending.pop() as { node: JsonNode; parent: number };
    const centre = typeof node.id === "number" ? centres.get(node.id) : undefined;
    if (!centre) unknown++;
    const at = stacks.aggregator.child(
      parent,
      stacks.frame(centre ?? { label: `<cost centre ${String(node.id)}>`, module: "", source: null }),
    );
    const ticks = Number(node.ticks);
    if (ticks > 0 && ticks <= Number.MAX_SAFE_INTEGER) stacks.aggregator.add(stacks.group, at, ticks, ticks);
    if (Array.isArray(node.children))
      for (const child of node.children) if (child && typeof child === "object") pending.push({ node: child as JsonNode, parent: at });
  }
  const result = stacks.emit(sink, options.maxRows);
  if (unknown > 0) result.limitations.unshift(`${unknown} tree nodes named a cost centre id the file does not list.`);
  return result;
}
