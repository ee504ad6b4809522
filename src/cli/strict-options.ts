import type { ArgDef, CommandDef } from "citty";
import { type FlameoxError, invalidRequest } from "../domain/errors.ts";

/**
 * citty parses leniently: an option no command declares is dropped, so `runs list --bogus` or a misspelt
 * `--adapter-option` would run as if it were absent. This walk refuses such words for the whole command
 * tree at once, before any command runs: it follows the same words citty uses to pick a sub-command and
 * checks every option word against the declared options of the command it reaches (global options were
 * taken out by splitGlobalOptions already).
 */
export async function refuseUnknownOptions(root: CommandDef, words: readonly string[]): Promise<void> {
  let command = root;
  const path: string[] = [];
  let options = optionTable(await resolve(command.args));
  let subCommands = await resolve(command.subCommands);
  for (let index = 0; index < words.length; index += 1) {
    const word = words[index]!;
    if (word === "--") return;
    if (isOptionWord(word)) {
      const [flag, inline] = splitInline(word);
      const kind = options.get(flag);
      if (kind === undefined) throw unknownOption(flag, path, options);
      if (kind === "value" && inline === undefined && index + 1 < words.length && !words[index + 1]!.startsWith("--")) index += 1;
      continue;
    }
    if (subCommands && Object.keys(subCommands).length > 0) {
      const next = await findSubCommand(subCommands, word);
      // An unknown command word is citty's to report (E_UNKNOWN_COMMAND), with the same exit code.
      if (!next) return;
      command = next;
      path.push(word);
      options = optionTable(await resolve(command.args));
      subCommands = await resolve(command.subCommands);
    }
  }
}

type OptionKind = "flag" | "value";

/** Every spelling citty accepts for a declared option: the name, its kebab and camel forms, aliases, --no-X. */
function optionTable(args: Record<string, ArgDef> | undefined): Map<string, OptionKind> {
  const table = new Map<string, OptionKind>();
  for (const [name, definition] of Object.entries(args ?? {})) {
    if (definition.type === "positional") continue;
    const kind: OptionKind = definition.type === "boolean" ? "flag" : "value";
    const alias = (definition as { alias?: string | string[] }).alias;
    const aliases = alias === undefined ? [] : Array.isArray(alias) ? alias : [alias];
    for (const spelling of new Set([name, kebabCase(name), camelCase(name), ...aliases])) {
      table.set(spelling.length === 1 ? `-${spelling}` : `--${spelling}`, kind);
      if (spelling.length === 1) table.set(`--${spelling}`, kind);
      if (kind === "flag" && spelling.length > 1) table.set(`--no-${spelling}`, "flag");
    }
  }
  return table;
}

/** A negative number is a value (`--limit -1` is the command's to judge), not an option. */
function isOptionWord(word: string): boolean {
  return word.startsWith("-") && word !== "-" && !/^-\d/.test(word);
}

function splitInline(word: string): [string, string | undefined] {
  const equals = word.indexOf("=");
  return word.startsWith("--") && equals > 0 ? [word.slice(0, equals), word.slice(equals + 1)] : [word, undefined];
}

function unknownOption(flag: string, path: string[], options: Map<string, OptionKind>): FlameoxError {
  const command = ["flameox", ...path].join(" ");
  const known = [...options.keys()].filter(
    (spelling) => spelling.startsWith("--") && !spelling.startsWith("--no-") && !/[A-Z]/.test(spelling),
  );
  return invalidRequest(`Unknown option ${flag} for ${command}.`, {
    details: {
      fields: [{ field: flag, message: `${command} has no option ${flag}`, type: "unknown_option" }],
      command,
      known_options: known.sort().slice(0, 50),
    },
    remediation: [
      known.length
        ? `Run ${command} --help for its options (${known.sort().slice(0, 12).join(", ")}).`
        : `${command} takes no options of its own (run ${command} --help).`,
    ],
  });
}

async function resolve<T>(value: T | Promise<T> | (() => T | Promise<T>) | undefined): Promise<T | undefined> {
  return typeof value === "function" ? await (value as () => T | Promise<T>)() : await value;
}

async function findSubCommand(subCommands: Record<string, unknown>, word: string): Promise<CommandDef | undefined> {
  if (word in subCommands) return resolve(subCommands[word] as CommandDef);
  for (const candidate of Object.values(subCommands)) {
    const resolved = await resolve(candidate as CommandDef);
    const meta = await resolve(resolved?.meta);
    const aliases = meta?.alias === undefined ? [] : Array.isArray(meta.alias) ? meta.alias : [meta.alias];
    if (aliases.includes(word)) return resolved;
  }
  return undefined;
}

function kebabCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1-$2")
    .replaceAll("_", "-")
    .toLowerCase();
}

function camelCase(name: string): string {
  return name.replace(/[-_]+([a-zA-Z0-9])/g, (_, letter: string) => letter.toUpperCase());
}
