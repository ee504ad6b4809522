import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { detectProfileFormat, detectProfileFormatFromHead } from "../../../../src/adapters/formats/detect.ts";
import { extractProfile } from "../../../../src/adapters/formats/extract-profile.ts";
import { MemoryEvidenceSink } from "../../../../src/domain/evidence.ts";
import { fixtures, hottest, parseFailure, projectRoot, tempDir } from "./helpers.ts";

const head = (text: string) => new TextEncoder().encode(text);

describe("detectProfileFormat on real fixtures", () => {
  const cases: [string, string, string | null][] = [
    ["py-spy.speedscope.json", "speedscope", "py-spy"],
    ["py-spy-threads.speedscope.json", "speedscope", "py-spy"],
    ["py-spy.raw.txt", "py_spy_raw", "py-spy"],
    ["py-spy-threads.raw.txt", "py_spy_raw", "py-spy"],
    ["py-spy.chrometrace.json", "chrome_trace", "py-spy"],
    ["node-busy.cpuprofile", "v8_cpuprofile", "v8"],
    ["busy.py", "unknown", null],
  ];
  for (const [name, format, producer] of cases) {
    test(`${name} → ${format}`, async () => {
      const detected = await detectProfileFormat(join(fixtures, name));
      expect(detected.format).toBe(format as typeof detected.format);
      expect(detected.producer).toBe(producer);
    });
  }

  test("py-spy speedscope carries the producer version", async () => {
    expect((await detectProfileFormat(join(fixtures, "py-spy.speedscope.json"))).producer_version).toMatch(/^0\.4\./);
  });

  test("extractProfile detects and extracts every fixture; the hot function wins", async () => {
    for (const [name, hot] of [
      ["py-spy.speedscope.json", "hot_loop"],
      ["py-spy.raw.txt", "hot_loop"],
      ["py-spy.chrometrace.json", "hot_loop"],
      ["node-busy.cpuprofile", "hotLoop"],
    ] as const) {
      const sink = new MemoryEvidenceSink();
      const result = await extractProfile(join(fixtures, name), sink, { projectRoot });
      expect(result.rows.stacks).toBeGreaterThan(0);
      expect(hottest(sink)).toBe(hot);
    }
    const error = await parseFailure(() => extractProfile(join(fixtures, "busy.py"), new MemoryEvidenceSink(), { projectRoot }));
    expect(error.code).toBe("ARTIFACT_PARSE_FAILED");
  });
});

