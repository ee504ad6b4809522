import { Database } from "bun:sqlite";
import { copyFileSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { constants, crc32, deflateRawSync, gunzipSync, gzipSync } from "node:zlib";
import { repositoryRoot } from "./binary.ts";
import { seededRandom as random } from "./random.ts";

/**
 * A generated corpus of damaged inputs per format, the same on every run (seeded): truncations, byte
 * flips, values of the wrong type, extreme numbers, deep nesting, gzip bombs, NUL and invalid UTF-8,
 * and, for traces, overlapping and unmatched slices. Each case names how flameox gets at it: an
 * `import` that extracts at once, or an import kept as-is followed by an `extract <tool>`.
 */
export type MutantCase = { format: string; label: string; fileName: string; bytes: Buffer };

export type MutantFormat = {
  name: string;
  /** For formats extracted after import: the import's --kind and the extract command's tool. */
  extract?: { kind: string; tool: string };
  cases: (seed: number) => MutantCase[];
};

const formatsFixtures = join(repositoryRoot, "test", "fixtures", "formats");

const fillerBytes = 64 << 20;
const fillerCount = 8;
const fillers = new Map<number, { chunk: Buffer; deflated: Buffer }>();

/**
 * One gzip member that inflates to the document's head, 512 MiB of `fill`, then the rest, in about 0.5 MB:
 * raw deflate fragments ended with a sync flush can follow one another, so the 64 MiB filler is
 * compressed once and repeated, and the trailer's CRC-32 is carried across the pieces.
 */
function gzipBomb(original: Buffer, at: number, fill: "whitespace" | "zeros"): Buffer {
  const byte = fill === "whitespace" ? 0x20 : 0;
  let filler = fillers.get(byte);
  if (!filler) {
    const chunk = Buffer.alloc(fillerBytes, byte);
    filler = { chunk, deflated: deflateRawSync(chunk, { level: 9, finishFlush: constants.Z_SYNC_FLUSH }) };
    fillers.set(byte, filler);
  }
  const head = original.subarray(0, at);
  const tail = original.subarray(at);
  let crc = crc32(head);
  for (let index = 0; index < fillerCount; index++) crc = crc32(filler.chunk, crc);
  crc = crc32(tail, crc);
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc >>> 0, 0);
  trailer.writeUInt32LE((head.length + fillerCount * fillerBytes + tail.length) % 2 ** 32, 4);
  return Buffer.concat([
    Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]),
    deflateRawSync(head, { finishFlush: constants.Z_SYNC_FLUSH }),
    ...Array.from({ length: fillerCount }, () => filler.deflated),
    deflateRawSync(tail),
    trailer,
  ]);
}

function common(format: string, original: Buffer, extension: string, next: () => number): MutantCase[] {
  const out: MutantCase[] = [];
  const add = (label: string, bytes: Buffer, ext = extension) =>
    out.push({ format, label, fileName: `${format}-${out.length}${ext}`, bytes });
  for (const fraction of [0.3, 0.9]) add(`cut at ${fraction}`, original.subarray(0, Math.floor(original.length * fraction)));
  for (let index = 0; index < 2; index++) {
    const copy = Buffer.from(original);
    const at = Math.floor(next() * copy.length);
    copy[at] = (copy[at]! + 1 + Math.floor(next() * 255)) % 256;
    add(`byte ${at} changed`, copy);
  }
  const middle = original.length >> 1;
  add("NUL inside", Buffer.concat([original.subarray(0, middle), Buffer.from([0]), original.subarray(middle)]));
  add("invalid UTF-8", Buffer.concat([original.subarray(0, middle), Buffer.from([0xff, 0xfe, 0xc3]), original.subarray(middle)]));
  return out;
}

/** Replaces some values with values of another JSON type, deterministically. */
function wrongTypes(value: unknown, next: () => number, budget: { left: number }): unknown {
  if (budget.left <= 0) return value;
  if (Array.isArray(value)) return value.map((item) => wrongTypes(item, next, budget));
  if (value !== null && typeof value === "object") {
    const result: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      if (budget.left > 0 && next() < 0.05) {
        budget.left--;
        result[key] = typeof item === "number" ? String(item) : typeof item === "string" ? [item] : Array.isArray(item) ? { item } : 7;
      } else result[key] = wrongTypes(item, next, budget);
    }
    return result;
  }
  return value;
}

