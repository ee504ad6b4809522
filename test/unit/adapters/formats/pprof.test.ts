import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { extractPprof, pprofTableBounds } from "../../../../src/adapters/formats/pprof.ts";
import { MemoryEvidenceSink } from "../../../../src/domain/evidence.ts";
import { hottest, leaf, names, parseFailure, tempDir } from "./helpers.ts";

// A tiny protobuf encoder, enough to write profile.proto messages.
function varint(value: number): number[] {
  const bytes: number[] = [];
  let rest = value < 0 ? 2 ** 64 + value : value;
  do {
    let byte = rest % 128;
    rest = Math.floor(rest / 128);
    if (rest > 0) byte |= 0x80;
    bytes.push(byte);
  } while (rest > 0);
  return bytes;
}
const intField = (field: number, value: number): number[] => [...varint(field * 8), ...varint(value)];
const bytesField = (field: number, body: number[]): number[] => [...varint(field * 8 + 2), ...varint(body.length), ...body];
const packed = (field: number, values: number[]): number[] => bytesField(field, values.flatMap(varint));
const text = (field: number, value: string): number[] => bytesField(field, [...new TextEncoder().encode(value)]);

function profileBytes(options: { defaultSampleType?: number; unpacked?: boolean } = {}): Uint8Array {
  const strings = [
    "",
    "samples",
    "count",
    "cpu",
    "nanoseconds",
    "main",
    "/proj/cmd/main.go",
    "work",
    "/proj/pkg/work.go",
    "inlined",
    "thread",
    "worker-1",
    "libc.so.6",
    "/usr/lib/libc.so.6",
  ];
  const s = (value: string) => strings.indexOf(value);
  const valueType = (type: string, unit: string) => [...intField(1, s(type)), ...intField(2, s(unit))];
  const fn = (id: number, name: string, file: string) => [
    ...intField(1, id),
    ...intField(2, s(name)),
    ...intField(3, s(name)),
    ...intField(4, s(file)),
  ];
  const line = (functionId: number, lineNumber: number) => [...intField(1, functionId), ...intField(2, lineNumber)];
  const sample = (locations: number[], values: number[], labels: number[][] = []) => [
    ...(options.unpacked ? locations.flatMap((id) => intField(1, id)) : packed(1, locations)),
    ...packed(2, values),
    ...labels.flatMap((label) => bytesField(3, label)),
  ];
  const thread = [...intField(1, s("thread")), ...intField(2, s("worker-1"))];
  const message = [
    ...bytesField(1, valueType("samples", "count")),
    ...bytesField(1, valueType("cpu", "nanoseconds")),
    // leaf first: location 2 (work, with `inlined` inlined into it) called from location 1 (main)
    ...bytesField(2, sample([2, 1], [3, 30_000_000])),
    ...bytesField(2, sample([1], [1, 10_000_000])),
    ...bytesField(2, sample([3, 1], [2, 20_000_000], [thread])),
    ...bytesField(3, [...intField(1, 1), ...intField(5, s("/usr/lib/libc.so.6"))]),
    ...bytesField(4, [...intField(1, 1), ...bytesField(4, line(1, 12))]),
    ...bytesField(4, [...intField(1, 2), ...bytesField(4, line(3, 40)), ...bytesField(4, line(2, 7))]),
    ...bytesField(4, [...intField(1, 3), ...intField(2, 1), ...intField(3, 0x7f00)]),
    ...bytesField(5, fn(1, "main", "/proj/cmd/main.go")),
    ...bytesField(5, fn(2, "work", "/proj/pkg/work.go")),
    ...bytesField(5, fn(3, "inlined", "/proj/pkg/work.go")),
    ...strings.flatMap((value) => text(6, value)),
    ...intField(9, 1_700_000_000_000_000_000),
    ...bytesField(11, valueType("cpu", "nanoseconds")),
    ...intField(12, 10_000_000),
    ...(options.defaultSampleType !== undefined ? intField(14, options.defaultSampleType) : []),
  ];
  return new Uint8Array(message);
}

