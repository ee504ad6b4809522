import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { extractChromeTrace } from "../../../../src/adapters/formats/chrome-trace.ts";
import { MemoryEvidenceSink } from "../../../../src/domain/evidence.ts";
import { snapshot, tempDir } from "./helpers.ts";
import { seededRandom as random } from "../../../support/random.ts";

/** Hand-written event texts that take every branch of the fast reader and of its fallback. */
const oddEvents = [
  '{"ph":"M","name":"process_name","pid":1,"args":{"name":"trainer"}}',
  '{"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"wörker ✓"}}',
  '{ "ph" : "X" , "name" : "spaced" , "pid" : 1 , "tid" : 1 , "ts" : 5 , "dur" : 50 , "args" : { "a" : 1 } }',
  '{"ph":"X","name":"esc \\"quoted\\" \\u00e9\\n","cat":"py","pid":1,"tid":1,"ts":6,"dur":3,"args":{"file\\/name":"C:\\\\x.py"}}',
  '{"ph":"X","name":"numbers","pid":1,"tid":1,"ts":7.25,"dur":1e1,"args":{"f":1.0,"e":1e3,"n":-0,"big":12345678901234567890,"ok":1.5}}',
  '{"ph":"X","name":"dup","pid":1,"tid":1,"ts":8,"dur":1,"args":{"k":1,"k":2}}',
  '{"ph":"X","name":"intkeys","pid":1,"tid":1,"ts":9,"dur":1,"args":{"b":1,"2":"two","1":"one"}}',
  '{"ph":"X","name":"nested","pid":1,"tid":1,"ts":10,"dur":2,"args":{"data":{"x":[1,{"y":null}],"z":true},"External id":77,"device":"cuda:0","stream":7}}',
  '{"ph":"X","name":"nested dup","pid":1,"tid":1,"ts":10.5,"dur":0.5,"args":{"data":{"x":1,"x":2}}}',
  '{"ph":"X","name":"ünïcödé 名前","cat":"cpu_op","pid":"p1","tid":"t1","ts":"11","dur":"4","args":{"Input Dims":[[2,3],[3]],"s":"ü"}}',
  '{"ph":"X","name":42,"pid":1,"tid":1,"ts":12,"dur":1}',
  '{"ph":"X","pid":1,"tid":1,"ts":12.5,"dur":1,"args":[1,2,3]}',
  '{"ph":"X","name":"strargs","pid":1,"tid":1,"ts":12.6,"dur":1,"args":"text"}',
  '{"ph":"X","name":"nullargs","pid":1,"tid":1,"ts":12.7,"dur":1,"args":null}',
  '{"ph":"X","name":"emptyargs","pid":1,"tid":1,"ts":12.8,"dur":1,"args":{}}',
  '{"ph":"X","name":"withfile","cat":"py","pid":1,"tid":1,"ts":13,"dur":2,"args":{"filename":"/proj/src/a.py","line":12}}',
  '{"ph":"X","name":"withfile2","cat":"py","pid":1,"tid":1,"ts":13.5,"dur":1,"args":{"file":"/elsewhere/b.py","line":"12"}}',
  `{"ph":"X","name":"bigargs","pid":1,"tid":1,"ts":14,"dur":1,"args":{"Input Dims":[[1024,1024]],"big":"${"x".repeat(5000)}","Bytes":96}}`,
  `{"ph":"X","name":"bigunicode","pid":1,"tid":1,"ts":14.2,"dur":1,"args":{"s":"${"é".repeat(2100)}"}}`,
  '{"ph":"B","name":"outer","pid":1,"tid":3,"ts":20,"args":{"phase":"decode"}}',
  '{"ph":"B","name":"inner","pid":1,"tid":3,"ts":21}',
  '{"ph":"E","pid":1,"tid":3,"ts":22,"args":{}}',
  '{"ph":"E","pid":1,"tid":3,"ts":30.0015,"args":{"result":"ok","correlation":5}}',
  '{"ph":"B","name":"unclosed","pid":1,"tid":4,"ts":40,"args":{"External id":"x9"}}',
  '{"ph":"E","pid":9,"tid":9,"ts":41}',
  '{"ph":"i","name":"[memory]","cat":"cpu_instant_event","s":"t","pid":1,"tid":1,"ts":6.5,"args":{"Total Allocated":96,"Bytes":-96,"Addr":94000000016384}}',
  '{"ph":"I","name":"global","s":"g","pid":1,"tid":1,"ts":7}',
  '{"ph":"n","name":"async","id":"0x1","pid":1,"tid":1,"ts":7}',
  '{"ph":"C","name":"queue","pid":1,"ts":5,"args":{"depth":3}}',
  '{"ph":"s","name":"flow","cat":"ac2g","id":7,"pid":1,"tid":1,"ts":12}',
  '{"ph":"t","name":"flow","cat":"ac2g","bind_id":"b8","pid":1,"tid":1,"ts":12.1}',
  '{"ph":"f","name":"flow","cat":"ac2g","id":7,"bp":"e","pid":1,"tid":2,"ts":16}',
  '{"ph":"b","name":"asyncb","id":3,"pid":1,"ts":17,"cat":"a"}',
  '{"ph":"X","ph":"B","name":"dupph","pid":1,"tid":5,"ts":1}',
  '{"name":"nophase","pid":1,"ts":1}',
  '{"ph":7,"name":"numphase","pid":1,"ts":1}',
  '{"ph":"X","name":"id-obj","id2":{"local":"0x1"},"pid":1,"tid":6,"ts":2,"dur":1,"extra":[true,false,null,"s\\t"]}',
  '"a string entry"',
  "17",
  "[1,2]",
  "null",
];

