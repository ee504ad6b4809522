import { defineCommand, runCommand, type CommandDef } from "citty";
import { toFlameoxError, invalidRequest, processTimeout } from "../domain/errors.ts";
import { flameoxVersion } from "../version.ts";
import { cliOptions, closeCliServicesBeforeExit } from "./context.ts";
import { emitFailure } from "./output.ts";
import { capabilitiesCommand, configCommand, initCommand, NegativeResult, statusCommand, validateCommand } from "./workspace.ts";
import { cliCommandGroups } from "./command-groups.ts";
import { refuseUnknownOptions } from "./strict-options.ts";
import { dropOutputAfterBrokenPipe, forTerminal, withoutColour } from "./terminal.ts";

export const rootCommand = defineCommand({
  meta: {
    name: "flameox",
    version: flameoxVersion,
    description:
      "Collect, keep and query runtime evidence (profiles, traces, benchmarks, tests, coverage, memory) for a project's named workloads. Global options: --workspace PATH, --project-root PATH, --json, --quiet, --log-level LEVEL, --timeout SECONDS.",
  },
  subCommands: {
    init: initCommand,
    status: statusCommand,
    capabilities: capabilitiesCommand,
    config: configCommand,
    validate: validateCommand,
    ...cliCommandGroups,
  },
});

/** Runs one CLI invocation and returns its exit code; typed errors are rendered exactly once here. */
export async function runCli(rest: string[]): Promise<number> {
  const options = cliOptions();
  dropOutputAfterBrokenPipe();
  if (rest.includes("--help") || rest.includes("-h") || rest.length === 0) {
    const { renderUsage } = await import("citty");
    const [command, parent] = await resolveForHelp(
      rootCommand as CommandDef,
      rest.filter((argument) => argument !== "--help" && argument !== "-h"),
    );
    process.stdout.write(`${forTerminal(await renderUsage(await withLongAliasesDescribed(command), parent), process.stdout)}\n`);
    return rest.length === 0 ? 2 : 0;
  }
  try {
    await refuseUnknownOptions(rootCommand as CommandDef, rest);
    const work = runCommand(rootCommand as CommandDef, { rawArgs: rest });
    if (options.timeoutSeconds !== null) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              processTimeout(`The command did not finish within --timeout ${options.timeoutSeconds} s.`, {
                remediation: ["Raise --timeout, or inspect the workspace with flameox status."],
              }),
            ),
          options.timeoutSeconds! * 1000,
        );
      });
      try {
        await Promise.race([work, deadline]);
      } finally {
        clearTimeout(timer);
      }
    } else {
      await work;
    }
    // Only once the command's work is done: a command cut off by --timeout may still be writing.
    closeCliServicesBeforeExit();
    return 0;
  } catch (error) {
    if (error instanceof NegativeResult) return 1;
    if (isUsageError(error)) {
      return emitFailure(
        options,
        // citty colours the offending word; a message is data (it also lands in --json), never styled.
        invalidRequest(withoutColour((error as Error).message), {
          remediation: ["Run flameox --help for the commands and their options."],
        }),
      );
    }
    return emitFailure(options, toFlameoxError(error));
  }
}

/**
 * citty prints a long alias with one dash (`-compare, --compare-to`), a spelling no parser accepts; help
 * names it in the description instead (`Also --compare.`), with citty's own column layout.
 */
async function withLongAliasesDescribed(command: CommandDef): Promise<CommandDef> {
  const args = typeof command.args === "function" ? await command.args() : await command.args;
  if (!args) return command;
  const described = Object.fromEntries(
    Object.entries(args).map(([name, definition]) => {
      const alias = (definition as { alias?: string | string[] }).alias;
      const aliases = alias === undefined ? [] : Array.isArray(alias) ? alias : [alias];
      const long = aliases.filter((spelling) => spelling.length > 1);
      if (long.length === 0) return [name, definition];
      const short = aliases.filter((spelling) => spelling.length === 1);
      const description = `${definition.description ?? ""} Also ${long.map((spelling) => `--${spelling}`).join(", ")}.`.trim();
      return [name, { ...definition, alias: short, description }];
    }),
  );
  return { ...command, args: described as CommandDef["args"] };
}

function isUsageError(error: unknown): boolean {
  return error instanceof Error && (error.name === "CLIError" || /^E_/.test(String((error as { code?: unknown }).code ?? "")));
}

async function resolveForHelp(command: CommandDef, words: string[]): Promise<[CommandDef, CommandDef | undefined]> {
  let current = command;
  let parent: CommandDef | undefined;
  for (const word of words) {
    if (word.startsWith("-")) continue;
    const subCommands = (typeof current.subCommands === "function" ? await current.subCommands() : await current.subCommands) as
      | Record<string, CommandDef>
      | undefined;
    const next = subCommands?.[word];
    if (!next) break;
    parent = current;
    current = typeof next === "function" ? await (next as () => Promise<CommandDef>)() : next;
  }
  return [current, parent];
}