describe("detectProfileFormatFromHead", () => {
  test("torch.profiler markers before traceEvents", () => {
    const detected = detectProfileFormatFromHead(
      head(
        '{\n  "schemaVersion": 1,\n  "deviceProperties": [{"id": 0}],\n  "distributedInfo": {"rank": 0},\n  "traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm"',
      ),
      "trace.json",
    );
    expect(detected).toMatchObject({ format: "chrome_trace", producer: "torch.profiler" });
    expect(detected.hints).toContain('"schemaVersion"');
    expect(detectProfileFormatFromHead(head('[{"name":"ProfilerStep#1","ph":"X"'), "t.json")).toMatchObject({
      format: "chrome_trace",
      producer: "torch.profiler",
    });
    expect(detectProfileFormatFromHead(head('{"traceEvents":[{"ph":"B","name":"x"'), "t.json")).toMatchObject({
      format: "chrome_trace",
      producer: null,
    });
  });

  test("other shapes", () => {
    expect(detectProfileFormatFromHead(head("a;b;c 12\na;b 3\n"), "out.folded").format).toBe("collapsed");
    expect(detectProfileFormatFromHead(head("main [app];memcpy [libc.so.6] 5\n"), "x.txt").format).toBe("collapsed");
    expect(detectProfileFormatFromHead(head("thread (0x7f1234);main (app.py:3) 5\n"), "x.txt").format).toBe("py_spy_raw");
    expect(detectProfileFormatFromHead(new Uint8Array(gzipSync(new Uint8Array([0x0a, 0x02]))), "cpu.pb.gz").format).toBe("pprof");
    expect(detectProfileFormatFromHead(new Uint8Array([0x0a, 0x04, 0x08, 0x01, 0x10, 0x02]), "cpu.pprof").format).toBe("pprof");
    expect(detectProfileFormatFromHead(head('{"nodes":[{"id":1,"callFrame":{}}]'), "x.json").format).toBe("v8_cpuprofile");
    expect(detectProfileFormatFromHead(head('{"hello":1}'), "x.json").format).toBe("unknown");
    expect(detectProfileFormatFromHead(head("hello world\n"), "x.txt").format).toBe("unknown");
    expect(detectProfileFormatFromHead(new Uint8Array([0, 1, 2, 3]), "x.bin").format).toBe("unknown");
  });

  test("reads only the head of a large file", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const path = join(dir, "big.json");
      writeFileSync(
        path,
        `[${Array.from({ length: 20_000 }, (_, index) => `{"ph":"X","name":"n${index}","ts":${index},"dur":1,"pid":1,"tid":1}`).join(",")}]`,
      );
      expect((await detectProfileFormat(path)).format).toBe("chrome_trace");
    } finally {
      cleanup();
    }
  });

  test("gzip-compressed files are detected by their content; markers past the first 64 KiB still name the producer", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const kineto = await detectProfileFormat(join(fixtures, "kineto", "benchmark_result_2869224_1695835535_trace.json.gz"));
      expect(kineto).toMatchObject({ format: "chrome_trace", producer: "torch.profiler" });
      expect(kineto.hints[0]).toBe("gzip");
      // Every real kineto trace, including those whose JSON opens with a newline and spaces (bytes
      // that also parse as protobuf field 1 messages), is a Chrome trace, never a Perfetto protobuf.
      for (const name of readdirSync(join(fixtures, "kineto")).filter((file) => file.endsWith(".json.gz"))) {
        expect({ name, ...(await detectProfileFormat(join(fixtures, "kineto", name))) }).toMatchObject({ name, format: "chrome_trace" });
      }
      const speedscope = join(dir, "profile.speedscope.json.gz");
      writeFileSync(speedscope, gzipSync(readFileSync(join(fixtures, "py-spy.speedscope.json"))));
      expect(await detectProfileFormat(speedscope)).toMatchObject({ format: "speedscope", producer: "py-spy" });
      const folded = join(dir, "stacks.txt.gz");
      writeFileSync(folded, gzipSync("a;b;c 12\na;b 3\n"));
      expect((await detectProfileFormat(folded)).format).toBe("collapsed");
      const sink = new MemoryEvidenceSink();
      await extractProfile(folded, sink, { projectRoot: null });
      expect(sink.stacks.map((stack) => stack.weight)).toEqual([12, 3]);

      // py-spy writes `exporter` after every frame and sample: far past the first 64 KiB here.
      const late = join(dir, "late.speedscope.json");
      const frames = Array.from({ length: 5000 }, (_, index) => ({ name: `function_${index}`, file: "/srv/app.py", line: index + 1 }));
      writeFileSync(
        late,
        JSON.stringify({
          $schema: "https://www.speedscope.app/file-format-schema.json",
          shared: { frames },
          profiles: [{ type: "sampled", name: "main", unit: "samples", startValue: 0, endValue: 1, samples: [[0, 1]], weights: [1] }],
          exporter: "py-spy@0.4.3",
        }),
      );
      expect(await detectProfileFormat(late)).toMatchObject({ format: "speedscope", producer: "py-spy", producer_version: "0.4.3" });
    } finally {
      cleanup();
    }
  });

  test("UTF-16 folded stacks (with their byte-order mark) are detected and read", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const path = join(dir, "utf16.txt");
      const text = "main;parse;tokenize 70\nmain;parse 20\n";
      writeFileSync(path, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, "utf16le")]));
      expect((await detectProfileFormat(path)).format).toBe("collapsed");
      const sink = new MemoryEvidenceSink();
      await extractProfile(path, sink, { projectRoot: null });
      expect(hottest(sink)).toBe("tokenize");
    } finally {
      cleanup();
    }
  });
});