describe("extractPprof", () => {
  test("gzip-compressed profile: cpu nanoseconds, inlined frames, labels, unsymbolized locations", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const path = join(dir, "cpu.pb.gz");
      writeFileSync(path, gzipSync(profileBytes()));
      const sink = new MemoryEvidenceSink();
      const result = await extractPprof(path, sink, { projectRoot: "/proj" });
      expect(result.limitations.join(" ")).toMatch(/weighted by sample type "cpu"/);
      const rows = sink.stacks.map((stack) => ({
        stack: names(sink, stack).join(";"),
        weight: stack.weight,
        count: stack.sample_count,
        unit: stack.unit,
        thread: stack.thread,
      }));
      expect(rows).toEqual([
        { stack: "main;work;inlined", weight: 30_000_000, count: 3, unit: "ns", thread: null },
        { stack: "main", weight: 10_000_000, count: 1, unit: "ns", thread: null },
        { stack: "main;0x7f00", weight: 20_000_000, count: 2, unit: "ns", thread: "worker-1" },
      ]);
      expect(hottest(sink)).toBe("inlined");
      expect(leaf(sink, sink.stacks[0]!)).toMatchObject({ file: "pkg/work.go", line: 40, language: "go" });
      expect(leaf(sink, sink.stacks[2]!)).toMatchObject({ module: "libc.so.6", language: "native", file: null });
    } finally {
      cleanup();
    }
  });

  test("sample type by option, by default_sample_type; unpacked ids; uncompressed input", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const path = join(dir, "plain.pb");
      writeFileSync(path, profileBytes({ unpacked: true, defaultSampleType: 1 }));
      const byDefault = new MemoryEvidenceSink();
      await extractPprof(path, byDefault, { projectRoot: "/proj" });
      expect(byDefault.stacks.map((stack) => [stack.weight, stack.unit])).toEqual([
        [3, "samples"],
        [1, "samples"],
        [2, "samples"],
      ]);
      const byOption = new MemoryEvidenceSink();
      await extractPprof(path, byOption, { projectRoot: "/proj", sampleType: "cpu" });
      expect(byOption.stacks[0]?.weight).toBe(30_000_000);
      const error = await parseFailure(() =>
        extractPprof(path, new MemoryEvidenceSink(), { projectRoot: null, sampleType: "alloc_space" }),
      );
      expect(error.message).toMatch(/has: samples, cpu/);
    } finally {
      cleanup();
    }
  });

  test("cut gzip or protobuf data fails with ARTIFACT_PARSE_FAILED", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const gz = gzipSync(profileBytes());
      const cutGz = join(dir, "cut.pb.gz");
      writeFileSync(cutGz, gz.subarray(0, Math.floor(gz.length / 2)));
      expect((await parseFailure(() => extractPprof(cutGz, new MemoryEvidenceSink(), { projectRoot: null }))).code).toBe(
        "ARTIFACT_PARSE_FAILED",
      );
      const raw = profileBytes();
      const cutRaw = join(dir, "cut.pb");
      writeFileSync(cutRaw, raw.subarray(0, 41));
      const error = await parseFailure(() => extractPprof(cutRaw, new MemoryEvidenceSink(), { projectRoot: null }));
      expect(error.code).toBe("ARTIFACT_PARSE_FAILED");
      expect(error.message).toMatch(/byte \d+/);
    } finally {
      cleanup();
    }
  });

  test("a gzip bomb, trailing zeros after a valid profile, and a valid-looking bomb are refused early", async () => {
    const { dir, cleanup } = tempDir();
    try {
      // 1 GiB of zeros in about 1 MB: a zero byte is field number 0, refused at the first byte.
      const bomb = join(dir, "bomb.pb.gz");
      writeFileSync(bomb, gzipSync(new Uint8Array(64 << 20), { level: 1 }));
      const zeros = await parseFailure(() => extractPprof(bomb, new MemoryEvidenceSink(), { projectRoot: null }));
      expect(zeros.code).toBe("ARTIFACT_PARSE_FAILED");
      expect(zeros.message).toContain("field number 0 at byte 0");
      // A valid profile followed by 512 MiB of zeros: refused where the zeros begin.
      const valid = profileBytes();
      const trailing = join(dir, "trailing.pb.gz");
      writeFileSync(trailing, Buffer.concat([gzipSync(valid), gzipSync(new Uint8Array(512 << 20), { level: 1 })]));
      const afterProfile = await parseFailure(() => extractPprof(trailing, new MemoryEvidenceSink(), { projectRoot: null }));
      expect(afterProfile.message).toContain(`field number 0 at byte ${valid.length}`);
      // Valid but endless: unknown fields inflating past 100× the compressed size (and the 16 MiB floor).
      const endless = join(dir, "endless.pb.gz");
      const unknownField = Buffer.from([...varint(100 * 8 + 2), 100, ...new Uint8Array(100)]);
      writeFileSync(endless, gzipSync(Buffer.concat([Buffer.from(valid), Buffer.alloc(24 << 20, unknownField)]), { level: 9 }));
      const tooLarge = await parseFailure(() => extractPprof(endless, new MemoryEvidenceSink(), { projectRoot: null }));
      expect(tooLarge.code).toBe("ARTIFACT_TOO_LARGE");
    } finally {
      cleanup();
    }
  }, 60_000);

  test("a string table of millions of empty entries is refused at the table bound, not after the inflation cap", async () => {
    const { dir, cleanup } = tempDir();
    try {
      // `0x32 0x00` is an empty string_table entry: 2 bytes of input each, tens of bytes of heap once decoded.
      const path = join(dir, "strings.pb.gz");
      const entries = pprofTableBounds.entries + 1;
      writeFileSync(path, gzipSync(Buffer.alloc(entries * 2, Buffer.from([0x32, 0x00])), { level: 9 }));
      const refused = await parseFailure(() => extractPprof(path, new MemoryEvidenceSink(), { projectRoot: null }));
      expect(refused.code).toBe("ARTIFACT_TOO_LARGE");
      expect(refused.details).toMatchObject({ bound: "entries", limit: pprofTableBounds.entries });
    } finally {
      cleanup();
    }
  }, 60_000);

  test("values of 2^64-1 or below zero are left out with a limitation", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const path = join(dir, "absurd.pb");
      const strings = ["", "cpu", "nanoseconds", "f"];
      const message = [
        ...bytesField(1, [...intField(1, 1), ...intField(2, 2)]),
        // 2^64-1 as a varint (a double cannot hold it): nine 0xff bytes and 0x01.
        ...bytesField(2, [...packed(1, [1]), ...bytesField(2, [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01])]),
        ...bytesField(2, [...packed(1, [1]), ...packed(2, [5])]),
        ...bytesField(4, [...intField(1, 1), ...bytesField(4, [...intField(1, 1)])]),
        ...bytesField(5, [...intField(1, 1), ...intField(2, 3)]),
        ...strings.flatMap((value) => text(6, value)),
      ];
      writeFileSync(path, new Uint8Array(message));
      const sink = new MemoryEvidenceSink();
      const result = await extractPprof(path, sink, { projectRoot: null });
      expect(sink.stacks.map((stack) => stack.weight)).toEqual([5]);
      expect(result.limitations.join(" ")).toContain("1 samples had a negative value or one beyond 2^53");
    } finally {
      cleanup();
    }
  });
});