function jsonCases(format: string, text: string, extension: string, seed: number): MutantCase[] {
  const next = random(seed);
  const original = Buffer.from(text, "utf8");
  const out = common(format, original, extension, next);
  const add = (label: string, bytes: Buffer, ext = extension) =>
    out.push({ format, label, fileName: `${format}-${out.length}${ext}`, bytes });
  const parsed = JSON.parse(text);
  for (let round = 0; round < 2; round++)
    add("values of the wrong type", Buffer.from(JSON.stringify(wrongTypes(parsed, next, { left: 12 }))));
  for (const extreme of ["1e308", "-1", "18446744073709551615"]) {
    add(
      `numbers → ${extreme}`,
      Buffer.from(text.replace(/(?<=[:,[ ])\d+(\.\d+)?(?=[,\]} \n])/g, (match) => (next() < 0.3 ? extreme : match))),
    );
  }
  add("wrapped 50,000 deep", Buffer.from(`${"[".repeat(50_000)}${text}${"]".repeat(50_000)}`));
  const arrayStart = text.indexOf("[");
  add("gzip bomb: 512 MiB of whitespace inside", gzipBomb(original, arrayStart >= 0 ? arrayStart + 1 : 1, "whitespace"), `${extension}.gz`);
  return out;
}

/** Chrome traces: 40,000 X slices that overlap without nesting, and 15,000 E events that match none of 5,000 open Bs. */
function traceShapes(format: string): MutantCase[] {
  const overlap = Array.from({ length: 40_000 }, (_, index) => `{"name":"s${index % 97}","ph":"X","ts":${index},"dur":5,"pid":1,"tid":1}`);
  const stray = [
    ...Array.from({ length: 5_000 }, (_, index) => `{"name":"open${index}","ph":"B","ts":${index},"pid":1,"tid":1}`),
    ...Array.from({ length: 15_000 }, (_, index) => `{"name":"none${index}","ph":"E","ts":${5_000 + index},"pid":1,"tid":1}`),
  ];
  return [
    {
      format,
      label: "40,000 overlapping X slices",
      fileName: `${format}-overlap.json`,
      bytes: Buffer.from(`{"traceEvents":[${overlap.join(",")}]}`),
    },
    {
      format,
      label: "15,000 E events matching no B",
      fileName: `${format}-stray.json`,
      bytes: Buffer.from(`{"traceEvents":[${stray.join(",")}]}`),
    },
  ];
}

function textCases(format: string, text: string, extension: string, seed: number): MutantCase[] {
  const next = random(seed);
  const original = Buffer.from(text, "utf8");
  const out = common(format, original, extension, next);
  const add = (label: string, bytes: Buffer, ext = extension) =>
    out.push({ format, label, fileName: `${format}-${out.length}${ext}`, bytes });
  const lines = text.split("\n");
  add("counts of the wrong type", Buffer.from(lines.map((line) => line.replace(/ (\d+)$/, " many")).join("\n")));
  for (const extreme of ["1e308", "-5", "18446744073709551615"])
    add(`counts → ${extreme}`, Buffer.from(lines.map((line) => line.replace(/ (\d+)$/, ` ${extreme}`)).join("\n")));
  add("one line of 100,000 frames", Buffer.from(`${Array.from({ length: 100_000 }, (_, index) => `f${index}`).join(";")} 1\n${text}`));
  add("gzip bomb: 512 MiB of zeros after the first line", gzipBomb(original, text.indexOf("\n") + 1, "zeros"), `${extension}.gz`);
  return out;
}

// A tiny protobuf writer, enough for profile.proto.
function varint(value: bigint | number): number[] {
  let rest = BigInt(value);
  if (rest < 0n) rest += 1n << 64n;
  const bytes: number[] = [];
  do {
    let byte = Number(rest & 0x7fn);
    rest >>= 7n;
    if (rest > 0n) byte |= 0x80;
    bytes.push(byte);
  } while (rest > 0n);
  return bytes;
}
const tag = (field: number, wire: number) => varint(field * 8 + wire);
const int = (field: number, value: bigint | number) => [...tag(field, 0), ...varint(value)];
const bytesField = (field: number, body: number[]) => [...tag(field, 2), ...varint(body.length), ...body];
const packed = (field: number, values: (bigint | number)[]) =>
  bytesField(
    field,
    values.flatMap((value) => varint(value)),
  );
const stringField = (value: string | Buffer) => bytesField(6, [...(typeof value === "string" ? Buffer.from(value) : value)]);

function pprofProfile(options: { value?: bigint; names?: (string | Buffer)[]; sampleWire?: number } = {}): Buffer {
  const strings = ["", "cpu", "nanoseconds", ...(options.names ?? ["main", "work"]), "main.go"];
  const sample = [...packed(1, [2, 1]), ...packed(2, [options.value ?? 10n])];
  return Buffer.from([
    ...bytesField(1, [...int(1, 1), ...int(2, 2)]),
    ...(options.sampleWire === 0 ? int(2, 5) : bytesField(2, sample)),
    ...bytesField(4, [...int(1, 1), ...bytesField(4, int(1, 1))]),
    ...bytesField(4, [...int(1, 2), ...bytesField(4, int(1, 2))]),
    ...bytesField(5, [...int(1, 1), ...int(2, 3), ...int(4, strings.length - 1)]),
    ...bytesField(5, [...int(1, 2), ...int(2, 4), ...int(4, strings.length - 1)]),
    ...strings.flatMap((value) => stringField(value)),
  ]);
}

