/**
 * The whole suite: typecheck, build the binary the e2e tests drive, then every test file.
 * Ends with one line `N passed, N failed, N skipped` (CI reads it).
 */
import { join, resolve } from "node:path";
import { bunTestArguments } from "./test-deadline.ts";

const root = resolve(import.meta.dir, "..");
const bun = process.execPath;
const filters = process.argv.slice(2);
let failedSteps = 0;

function step(name: string, argv: string[]): boolean {
  console.error(`\n== ${name}`);
  const result = Bun.spawnSync(argv, { cwd: root, stdout: "inherit", stderr: "inherit", env: { ...process.env, FORCE_COLOR: "0" } });
  if (result.exitCode !== 0) {
    console.error(`${name} failed (exit ${result.exitCode})`);
    failedSteps += 1;
    return false;
  }
  return true;
}

step("typecheck", [join(root, "node_modules/.bin/tsc"), "--noEmit", "-p", "tsconfig.json"]);
// The report's browser code is typed against the DOM in a program of its own.
step("typecheck report client", [join(root, "node_modules/.bin/tsc"), "--noEmit", "-p", "src/analysis/report/client/tsconfig.json"]);
step("format and lint", [join(root, "node_modules/.bin/biome"), "check", "--colors=off", "."]);
const built = step("build", [bun, "scripts/build.ts"]);

console.error("\n== tests");
const testRun = Bun.spawn(bunTestArguments(bun, filters), {
  cwd: root,
  stdout: "pipe",
  stderr: "pipe",
  env: { ...process.env, FORCE_COLOR: "0", FLAMEOX_BINARY: built ? join(root, "dist/flameox") : "" },
});
let passed = 0;
let failed = 0;
let skipped = 0;
async function pump(stream: ReadableStream<Uint8Array>, sink: NodeJS.WriteStream): Promise<void> {
  const decoder = new TextDecoder();
  let pending = "";
  for await (const chunk of stream) {
    const text = decoder.decode(chunk, { stream: true });
    sink.write(text);
    pending += text;
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) {
      const pass = /^\s*(\d+) pass$/.exec(line);
      const fail = /^\s*(\d+) fail$/.exec(line);
      const skip = /^\s*(\d+) skip$/.exec(line);
      if (pass) passed = Number(pass[1]);
      if (fail) failed = Number(fail[1]);
      if (skip) skipped = Number(skip[1]);
    }
  }
}
await Promise.all([pump(testRun.stdout, process.stdout), pump(testRun.stderr, process.stderr)]);
const exitCode = await testRun.exited;
if (exitCode !== 0 && failed === 0) failed = 1;
failed += failedSteps;
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 || exitCode !== 0 ? 1 : 0);
