import { splitGlobalOptions, type GlobalOptions } from "./cli/global-options.ts";
import { flameoxVersion } from "./version.ts";

/**
 * Entry: argv → MCP server (fast path, no CLI parser loaded) or the CLI. Only what the chosen
 * path needs is imported, so the MCP handshake stays fast.
 */
async function main(argv: string[]): Promise<number> {
  if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) {
    const { dropOutputAfterBrokenPipe } = await import("./cli/terminal.ts");
    dropOutputAfterBrokenPipe();
    process.stdout.write(`${flameoxVersion}\n`);
    return 0;
  }
  let options: GlobalOptions;
  let rest: string[];
  try {
    ({ options, rest } = splitGlobalOptions(argv));
  } catch (error) {
    const { emitFailure } = await import("./cli/output.ts");
    const { toFlameoxError } = await import("./domain/errors.ts");
    return emitFailure(
      { workspace: null, projectRoot: null, json: argv.includes("--json"), quiet: false, logLevel: "warning", timeoutSeconds: null },
      toFlameoxError(error),
    );
  }
  if (rest[0] === "mcp" && rest[1] === "serve" && rest.slice(2).every((argument) => argument === "--init")) {
    const { runMcpServe } = await import("./mcp/serve-command.ts");
    try {
      await runMcpServe(options, rest.includes("--init"));
      return 0;
    } catch (error) {
      const { toFlameoxError } = await import("./domain/errors.ts");
      const typed = toFlameoxError(error);
      process.stderr.write(`flameox mcp serve: ${typed.code}: ${typed.message}\n`);
      return 2;
    }
  }
  const { setCliOptions } = await import("./cli/context.ts");
  setCliOptions(options);
  const { runCli } = await import("./cli/main.ts");
  return runCli(rest);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`flameox: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);