function pprofCases(seed: number): MutantCase[] {
  const format = "pprof";
  const next = random(seed);
  const original = gzipSync(pprofProfile());
  const out = common(format, pprofProfile(), ".pb", next);
  const add = (label: string, bytes: Buffer, ext = ".pb.gz") =>
    out.push({ format, label, fileName: `${format}-${out.length}${ext}`, bytes });
  add("gzip cut at 0.5", original.subarray(0, original.length >> 1));
  add("a sample of the wrong wire type", gzipSync(pprofProfile({ sampleWire: 0 })));
  add("value 2^64-1", gzipSync(pprofProfile({ value: (1n << 64n) - 1n })));
  add("value -1", gzipSync(pprofProfile({ value: -1n })));
  add("NUL and invalid UTF-8 in names", gzipSync(pprofProfile({ names: ["ma\u0000in", Buffer.from([0xff, 0xfe, 0x41])] })));
  add("gzip bomb: 5,000,000 empty strings", gzipSync(Buffer.alloc(10_000_000, Buffer.from([0x32, 0x00])), { level: 9 }));
  add("gzip bomb: 512 MiB of zeros after the profile", gzipBomb(pprofProfile(), pprofProfile().length, "zeros"));
  add("message nested 50,000 deep", Buffer.from(Array.from({ length: 50_000 }, () => [0x0a, 0x02]).flat()), ".pb");
  return out;
}

function nsightCases(seed: number, scratch: string): MutantCase[] {
  const format = "nsight";
  const fixture = join(repositoryRoot, "test", "fixtures", "nsight-systems", "nsight-2025.5.2.sqlite");
  const original = readFileSync(fixture);
  const out = common(format, original, ".sqlite", random(seed)).filter(
    (item) => !item.label.startsWith("NUL") && !item.label.startsWith("invalid"),
  );
  const edited = (label: string, sql: string) => {
    const path = join(scratch, `nsight-edit-${out.length}.sqlite`);
    copyFileSync(fixture, path);
    const database = new Database(path);
    database.exec(sql);
    database.close();
    out.push({ format, label, fileName: `${format}-${out.length}.sqlite`, bytes: readFileSync(path) });
    rmSync(path, { force: true });
  };
  edited("kernel times of the wrong type", "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 'soon', \"end\" = x'00ff'");
  edited("kernel start 1e30 and end -1", 'UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 1e30, "end" = -1');
  edited("kernels that end before they start", 'UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET "end" = start - 1000');
  edited("NUL and invalid UTF-8 in names", "UPDATE StringIds SET value = 'bad' || char(0) || 'name' || CAST(x'fffe' AS TEXT)");
  return out;
}

function pyperfText(): string {
  return JSON.stringify({
    version: "1.0",
    metadata: { unit: "second", loops: 4 },
    benchmarks: [
      { metadata: { name: "parse" }, runs: [{ warmups: [[1, 0.5]], values: [0.011, 0.012, 0.013] }, { values: [0.014, 0.015] }] },
      { metadata: { name: "mem", unit: "byte" }, runs: [{ values: [1024, 2048] }] },
    ],
  });
}

/** Every format of the corpus. */
export function mutantFormats(scratch: string): MutantFormat[] {
  const fixture = (name: string) => readFileSync(join(formatsFixtures, name), "utf8");
  const kineto = gunzipSync(readFileSync(join(formatsFixtures, "kineto", "rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"))).toString(
    "utf8",
  );
  const collapsed = "main;parse;tokenize 40\nmain;parse;build 25\nmain;render 20\nmain;idle 5\n";
  return [
    { name: "speedscope", cases: (seed) => jsonCases("speedscope", fixture("py-spy.speedscope.json"), ".speedscope.json", seed) },
    {
      name: "chrome",
      cases: (seed) => [...jsonCases("chrome", fixture("py-spy.chrometrace.json"), ".json", seed), ...traceShapes("chrome")],
    },
    { name: "kineto", cases: (seed) => jsonCases("kineto", kineto, ".pt.trace.json", seed) },
    { name: "devtools", cases: (seed) => jsonCases("devtools", fixture("devtools/multi-thread-with-samples.json"), ".json", seed) },
    { name: "cpuprofile", cases: (seed) => jsonCases("cpuprofile", fixture("node-busy.cpuprofile"), ".cpuprofile", seed) },
    { name: "collapsed", cases: (seed) => textCases("collapsed", collapsed, ".collapsed", seed) },
    { name: "py-spy-raw", cases: (seed) => textCases("py-spy-raw", fixture("py-spy.raw.txt"), ".txt", seed) },
    { name: "pprof", cases: pprofCases },
    {
      name: "pyperf",
      extract: { kind: "benchmark_samples", tool: "pyperf" },
      cases: (seed) => jsonCases("pyperf", pyperfText(), ".json", seed),
    },
    { name: "nsight", extract: { kind: "execution_trace", tool: "nsight-systems" }, cases: (seed) => nsightCases(seed, scratch) },
  ];
}
