/**
 * Reference child process for the ingest benchmark: the runtime's own JSON parser on the whole trace
 * (decoded as flameox decodes an all-ASCII chunk, then `JSON.parse`), keeping nothing. It is the
 * native floor of reading the events into values; what an import adds to it is ordering, nesting and
 * staging rows. Only the decode and the parse are timed, not reading the file or starting the runtime.
 * Usage: bun runtime-json-parse.ts <trace.json>. Prints {"events", "parse_wall_s", "parse_cpu_s"}.
 */
import { isAscii } from "node:buffer";
import { readFileSync } from "node:fs";

const bytes = readFileSync(process.argv[2] as string);
const started = performance.now();
const before = process.cpuUsage();
const document = JSON.parse(bytes.toString(isAscii(bytes) ? "latin1" : "utf8")) as { traceEvents?: unknown[] } | unknown[];
const cpu = process.cpuUsage(before);
const wall = performance.now() - started;
const events = Array.isArray(document) ? document.length : (document.traceEvents?.length ?? 0);
console.log(
  JSON.stringify({
    events,
    parse_wall_s: Math.round(wall / 10) / 100,
    parse_cpu_s: Math.round((cpu.user + cpu.system) / 1e4) / 100,
  }),
);