/** A torch-like trace in completion order with random nesting, threads and args. */
function randomEvents(seed: number, count: number): string[] {
  const next = random(seed);
  const names = ["aten::mm", "aten::add", "ProfilerStep#1", "näme", 'a\\"b', "tab\\tname", "x"];
  const events: string[] = [];
  let clock = 1_000;
  while (events.length < count) {
    const tid = 1 + Math.floor(next() * 3);
    const name = names[Math.floor(next() * names.length)] as string;
    const duration = 5 + Math.floor(next() * 50);
    const children: string[] = [];
    let childStart = clock + 1;
    for (let index = 0; index < Math.floor(next() * 3); index++) {
      const childDuration = 1 + Math.floor(next() * 3);
      const args = next() < 0.5 ? `,"args":{"External id":${events.length + index},"Input Dims":[[${index},2]]}` : "";
      children.push(
        `{"ph":"X","cat":"cpu_op","name":"${name}.${index}","pid":7,"tid":${tid},"ts":${childStart}.${Math.floor(next() * 1000)},"dur":${childDuration}${args}}`,
      );
      childStart += childDuration + 1;
    }
    const parent = `{"ph":"X","cat":"cpu_op","name":"${name}","pid":7,"tid":${tid},"ts":${clock},"dur":${duration}.5,"args":{"correlation":${events.length},"stream":${tid}}}`;
    // Children first (completion order) half of the time.
    if (next() < 0.5) events.push(...children, parent);
    else events.push(parent, ...children);
    if (next() < 0.3)
      events.push(
        `{"ph":"i","s":"t","name":"[memory]","pid":7,"tid":${tid},"ts":${clock + 2},"args":{"Bytes":${Math.floor(next() * 1000) - 500}}}`,
      );
    if (next() < 0.1)
      events.push(
        `{"ph":"B","name":"b${tid}","pid":7,"tid":${tid},"ts":${clock + 3}}`,
        `{"ph":"E","pid":7,"tid":${tid},"ts":${clock + 4}}`,
      );
    clock += Math.floor(next() * duration);
  }
  return events;
}

/** The fast reader (stream, auto) against JSON.parse of the whole file: the same records, so the same rows. */
async function compare(path: string, options: { reorderWindow?: number; orderMemoryBytes?: number } = {}): Promise<void> {
  const expected = new MemoryEvidenceSink();
  const expectedResult = await extractChromeTrace(path, expected, { projectRoot: "/proj", parseMode: "whole", ...options });
  for (const parseMode of ["stream", "auto"] as const) {
    const actual = new MemoryEvidenceSink();
    const result = await extractChromeTrace(path, actual, { projectRoot: "/proj", parseMode, ...options });
    expect(snapshot(actual)).toEqual(snapshot(expected));
    expect(result).toEqual(expectedResult);
  }
}

