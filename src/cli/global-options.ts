import { invalidRequest } from "../domain/errors.ts";

/** Options that apply to every command, accepted before or after the command words. */
export type GlobalOptions = {
  workspace: string | null;
  projectRoot: string | null;
  json: boolean;
  quiet: boolean;
  logLevel: "debug" | "info" | "warning" | "error";
  timeoutSeconds: number | null;
};

const valueOptions = new Set(["--workspace", "--project-root", "--log-level", "--timeout"]);
const flagOptions = new Set(["--json", "--quiet"]);

export function splitGlobalOptions(argv: string[]): { options: GlobalOptions; rest: string[] } {
  const options: GlobalOptions = { workspace: null, projectRoot: null, json: false, quiet: false, logLevel: "info", timeoutSeconds: null };
  const rest: string[] = [];
  for (let index = 0; index < argv.length; index += 1) {
    const argument = argv[index]!;
    if (argument === "--") {
      rest.push(...argv.slice(index));
      break;
    }
    const [flag, inlineValue] =
      argument.startsWith("--") && argument.includes("=")
        ? [argument.slice(0, argument.indexOf("=")), argument.slice(argument.indexOf("=") + 1)]
        : [argument, undefined];
    if (flagOptions.has(flag)) {
      if (flag === "--json") options.json = true;
      else options.quiet = true;
      continue;
    }
    if (valueOptions.has(flag)) {
      const value = inlineValue ?? argv[index + 1];
      if (inlineValue === undefined) index += 1;
      if (value === undefined || (inlineValue === undefined && value.startsWith("--"))) {
        throw invalidRequest(`${flag} needs a value.`, { remediation: [`Pass ${flag} <value>.`] });
      }
      assign(options, flag, value);
      continue;
    }
    rest.push(argument);
  }
  return { options, rest };
}

function assign(options: GlobalOptions, flag: string, value: string): void {
  switch (flag) {
    case "--workspace":
      options.workspace = value;
      return;
    case "--project-root":
      options.projectRoot = value;
      return;
    case "--log-level": {
      const level = value.toLowerCase();
      if (!["debug", "info", "warning", "error"].includes(level)) {
        throw invalidRequest(`Unknown log level '${value}'.`, { remediation: ["Use one of debug, info, warning, error."] });
      }
      options.logLevel = level as GlobalOptions["logLevel"];
      return;
    }
    case "--timeout": {
      const seconds = Number(value);
      if (!Number.isFinite(seconds) || seconds <= 0) {
        throw invalidRequest(`--timeout must be a positive number of seconds, not '${value}'.`, {
          remediation: ["Pass --timeout <seconds>, e.g. --timeout 30."],
        });
      }
      options.timeoutSeconds = seconds;
      return;
    }
  }
}
