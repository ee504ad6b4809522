import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
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