describe("heap profiles", () => {
  test("inuse_space is counted by inuse_objects, not by the first count type (alloc_objects)", async () => {
    const { ProtoWriter } = await import("../../../../src/adapters/export/protobuf-writer.ts");
    const strings = ["", "alloc_objects", "count", "alloc_space", "bytes", "inuse_objects", "inuse_space", "leaky", "churn"];
    const out = new ProtoWriter();
    for (const [type, unit] of [
      [1, 2],
      [3, 4],
      [5, 2],
      [6, 4],
    ])
      out.message(1, new ProtoWriter().uint(1, type as number).uint(2, unit as number));
    // [alloc_objects, alloc_space, inuse_objects, inuse_space] per stack: leaky keeps what it allocates, churn frees it.
    out.message(2, new ProtoWriter().packed(1, [1]).packed(2, [3, 3072, 3, 3072]));
    out.message(2, new ProtoWriter().packed(1, [2]).packed(2, [900, 921600, 2, 2048]));
    out.message(4, new ProtoWriter().uint(1, 1).message(4, new ProtoWriter().uint(1, 1)));
    out.message(4, new ProtoWriter().uint(1, 2).message(4, new ProtoWriter().uint(1, 2)));
    out.message(5, new ProtoWriter().uint(1, 1).uint(2, 7));
    out.message(5, new ProtoWriter().uint(1, 2).uint(2, 8));
    for (const text of strings) out.string(6, text);
    const { dir, cleanup } = tempDir();
    try {
      const path = join(dir, "heap.pb.gz");
      writeFileSync(path, gzipSync(out.take()));
      const sink = new MemoryEvidenceSink();
      await extractPprof(path, sink, { projectRoot: null });
      const rows = sink.stacks.map((stack) => [leaf(sink, stack).function, stack.weight, stack.sample_count, stack.unit]).sort();
      expect(rows).toEqual([
        ["churn", 2048, 2, "bytes"],
        ["leaky", 3072, 3, "bytes"],
      ]);
    } finally {
      cleanup();
    }
  });
});