describe("no silent acceptance: every format flameox reads is detected by content, gzip or not", () => {
  const nsight = join(fixtures, "..", "nsight-systems", "nsight-2025.5.2.sqlite");
  const kineto = join(fixtures, "kineto", "benchmark_result_2869224_1695835535_trace.json.gz");
  const corpus = join(fixtures, "corpus");

  test("capture files read by an extract tool: pyperf JSON (also gzip), Nsight SQLite, memray, flameox schemas", async () => {
    const { dir, cleanup } = tempDir();
    try {
      expect((await detectProfileFormat(join(corpus, "pyperf", "telco.json"))).format).toBe("pyperf_json");
      expect((await detectProfileFormat(join(corpus, "pyperf", "py3.json.gz"))).format).toBe("pyperf_json");
      expect(await detectProfileFormat(nsight)).toMatchObject({ format: "nsight_sqlite", producer: "nsight-systems" });
      const gzipped = join(dir, "bench.json.gz");
      writeFileSync(gzipped, gzipSync(readFileSync(join(corpus, "pyperf", "telco.json"))));
      expect((await detectProfileFormat(gzipped)).format).toBe("pyperf_json");
      const samples = join(dir, "samples.json");
      writeFileSync(samples, '{"schema": "flameox.benchmark-samples.v1", "benchmarks": []}');
      expect((await detectProfileFormat(samples)).format).toBe("benchmark_samples");
      const compressed = join(dir, "report.sqlite.gz");
      writeFileSync(compressed, gzipSync(readFileSync(nsight)));
      expect(await detectProfileFormat(compressed)).toMatchObject({ format: "unknown", advice: { code: "format_needs_conversion" } });
      const sqlite = join(dir, "other.sqlite");
      writeFileSync(
        sqlite,
        Buffer.concat([Buffer.from("SQLite format 3\u0000"), Buffer.alloc(100), Buffer.from("CREATE TABLE people(name)")]),
      );
      expect(await detectProfileFormat(sqlite)).toMatchObject({ format: "unknown", advice: { code: "format_not_recognized" } });
    } finally {
      cleanup();
    }
  });

  test("pprof uncompressed and gzip, whatever the file name; Chrome/kineto and V8 profiles under gzip", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const plain = join(dir, "profile.data");
      writeFileSync(plain, readFileSync(join(corpus, "google-pprof", "sample.cpu.pb")));
      expect((await detectProfileFormat(plain)).format).toBe("pprof");
      const gzipped = join(dir, "profile");
      writeFileSync(gzipped, readFileSync(join(corpus, "google-pprof", "sample.cpu")));
      expect((await detectProfileFormat(gzipped)).format).toBe("pprof");
      expect(await detectProfileFormat(kineto)).toMatchObject({ format: "chrome_trace", producer: "torch.profiler" });
      const cpuprofile = join(dir, "node.cpuprofile.gz");
      writeFileSync(cpuprofile, gzipSync(readFileSync(join(fixtures, "node-busy.cpuprofile"))));
      expect((await detectProfileFormat(cpuprofile)).format).toBe("v8_cpuprofile");
      const sink = new MemoryEvidenceSink();
      await extractProfile(cpuprofile, sink, { projectRoot });
      expect(hottest(sink)).toBe("hotLoop");
      const raw = join(dir, "py-spy.txt.gz");
      writeFileSync(raw, gzipSync(readFileSync(join(fixtures, "py-spy.raw.txt"))));
      expect((await detectProfileFormat(raw)).format).toBe("py_spy_raw");
    } finally {
      cleanup();
    }
  });

  test("folded stacks with a bad line, a first frame starting with '[', a NUL, or a first line over 64 KiB", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const cases: [string, string, string][] = [
        ["bad-line.txt", "main;work 7\nmain;idle 3\nthis line is broken\nmain;work;inner 2\n", "work"],
        ["bracket.txt", "[unknown];main;work 7\n[unknown];main 1\n", "work"],
        ["nul.txt", "main;wo\u0000rk 7\nmain 1\n", "wo\u0000rk"],
        ["long.txt", `${Array.from({ length: 9_000 }, (_, index) => `frame_${index}`).join(";")};deep 5\nmain 1\n`, "deep"],
      ];
      for (const [name, text, hot] of cases) {
        const path = join(dir, name);
        writeFileSync(path, text);
        expect([name, (await detectProfileFormat(path)).format]).toEqual([name, "collapsed"]);
        const sink = new MemoryEvidenceSink();
        const result = await extractProfile(path, sink, { projectRoot: null });
        expect(hottest(sink)).toBe(hot);
        if (name === "bad-line.txt") expect(result.limitations[0]).toContain("1 lines did not end with a numeric weight");
      }
    } finally {
      cleanup();
    }
  });

  test("what is still unknown says what it is and what to run, and extractProfile says the same", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const perfData = join(dir, "perf.data");
      writeFileSync(perfData, Buffer.concat([Buffer.from("PERFILE2"), Buffer.alloc(200, 1)]));
      const detected = await detectProfileFormat(perfData);
      expect(detected).toMatchObject({ format: "unknown", advice: { code: "format_needs_conversion", next_tool: "import_artifact" } });
      expect(detected.advice?.message).toContain("perf script -i <file>");
      const error = await parseFailure(() => extractProfile(perfData, new MemoryEvidenceSink(), { projectRoot: null }));
      expect(error.remediation[0]).toContain("perf script -i <file>");
      const prose = join(dir, "notes.txt");
      writeFileSync(prose, "Meeting notes\nnothing to see here\n");
      expect((await detectProfileFormat(prose)).advice?.message).toContain("kind=sample_profile");
    } finally {
      cleanup();
    }
  });
});
