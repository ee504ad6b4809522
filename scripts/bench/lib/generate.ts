/**
 * Streamed generators of large benchmark inputs, cached under .test-output/bench/ (git-ignored) by
 * size and generator version. Text is written in ~4 MiB chunks; no file is ever built in memory.
 * A file appears under its final name only when complete (written to .partial, then renamed).
 */
import { closeSync, existsSync, mkdirSync, openSync, renameSync, rmSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import { benchOutput } from "./measure.ts";
import { seededRandom as random } from "../../../test/support/random.ts";

const generatorVersion = 2;
const chunkBytes = 4 << 20;

class ChunkedWriter {
  private parts: string[] = [];
  private pending = 0;
  written = 0;
  constructor(private readonly handle: number) {}
  write(text: string): void {
    this.parts.push(text);
    this.pending += text.length;
    if (this.pending >= chunkBytes) this.flush();
  }
  flush(): void {
    if (this.parts.length === 0) return;
    this.written += writeSync(this.handle, this.parts.join(""));
    this.parts = [];
    this.pending = 0;
  }
  get total(): number {
    return this.written + this.pending;
  }
}

function cached(
  name: string,
  generate: (writer: ChunkedWriter) => Record<string, number>,
): { path: string; bytes: number; generated_ms: number | null } {
  mkdirSync(benchOutput, { recursive: true });
  const path = join(benchOutput, name);
  if (existsSync(path)) return { path, bytes: statSync(path).size, generated_ms: null };
  const partial = `${path}.partial`;
  const started = performance.now();
  const handle = openSync(partial, "w");
  try {
    const writer = new ChunkedWriter(handle);
    generate(writer);
    writer.flush();
  } catch (error) {
    closeSync(handle);
    rmSync(partial, { force: true });
    throw error;
  }
  closeSync(handle);
  renameSync(partial, path);
  return { path, bytes: statSync(path).size, generated_ms: Math.round(performance.now() - started) };
}

const operators: { name: string; children: string[]; inputs: number }[] = [
  { name: "aten::linear", children: ["aten::t", "aten::addmm"], inputs: 3 },
  { name: "aten::conv2d", children: ["aten::convolution", "aten::_convolution", "aten::mkldnn_convolution"], inputs: 3 },
  { name: "aten::relu", children: ["aten::clamp_min"], inputs: 1 },
  { name: "aten::layer_norm", children: ["aten::native_layer_norm"], inputs: 4 },
  { name: "aten::softmax", children: ["aten::_softmax"], inputs: 1 },
  { name: "aten::matmul", children: ["aten::bmm"], inputs: 2 },
  { name: "aten::add", children: [], inputs: 2 },
  { name: "aten::copy_", children: [], inputs: 2 },
  { name: "aten::empty", children: [], inputs: 1 },
  { name: "aten::to", children: ["aten::_to_copy", "aten::empty_strided", "aten::copy_"], inputs: 1 },
];

/**
 * A torch.profiler-like Chrome trace of about `megabytes` MiB: `{"schemaVersion":1,…,"traceEvents":[…]}`
 * with nested `cpu_op` X events named `aten::*` carrying `Input Dims`/`Input type`/`External id` args,
 * on two threads, interleaved with `[memory]` instant events.
 *
 * `distinctSteps`: every few operators on the main thread sit inside their own `ProfilerStep#<n>`
 * user annotation, all distinct, so distinct stacks grow with the trace (1.8M per GiB) — the shape
 * that made a stack map grow without bound.
 */
export function chromeTrace(
  megabytes: number,
  shape: "plain" | "distinctSteps" = "plain",
): { path: string; bytes: number; generated_ms: number | null; events: number | null } {
  let events = 0;
  const name =
    shape === "plain"
      ? `chrome-trace-${megabytes}MB-v${generatorVersion}.json`
      : `chrome-trace-steps-${megabytes}MB-v${generatorVersion}.json`;
  const file = cached(name, (writer) => {
    const target = megabytes * (1 << 20);
    const next = random(megabytes);
    const pid = 4242;
    const threads = [4242, 4250];
    const clocks = threads.map(() => 1_700_000_000_000);
    let externalId = 0;
    let first = true;
    const emit = (event: string) => {
      writer.write(first ? `\n${event}` : `,\n${event}`);
      first = false;
      events += 1;
    };
    writer.write('{"schemaVersion":1,"deviceProperties":[],"distributedInfo":{"backend":"gloo","rank":0,"world_size":1},"traceEvents":[');
    let step = 0;
    let stepStart = -1;
    let stepOperators = 0;
    const closeStep = () => {
      // Written after its operators, as a profiler writes a slice when it ends.
      emit(
        `{"ph":"X","cat":"user_annotation","name":"ProfilerStep#${step}","pid":${pid},"tid":${threads[0]},"ts":${stepStart},"dur":${clocks[0]! - stepStart}}`,
      );
    };
    while (writer.total < target) {
      const threadIndex = next() < 0.8 ? 0 : 1;
      if (shape === "distinctSteps" && threadIndex === 0 && (stepStart < 0 || stepOperators === 3)) {
        if (stepStart >= 0) closeStep();
        step += 1;
        stepStart = clocks[0]!;
        stepOperators = 0;
        clocks[0] = clocks[0]! + 1;
      }
      if (threadIndex === 0) stepOperators += 1;
      const tid = threads[threadIndex]!;
      const operator = operators[Math.floor(next() * operators.length)]!;
      const batch = 1 << Math.floor(next() * 6);
      const width = 64 << Math.floor(next() * 5);
      const dims = Array.from({ length: operator.inputs }, (_, index) =>
        index === 0 ? [batch, width] : index === 1 ? [width, width] : [width],
      );
      const childDurations = operator.children.map(() => 2 + Math.floor(next() * 40));
      const duration = childDurations.reduce((sum, value) => sum + value + 1, 0) + 3 + Math.floor(next() * 20);
      let ts = clocks[threadIndex]!;
      externalId += 1;
      const args = (id: number, inputs: number[][]) =>
        `{"External id":${id},"Record function id":0,"Ev Idx":${id},"Input Dims":${JSON.stringify(inputs)},"Input type":${JSON.stringify(inputs.map(() => "float"))},"Input Strides":${JSON.stringify(inputs.map((shape) => (shape.length === 2 ? [shape[1], 1] : [1])))},"Concrete Inputs":${JSON.stringify(inputs.map(() => ""))}}`;
      emit(
        `{"ph":"X","cat":"cpu_op","name":"${operator.name}","pid":${pid},"tid":${tid},"ts":${ts}.${Math.floor(next() * 1000)},"dur":${duration}.5,"args":${args(externalId, dims)}}`,
      );
      let childStart = ts + 1;
      operator.children.forEach((child, index) => {
        externalId += 1;
        emit(
          `{"ph":"X","cat":"cpu_op","name":"${child}","pid":${pid},"tid":${tid},"ts":${childStart}.${Math.floor(next() * 1000)},"dur":${childDurations[index]},"args":${args(externalId, dims.slice(0, 2))}}`,
        );
        if (next() < 0.5) {
          const bytes = batch * width * 4;
          emit(
            `{"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":${pid},"tid":${tid},"ts":${childStart + 1},"args":{"Total Reserved":${1 << 30},"Total Allocated":${(1 << 28) + externalId * 64},"Bytes":${next() < 0.5 ? bytes : -bytes},"Addr":${94_000_000_000_000 + externalId * 4096},"Device Type":0,"Device Id":-1}}`,
          );
        }
        childStart += childDurations[index]! + 1;
      });
      ts += duration + 2 + Math.floor(next() * 10);
      clocks[threadIndex] = ts;
    }
    if (shape === "distinctSteps" && stepStart >= 0) closeStep();
    writer.write('\n],"traceName":"bench","baseTimeNanoseconds":1700000000000000000}\n');
    return { events };
  });
  return { ...file, events: file.generated_ms === null ? null : events };
}

/**
 * A file made from another by a child process writing `partial`, cached under `path`: it appears only
 * when complete. A child of its own also keeps a large working set out of this process, whose peak
 * every child it spawns later would report as its own (see `measure`).
 */
function cachedDerived(path: string, make: (partial: string) => string[], what: string): number | null {
  if (existsSync(path)) return null;
  const started = performance.now();
  const partial = `${path}.partial`;
  const made = Bun.spawnSync(make(partial), { stdout: "ignore", stderr: "pipe" });
  if (made.exitCode !== 0) {
    rmSync(partial, { force: true });
    throw new Error(`${what} failed: ${made.stderr.toString().slice(-300)}`);
  }
  renameSync(partial, path);
  return Math.round(performance.now() - started);
}

/**
 * The plain trace of `megabytes` MiB gzip-compressed (level 6, gzip's default, as torch.profiler's
 * `.json.gz` exports are), cached beside it; `bytes` is the compressed size.
 */
export function gzippedChromeTrace(megabytes: number): {
  path: string;
  bytes: number;
  inflated_bytes: number;
  generated_ms: number | null;
} {
  const plain = chromeTrace(megabytes);
  const path = `${plain.path}.gz`;
  const generated = cachedDerived(
    path,
    (partial) => ["sh", "-c", 'gzip -6 -c "$1" > "$2"', "sh", plain.path, partial],
    `gzip of ${plain.path}`,
  );
  return { path, bytes: statSync(path).size, inflated_bytes: plain.bytes, generated_ms: generated };
}

/**
 * The plain trace of `megabytes` MiB with its events in a seeded random order (the same events and
 * bytes): no thread's events in order, so import sorts them in runs spilled to disk and merges them.
 * Shuffled by lib/shuffle-trace.ts (about four times the trace in memory), cached.
 */
export function shuffledChromeTrace(megabytes: number): { path: string; bytes: number; generated_ms: number | null } {
  const plain = chromeTrace(megabytes);
  const path = join(benchOutput, `chrome-trace-shuffled-${megabytes}MB-v${generatorVersion}.json`);
  const generated = cachedDerived(
    path,
    (partial) => [process.execPath, join(import.meta.dir, "shuffle-trace.ts"), plain.path, partial, String(megabytes + 1)],
    `shuffling ${plain.path}`,
  );
  return { path, bytes: statSync(path).size, generated_ms: generated };
}

/**
 * A py-spy-like speedscope profile of `samples` samples on two threads. The default shape has 5000 distinct
 * stacks per thread of depth 6–30 (about 88 bytes a sample); `{ stacksPerThread: 102, maximumDepth: 3 }`
 * is the shape (1M samples in about 12 MB, 204 distinct stacks).
 */
export function speedscopeProfile(
  samples: number,
  shape: { stacksPerThread?: number; maximumDepth?: number } = {},
): { path: string; bytes: number; generated_ms: number | null } {
  const stacksPerThread = shape.stacksPerThread ?? 5000;
  const maximumDepth = shape.maximumDepth ?? 30;
  const name =
    shape.stacksPerThread === undefined && shape.maximumDepth === undefined
      ? `speedscope-${samples}-samples-v${generatorVersion}.json`
      : `speedscope-${samples}-samples-${stacksPerThread}x${maximumDepth}-v${generatorVersion}.json`;
  return cached(name, (writer) => {
    const next = random(samples);
    const frameCount = 4000;
    writer.write('{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[');
    for (let index = 0; index < frameCount; index += 1) {
      writer.write(
        `${index ? "," : ""}{"name":"function_${index}","file":"/srv/app/package_${index % 97}/module_${index % 389}.py","line":${10 + (index % 700)}}`,
      );
    }
    writer.write(']},"profiles":[');
    const threads = [
      { name: 'Thread 100 "MainThread"', count: Math.round(samples * 0.6) },
      { name: 'Thread 101 "worker"', count: samples - Math.round(samples * 0.6) },
    ];
    const minimumDepth = Math.min(6, maximumDepth);
    const stacks = threads.map((_, threadIndex) =>
      Array.from({ length: stacksPerThread }, () => {
        const depth = minimumDepth + Math.floor(next() * (maximumDepth - minimumDepth + 1));
        const frames: number[] = [threadIndex];
        let node = threadIndex;
        for (let level = 1; level < depth; level += 1) {
          node = (node * 31 + 7 + Math.floor(next() ** 2 * 5) * 613) % frameCount;
          frames.push(node);
        }
        return `[${frames.join(",")}]`;
      }),
    );
    threads.forEach((thread, threadIndex) => {
      writer.write(
        `${threadIndex ? "," : ""}{"type":"sampled","name":${JSON.stringify(thread.name)},"unit":"seconds","startValue":0,"endValue":${thread.count / 100},"samples":[`,
      );
      for (let sample = 0; sample < thread.count; sample += 1) {
        // Skewed choice among the thread's stacks: a few are hot, most are rare, like a real program.
        const stack = stacks[threadIndex]![Math.floor(next() ** 3 * stacksPerThread)]!;
        writer.write(sample ? `,${stack}` : stack);
      }
      writer.write('],"weights":[');
      for (let sample = 0; sample < thread.count; sample += 1) writer.write(sample ? ",0.01" : "0.01");
      writer.write("]}");
    });
    writer.write('],"name":"bench","activeProfileIndex":0,"exporter":"flameox-bench-generator"}\n');
    return { samples };
  });
}
