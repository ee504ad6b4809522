/**
 * A running Claude Code rewrites ~/.claude.json all the time. With a real child process rewriting it
 * every 100 ms, 10 setup runs in a row (each changing our entry) all end connected, none fails, and
 * the writer's last content survives beside our entry. Nothing here depends on timing: each run waits
 * for a fresh writer tick first (an event on its stdout), and the checks read the file only when the
 * writer has stopped or between its locked rewrites, which always keep our entry.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setupCli, setupEnvironmentFor, temporaryHomes } from "./helpers.ts";

setDefaultTimeout(300_000);

const makeHome = temporaryHomes();
const writerScript = join(import.meta.dir, "fixtures", "claude-writer.ts");

/** Reads the writer's stdout line by line; `next()` resolves with the next line. */
function lineReader(stream: ReadableStream<Uint8Array>) {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  return async function next(): Promise<string> {
    for (;;) {
      const newline = buffer.indexOf("\n");
      if (newline >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        return line;
      }
      const { done, value } = await reader.read();
      if (done) throw new Error(`the writer closed its output (${JSON.stringify(buffer)})`);
      buffer += decoder.decode(value, { stream: true });
    }
  };
}

async function runSetup(env: Record<string, string>, args: string[]) {
  const child = Bun.spawn([process.execPath, setupCli, ...args], { env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code: child.exitCode, stdout, stderr };
}

describe("setup against a live writer of ~/.claude.json", () => {
  test("10 runs in a row all end connected, none fails, and the writer's last content survives beside our entry", async () => {
    const temp = makeHome();
    const env = setupEnvironmentFor(temp);
    const path = join(temp.home, ".claude.json");
    writeFileSync(path, `${JSON.stringify({ numStartups: 4, projects: { "/p": { allowedTools: [] } } }, null, 2)}\n`);
    const writer = Bun.spawn([process.execPath, writerScript, path], { stdout: "pipe", stderr: "inherit" });
    const next = lineReader(writer.stdout);
    const ticks: number[] = [];
    try {
      ticks.push(Number(await next()));
      const selections = ["capture,runs", "all"];
      for (let run = 0; run < 10; run += 1) {
        // Each run changes our entry (alternating --tools), so every run really writes.
        const result = await runSetup(env, ["--claude", "--tools", selections[run % 2]!, "--yes", "--json"]);
        expect({ run, code: result.code, stderr: result.stderr }).toEqual({ run, code: 0, stderr: "" });
        const report = JSON.parse(result.stdout);
        expect(report.changed_clients).toEqual(["claude"]);
        const entry = JSON.parse(readFileSync(path, "utf8")).mcpServers.flameox;
        expect(entry.command).toBe(report.executable);
        expect(entry.args.includes("--tools")).toBe(run % 2 === 0);
        // The writer has rewritten the file at least once more before the next run starts.
        ticks.push(Number(await next()));
      }
    } finally {
      writer.kill("SIGTERM");
    }
    let line = await next();
    while (!line.startsWith("last ")) line = await next();
    await writer.exited;
    const last = Number(line.slice("last ".length));
    expect(last).toBeGreaterThanOrEqual(ticks.at(-1)!);
    expect(ticks.length).toBe(11);
    const final = JSON.parse(readFileSync(path, "utf8"));
    expect(final.writer_tick).toBe(last);
    expect(final.tipsHistory).toEqual({ [`tip-${last}`]: last });
    expect(final.projects).toEqual({ "/p": { allowedTools: [] } });
    expect(final.mcpServers.flameox.args).toEqual(["mcp", "serve", "--project-root", "."]);
    const verify = await runSetup(env, ["--verify", "--json"]);
    expect(verify.code, verify.stdout).toBe(0);
    // Nothing of ours is left behind: no lock, no journal, no temporaries.
    expect(existsSync(`${path}.lock`)).toBe(false);
    expect(existsSync(join(temp.env.XDG_DATA_HOME!, "flameox", "setup-journal.json"))).toBe(false);
    expect(readdirSync(temp.home).filter((name) => name.endsWith(".tmp"))).toEqual([]);
  });

  test("a writer that ignores the lock: 10 runs all succeed (never exit 5), and a last run keeps both its content and our entry", async () => {
    const temp = makeHome();
    const env = setupEnvironmentFor(temp);
    const path = join(temp.home, ".claude.json");
    writeFileSync(path, `${JSON.stringify({ numStartups: 4 }, null, 2)}\n`);
    const writer = Bun.spawn([process.execPath, writerScript, path, "--no-lock"], { stdout: "pipe", stderr: "inherit" });
    const next = lineReader(writer.stdout);
    try {
      await next();
      const selections = ["capture,runs", "all"];
      for (let run = 0; run < 10; run += 1) {
        const result = await runSetup(env, ["--claude", "--tools", selections[run % 2]!, "--yes", "--json"]);
        // A collision is caught by the compare-and-swap and retried with a growing, jittered pause
        // (about 1.5 s over 12 attempts against a 100 ms writer), so a run ends connected.
        expect({ run, code: result.code, stderr: result.stderr }).toEqual({ run, code: 0, stderr: "" });
        expect(existsSync(join(temp.env.XDG_DATA_HOME!, "flameox", "setup-journal.json"))).toBe(false);
        await next();
      }
    } finally {
      writer.kill("SIGTERM");
    }
    let line = await next();
    while (!line.startsWith("last ")) line = await next();
    await writer.exited;
    const last = Number(line.slice("last ".length));
    // A writer without the lock can replace the file from a read taken before our write (that is the
    // client's race, not ours); one more run with the writer stopped settles the final state.
    const settle = await runSetup(env, ["--claude", "--yes", "--json"]);
    expect(settle.code, settle.stderr).toBe(0);
    const final = JSON.parse(readFileSync(path, "utf8"));
    expect(final.writer_tick).toBe(last);
    expect(final.numStartups).toBe(4);
    expect(final.mcpServers.flameox.args).toEqual(["mcp", "serve", "--project-root", "."]);
    const verify = await runSetup(env, ["--verify", "--json"]);
    expect(verify.code, verify.stdout).toBe(0);
    expect(readdirSync(temp.home).filter((name) => name.endsWith(".tmp"))).toEqual([]);
  });
});
