/**
 * What the compiled binary writes to a terminal and to a pipe: colour only on a TTY and never with
 * NO_COLOR or FORCE_COLOR=0; a reader that closes early ends nothing but the output.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { binaryPath, repositoryRoot, runCli, temporaryFolder, testEnvironment } from "../support/binary.ts";

// Each case starts the compiled binary, some under a pseudo-terminal.
setDefaultTimeout(60_000);

const controlSequenceStart = "\u001b[";

/** The environment without anything that decides colour, so each case sets exactly what it tests. */
function colourNeutralEnvironment(extra: Record<string, string>): Record<string, string> {
  const environment = testEnvironment({ TERM: "xterm-256color", ...extra });
  for (const name of ["NO_COLOR", "FORCE_COLOR", "CI", "TEST"]) if (!(name in extra)) delete environment[name];
  return environment;
}

/** Runs the binary on a pseudo-terminal (Python's pty module) and returns what the terminal showed. */
function onTerminal(argv: string[], extra: Record<string, string> = {}): { exitCode: number; shown: string } {
  const driver = "import os, pty, sys\nstatus = pty.spawn(sys.argv[1:])\nsys.exit(os.waitstatus_to_exitcode(status))\n";
  const result = Bun.spawnSync([join(repositoryRoot, ".tools", "venv", "bin", "python"), "-c", driver, binaryPath(), ...argv], {
    env: colourNeutralEnvironment(extra),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  return { exitCode: result.exitCode ?? -1, shown: result.stdout.toString() };
}

test("help is coloured on a terminal, plain in a pipe and under NO_COLOR or FORCE_COLOR=0", () => {
  const coloured = onTerminal(["runs", "list", "--help"]);
  expect(coloured.exitCode).toBe(0);
  expect(coloured.shown).toContain("--limit");
  expect(coloured.shown).toContain(controlSequenceStart);
  const plainCases: Record<string, string>[] = [{ NO_COLOR: "1" }, { NO_COLOR: "yes" }, { FORCE_COLOR: "0" }];
  for (const extra of plainCases) {
    const plain = onTerminal(["runs", "list", "--help"], extra);
    expect(plain.exitCode).toBe(0);
    expect(plain.shown).toContain("--limit");
    expect(plain.shown).not.toContain(controlSequenceStart);
  }
  const piped = runCli(["runs", "list", "--help"], { env: colourNeutralEnvironment({}) });
  expect(piped.exitCode).toBe(0);
  expect(piped.stdout).toContain("--limit");
  expect(piped.stdout).not.toContain(controlSequenceStart);
});

test("an error message is data: no colour in it, even on a terminal", () => {
  const project = temporaryFolder("terminal-errors");
  const shown = onTerminal(["--json", "--project-root", project, "no-such-command"]);
  expect(shown.exitCode).toBe(2);
  expect(shown.shown).not.toContain(controlSequenceStart);
  expect(JSON.parse(shown.shown).error.message).toBe("Unknown command no-such-command");
});

test("mcp inspect --json | head -c 100 exits 0 without a word on stderr", () => {
  const full = runCli(["mcp", "inspect", "--json"]);
  // Larger than a pipe's 64 KiB buffer, so the writer must meet the closed pipe (EPIPE).
  expect(full.stdout.length).toBeGreaterThan(64 * 1024);
  const script = 'set -o pipefail; "$0" mcp inspect --json 2>"$1" | head -c 100 > /dev/null';
  const stderrFile = join(temporaryFolder("epipe"), "stderr.txt");
  const piped = Bun.spawnSync(["bash", "-c", script, binaryPath(), stderrFile], { env: testEnvironment(), stdout: "pipe", stderr: "pipe" });
  expect(piped.exitCode).toBe(0);
  expect(readFileSync(stderrFile, "utf8")).toBe("");
});
