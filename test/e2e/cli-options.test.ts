/**
 * Every command of the compiled binary refuses an option it does not declare (exit 2, INVALID_ARGUMENTS
 * naming it), and every option the contract names either works or is absent from help.
 */
import { beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import type { CommandDef } from "citty";
import { rootCommand } from "../../src/cli/main.ts";
import { runCli, temporaryFolder } from "../support/binary.ts";
import { contractCliCommandsNotYetImplemented, contractCliOptions, contractGlobalOptions } from "../support/contract.ts";

// About a hundred starts of the compiled binary.
setDefaultTimeout(240_000);

let empty: string;
beforeAll(() => {
  empty = temporaryFolder("cli-options");
});

async function resolved<T>(value: unknown): Promise<T | undefined> {
  return (typeof value === "function" ? await value() : await value) as T | undefined;
}

/** Every command path of the tree (groups and leaves), read from the same definition the binary is built from. */
async function commandPaths(command: CommandDef, path: string[] = []): Promise<string[][]> {
  const subCommands = (await resolved<Record<string, CommandDef>>(command.subCommands)) ?? {};
  const below = await Promise.all(
    Object.entries(subCommands).map(async ([name, sub]) => commandPaths((await resolved<CommandDef>(sub))!, [...path, name])),
  );
  return [...(path.length > 0 ? [path] : []), ...below.flat()];
}

function isUnknownOption(result: { json: any }, option: string): boolean {
  const error = result.json?.error;
  return (
    error?.code === "INVALID_ARGUMENTS" && error.details?.fields?.[0]?.type === "unknown_option" && error.details.fields[0].field === option
  );
}

test("every command and command group refuses an undeclared option with exit 2, naming it", async () => {
  const paths = await commandPaths(rootCommand as CommandDef);
  expect(paths.length).toBeGreaterThan(60);
  const accepted: string[] = [];
  for (const path of paths) {
    const result = runCli(["--json", "--project-root", empty, ...path, "--bogus-option"], { cwd: empty });
    if (result.exitCode !== 2 || !isUnknownOption(result, "--bogus-option")) accepted.push(`${path.join(" ")} → exit ${result.exitCode}`);
    else expect(result.json.error.message).toBe(`Unknown option --bogus-option for flameox ${path.join(" ")}.`);
  }
  expect(accepted).toEqual([]);
});

test("runs list --bogus is refused in text and JSON; gc takes one action; an option before its sub-command is checked against the group", () => {
  const text = runCli(["--project-root", empty, "runs", "list", "--bogus"], { cwd: empty });
  expect(text.exitCode).toBe(2);
  expect(text.stdout).toBe("");
  expect(text.stderr).toContain("INVALID_ARGUMENTS: Unknown option --bogus for flameox runs list.");
  expect(text.stderr).toContain("--limit");
  const twoActions = runCli(["--json", "--project-root", empty, "gc", "--apply", "--dry-run"], { cwd: empty });
  expect(twoActions.exitCode).toBe(2);
  expect(twoActions.json.error.code).toBe("INVALID_ARGUMENTS");
  const tooYoung = runCli(["--json", "--project-root", empty, "gc", "--minimum-age-hours", "0.5"], { cwd: empty });
  expect(tooYoung.exitCode).toBe(2);
  expect(tooYoung.json.error.details.fields[0].field).toBe("--minimum-age-hours");
  const inline = runCli(["--json", "--project-root", empty, "runs", "list", "--bogus=1"], { cwd: empty });
  expect(isUnknownOption(inline, "--bogus")).toBe(true);
  const early = runCli(["--json", "--project-root", empty, "runs", "--limit", "3", "list"], { cwd: empty });
  expect(early.exitCode).toBe(2);
  expect(early.json.error.message).toBe("Unknown option --limit for flameox runs.");
  // Declared options keep working in every spelling citty accepts, and a negative number is a value.
  const project = temporaryFolder("cli-spellings");
  expect(runCli(["init", project, "--json"]).exitCode).toBe(0);
  for (const spelling of [["--limit", "3"], ["--limit=3"]]) {
    const runs = runCli(["--json", "--project-root", project, "runs", "list", ...spelling], { cwd: project });
    expect(runs.exitCode).toBe(0);
    expect(runs.json.runs).toEqual([]);
  }
  const negative = runCli(["--json", "--project-root", project, "runs", "list", "--limit", "-1"], { cwd: project });
  expect(negative.exitCode).toBe(2);
  expect(negative.json.error.message).not.toContain("Unknown option");
});

test("every option the contract names works or is absent from help; unimplemented contract commands are unknown", () => {
  const project = temporaryFolder("cli-contract");
  for (const entry of contractCliOptions) {
    const help = runCli([...entry.command, "--help"]);
    expect(help.exitCode).toBe(0);
    const listed = new RegExp(`(^|[\\s,])${entry.option}(?=[=\\s,.]|$)`, "m").test(help.stdout);
    expect({ command: entry.command.join(" "), option: entry.option, listed }).toEqual({
      command: entry.command.join(" "),
      option: entry.option,
      listed: entry.implemented,
    });
    // mcp serve would start serving; its --init is exercised by the MCP tests.
    if (entry.command.join(" ") === "mcp serve") continue;
    const invocation = [
      "--json",
      "--project-root",
      project,
      ...entry.command,
      ...(entry.positionals ?? []),
      entry.option,
      ...(entry.value ? [entry.value] : []),
    ];
    const result = runCli(invocation, { cwd: project });
    expect({ invocation: invocation.slice(3).join(" "), refusedAsUnknown: isUnknownOption(result, entry.option) }).toEqual({
      invocation: invocation.slice(3).join(" "),
      refusedAsUnknown: !entry.implemented,
    });
  }
  for (const command of contractCliCommandsNotYetImplemented) {
    const result = runCli(["--json", "--project-root", project, ...command], { cwd: project });
    expect(result.exitCode).toBe(2);
    expect(result.json.error.message).toBe(`Unknown command ${command.join(" ")}`);
  }
  const rootHelp = runCli(["--help"]).stdout;
  for (const option of contractGlobalOptions) expect(rootHelp).toContain(option);
});

test("evidence summarize --format json prints the result document; --format markdown the Markdown", () => {
  const project = temporaryFolder("summarize-format");
  expect(runCli(["init", project, "--json"]).exitCode).toBe(0);
  writeFileSync(join(project, "stacks.collapsed"), "main;work 30\nmain;idle 10\n");
  const imported = runCli(["--project-root", project, "import", "stacks.collapsed", "--json"], { cwd: project });
  expect(imported.exitCode).toBe(0);
  const runId = imported.json.run_id;
  const asJson = runCli(["--project-root", project, "evidence", "summarize", "--run", runId, "--format", "json"], { cwd: project });
  expect(asJson.exitCode).toBe(0);
  const document = JSON.parse(asJson.stdout);
  expect(document.markdown).toContain(runId);
  const asMarkdown = runCli(["--project-root", project, "evidence", "summarize", "--run", runId, "--format", "markdown"], { cwd: project });
  expect(asMarkdown.exitCode).toBe(0);
  expect(asMarkdown.stdout.trim()).toBe(document.markdown.trim());
  const wrong = runCli(["--json", "--project-root", project, "evidence", "summarize", "--run", runId, "--format", "yaml"], {
    cwd: project,
  });
  expect(wrong.exitCode).toBe(2);
  expect(wrong.json.error.code).toBe("INVALID_ARGUMENTS");
});

test("import takes a relative path from the current folder; from elsewhere a project file is refused with the path that works", () => {
  const project = temporaryFolder("import-cwd");
  const elsewhere = temporaryFolder("import-elsewhere");
  expect(runCli(["init", project, "--json"]).exitCode).toBe(0);
  writeFileSync(join(project, "stacks.collapsed"), "main;work 30\nmain;idle 10\n");
  const refused = runCli(["--json", "--project-root", project, "import", "stacks.collapsed"], { cwd: elsewhere });
  expect(refused.exitCode).not.toBe(0);
  expect(refused.json.error.code).toBe("EXECUTION_REFUSED");
  expect(refused.json.error.message).toContain("taken from the current folder");
  const working = relative(elsewhere, join(project, "stacks.collapsed"));
  expect(refused.json.error.remediation[0]).toContain(working);
  // The MCP call that works names the project-relative path.
  expect(refused.json.error.recovery.context.arguments).toEqual({ path: "stacks.collapsed", source_root: "project" });
  const retried = runCli(["--json", "--project-root", project, "import", working], { cwd: elsewhere });
  expect(retried.exitCode).toBe(0);
  expect(retried.json.evidence.tables.stacks).toBe(2);
  const missing = runCli(["--json", "--project-root", project, "import", "absent.collapsed"], { cwd: elsewhere });
  expect(missing.json.error.code).toBe("EXECUTION_REFUSED");
  expect(missing.json.error.remediation[0]).toContain("relative to the current folder");
});
