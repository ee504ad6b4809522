/**
 * Writes a Chrome trace's events (one per line, as the bench generator writes them) in a seeded random
 * order. Run as a child of its own by `shuffledChromeTrace`: it holds the whole trace in memory, and a
 * process spawned later by the benchmark would report that peak as its own (on Linux a child's rusage
 * peak starts from the memory it shared with its parent before exec).
 * Usage: bun shuffle-trace.ts <trace.json> <output> <seed>
 */
import { closeSync, openSync, readFileSync, writeSync } from "node:fs";
import { seededShuffle } from "../../../test/support/random.ts";

const [input, output, seed] = process.argv.slice(2) as [string, string, string];
const lines = readFileSync(input, "latin1").split("\n");
const events = seededShuffle(
  lines.filter((line) => line.startsWith('{"ph"')).map((line) => (line.endsWith(",") ? line.slice(0, -1) : line)),
  Number(seed),
);
const handle = openSync(output, "w");
try {
  writeSync(handle, lines[0] as string);
  for (let start = 0; start < events.length; start += 10_000) {
    const batch = events.slice(start, start + 10_000).join(",\n");
    writeSync(handle, start === 0 ? `\n${batch}` : `,\n${batch}`);
  }
  writeSync(handle, `\n${lines.filter((line) => line.startsWith("]")).join("\n")}\n`);
} finally {
  closeSync(handle);
}
console.log(JSON.stringify({ events: events.length }));