describe("the fast Chrome trace reader gives the rows of JSON.parse", () => {
  test("odd events: escapes, unicode, whitespace, non-canonical numbers, duplicate/integer keys, big args, B/E, instants, metadata, non-objects", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const bare = join(dir, "bare.json");
      writeFileSync(bare, `[${oddEvents.join(",\n")}]`);
      await compare(bare);
      await compare(bare, { orderMemoryBytes: 1024 });
      const torch = join(dir, "torch.json");
      writeFileSync(
        torch,
        `\uFEFF{"schemaVersion":1,"deviceProperties":[{"name":"GPU \\"0\\""}],"traceEvents":[\n${oddEvents.join(",\n")}\n],"traceName":"t.json"}`,
      );
      await compare(torch);
      // JSON.parse keeps only the last of two `traceEvents` arrays; the streaming reader reads both.
      const twice = join(dir, "twice.json");
      writeFileSync(
        twice,
        `{"traceEvents":[${oddEvents.join(",")}],"traceEvents":[{"ph":"X","name":"second array","pid":1,"tid":1,"ts":1,"dur":1}]}`,
      );
      const streamed = new MemoryEvidenceSink();
      await extractChromeTrace(twice, streamed, { projectRoot: null, parseMode: "stream" });
      const single = new MemoryEvidenceSink();
      await extractChromeTrace(bare, single, { projectRoot: null, parseMode: "stream" });
      expect(streamed.traceEvents.length).toBe(single.traceEvents.length + 1);
      expect(streamed.traceEvents.some((row) => row.name === "second array")).toBe(true);
      const empty = join(dir, "empty.json");
      writeFileSync(empty, '{"traceEvents":[]}');
      await compare(empty);
    } finally {
      cleanup();
    }
  });

  test("random torch-like traces, in completion order, across chunk boundaries and reorder windows", async () => {
    const { dir, cleanup } = tempDir();
    try {
      for (const seed of [1, 2, 3]) {
        const path = join(dir, `random-${seed}.json`);
        writeFileSync(path, `{"traceEvents":[${randomEvents(seed, 3000).join(seed === 2 ? ", \n  " : ",")}]}`);
        await compare(path);
        await compare(path, { orderMemoryBytes: 4096 * seed });
      }
    } finally {
      cleanup();
    }
  }, 60_000);

  test("an event longer than a read chunk is read whole", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const path = join(dir, "huge-event.json");
      const huge = `{"ph":"X","name":"huge","pid":1,"tid":1,"ts":1,"dur":5,"args":{"blob":"${"y".repeat(20 << 20)}","Bytes":1}}`;
      writeFileSync(path, `[${randomEvents(9, 50).join(",")},${huge},${randomEvents(10, 50).join(",")}]`);
      await compare(path);
    } finally {
      cleanup();
    }
  }, 60_000);

  test("a trace of several read chunks, ASCII at first and then not, reads as JSON.parse reads it", async () => {
    // Chunks are 4 MiB: ~10 MiB of ASCII events carry a partly read event over two chunk boundaries
    // inside the buffer, then the first non-ASCII name switches the reader to the UTF-8 decoder.
    const { dir, cleanup } = tempDir();
    try {
      const ascii = randomEvents(11, 100_000).map((event) => event.replaceAll("näme", "name"));
      const path = join(dir, "chunks.json");
      writeFileSync(path, `{"traceEvents":[${ascii.join(",")},${randomEvents(12, 200).join(",")}]}`);
      expect(ascii.join(",").length).toBeGreaterThan(10 << 20);
      await compare(path);
    } finally {
      cleanup();
    }
  }, 120_000);

  test("malformed and truncated files fail as JSON.parse of the whole file does", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const cases = [
        '[{"ph":"X","ts":1,"dur":2,"name":"a"},{"ph":"X" "ts":3}]',
        '[{"ph":"X","ts":1,"dur":2,"name":"a"} {"ph":"X"}]',
        '[{"ph":"X","ts":1,"dur":2,"name":"a\u0001"}]',
        '{"traceEvents":[{"ph":"X","ts":1,"dur":2,"name":"a"}',
        '{"traceEvents":[{"ph":"X","ts":1,"dur":2,"name":"a"}]} x',
        '{"nodes":[]}',
      ];
      for (const [index, text] of cases.entries()) {
        const path = join(dir, `bad-${index}.json`);
        writeFileSync(path, text);
        const outcome = async (run: () => Promise<unknown>) => {
          try {
            await run();
            return "ok";
          } catch (error) {
            return `${(error as { code?: string }).code}: ${(error as Error).message}`;
          }
        };
        const expected = await outcome(() => extractChromeTrace(path, new MemoryEvidenceSink(), { projectRoot: null, parseMode: "whole" }));
        const actual = await outcome(() => extractChromeTrace(path, new MemoryEvidenceSink(), { projectRoot: null, parseMode: "stream" }));
        expect(actual).toBe(expected);
        expect(actual).toStartWith("ARTIFACT_PARSE_FAILED");
      }
    } finally {
      cleanup();
    }
  });
});
