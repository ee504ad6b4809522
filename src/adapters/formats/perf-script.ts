/**
 * `perf script` text, the default output of Linux perf (and of `perf script` after `perf record -g`):
 * per sample a header line `comm pid[/tid] [cpu] time: [period] event:` and then its call chain,
 * leaf first, one `\t<address> <symbol>[+0xoffset] (<dso>)` per line, and a blank line. Each sample
 * counts once (flamegraph.pl's and speedscope's reading); the command and thread make the stack's
 * thread and process, not frames. Lines starting with `#` (`perf script --header`) are comments.
 * Frames of Python's perf trampolines (`py::function:/path/file.py`) become Python frames; a
 * `file:line` line under a frame (`-F +srcline`) places it. Read line by line.
 */
import { basename } from "node:path";
import { projectRelativePath, type EvidenceSink } from "../../domain/evidence.ts";
import { FrameTable, RowEmitter, fileParseFailed, boundStaging, type ExtractOptions, type ExtractResult } from "./common.ts";
import { readArtifactLines } from "./artifact-lines.ts";
import { StackAggregator } from "./stack-aggregator.ts";
import { type LabelledGroup, disambiguateThreadLabels } from "./thread-labels.ts";

/**
 * `comm pid[/tid] [cpu] seconds.fraction:` — the command may hold spaces, so the time anchors it;
 * perf before 4.x printed no time: `comm pid [period] event:` ending the line.
 */
export const perfSampleHeader =
  /^(\S.*?)\s+(-?\d+)(?:\/(-?\d+))?\s+(?:\[\d+\]\s+)?(?:\d+\.\d+:|(?:\d+\s+)?[A-Za-z][\w.\-/]*(?::[\w.\-/]*)*:\s*$)/;
/** Sample headers are short; a longer line is never taken for one (and never costs a regex pass over megabytes). */
export const maxPerfHeaderLength = 4096;

export function perfHeaderOf(line: string): RegExpExecArray | null {
  return line.length > maxPerfHeaderLength || /^\s/.test(line) ? null : perfSampleHeader.exec(line);
}

/** `<address> <symbol> (<dso>)`, indented (old perf wrote it at the start of the line). */
export const perfFrameLine = /^\s*([0-9a-fA-F]+)\s+(\S.*)$/;
const pythonTrampoline = /^py::(.+?):(\/.*|<[^>]*>)$/;

type PerfFrame = { function: string; file: string | null; line: number | null; module: string | null; language: string };

/** One call-chain line's symbol and dso. */
export function parsePerfFrame(rest: string): PerfFrame {
  let symbol = rest.trim();
  let dso: string | null = null;
  const open = symbol.lastIndexOf(" (");
  if (open !== -1 && symbol.endsWith(")")) {
    dso = symbol.slice(open + 2, -1);
    symbol = symbol.slice(0, open);
  }
  symbol = symbol.replace(/\+0x[0-9a-fA-F]+$/, "");
  const module = dso === null || dso === "[unknown]" || dso === "" ? null : basename(dso).replace(/^\[(.*)\]$/, "$1");
  const trampoline = pythonTrampoline.exec(symbol);
  if (trampoline) return { function: trampoline[1] as string, file: trampoline[2] as string, line: null, module: null, language: "python" };
  const jit = module !== null && /^perf-\d+\.map$/.test(module);
  return { function: symbol === "" ? "[unknown]" : symbol, file: null, line: null, module, language: jit ? "jit" : "native" };
}

/** The samples read so far: the open one's thread and call chain, folded into stacks as each ends. */
class PerfSamples {
  readonly frames = new FrameTable();
  readonly aggregator = new StackAggregator();
  readonly labelled = new Map<string, LabelledGroup>();
  group: LabelledGroup | null = null;
  chain: PerfFrame[] = [];
  samples = 0;
  emptySamples = 0;
  strayLines = 0;

  constructor(private readonly options: ExtractOptions) {}

  start(comm: string, pid: string, tid: string | undefined): void {
    this.finish();
    this.samples++;
    const key = `${pid}\u0000${tid ?? pid}\u0000${comm}`;
    let group = this.labelled.get(key);
    if (!group) {
      const stackGroup = this.aggregator.group(key, { thread: comm, process: pid, unit: "samples", scale: 1 });
      group = { thread: comm, process: pid, tid: tid ?? pid, fallback: "", group: stackGroup };
      this.labelled.set(key, group);
    }
    this.group = group;
  }

  finish(): void {
    if (this.group === null) return;
    if (this.chain.length === 0) this.emptySamples++;
    else {
      let node = 0;
      for (let index = this.chain.length - 1; index >= 0; index--) {
        const frame = this.chain[index] as PerfFrame;
        const file = projectRelativePath(frame.file, this.options.projectRoot);
        node = this.aggregator.child(node, this.frames.intern({ ...frame, file, language: this.options.language ?? frame.language }));
      }
      this.aggregator.add(this.group.group, node, 1, 1);
    }
    this.group = null;
    this.chain = [];
  }

  /** A line inside a sample: a call-chain frame, or (`-F +srcline`) the source place of the frame above. */
  body(line: string): void {
    const frame = this.group ? perfFrameLine.exec(line) : null;
    if (frame) {
      this.chain.push(parsePerfFrame(frame[2] as string));
      return;
    }
    const place = /^\s+(\S.*):(\d+)$/.exec(line);
    const last = this.chain[this.chain.length - 1];
    if (this.group && place && last && last.file === null) {
      last.file = place[1] as string;
      last.line = Number(place[2]);
    } else this.strayLines++;
  }
}

export async function extractPerfScript(path: string, sink: EvidenceSink, options: ExtractOptions): Promise<ExtractResult> {
  boundStaging(sink, path);
  const read = new PerfSamples(options);
  for await (const { line } of readArtifactLines(path)) {
    if (line.trim() === "") read.finish();
    else if (line.startsWith("#")) continue;
    else {
      const header = perfHeaderOf(line);
      if (!header) {
        read.body(line);
        continue;
      }
      const [, comm, pid, tid] = header as unknown as [string, string, string, string | undefined];
      read.start(comm, pid, tid);
      // Without -g the sampled address and symbol end the header line itself.
      const inline = /:\s+([0-9a-fA-F]+)\s+(\S.*\))\s*$/.exec(line.slice(header[0].length));
      if (inline) read.chain.push(parsePerfFrame(inline[2] as string));
    }
  }
  read.finish();
  if (read.samples === 0) throw fileParseFailed(path, "no `perf script` sample headers (`comm pid time: event:`) were found");
  disambiguateThreadLabels([...read.labelled.values()]);
  const emitter = new RowEmitter(sink, options.maxRows);
  read.aggregator.emit(emitter, (frameId) => read.frames.rows[frameId] as (typeof read.frames.rows)[number]);
  const limitations = [...read.aggregator.limitations(), ...emitter.limitations()];
  if (read.emptySamples > 0)
    limitations.unshift(`${read.emptySamples} samples had no call chain (recorded without -g) and carry no frames.`);
  if (read.strayLines > 0)
    limitations.unshift(`${read.strayLines} lines were neither a sample header nor a call-chain frame and were left out.`);
  return { rows: emitter.counts, producer: "perf", limitations };
}
