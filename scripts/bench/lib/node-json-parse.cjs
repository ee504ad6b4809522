// Baseline child process for the ingest benchmark: Node reads the whole file as text and JSON.parse-s it.
// Usage: node --max-old-space-size=N node-json-parse.cjs <chrome|speedscope> <input.json>
const { readFileSync } = require("node:fs");
const [kind, input] = process.argv.slice(2);
const document = JSON.parse(readFileSync(input, "utf8"));
const rows = kind === "chrome" ? document.traceEvents.length : document.profiles.reduce((sum, profile) => sum + profile.samples.length, 0);
console.log(JSON.stringify({ rows }));
