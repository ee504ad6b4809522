import { type FlameoxError, executionRefused } from "../domain/errors.ts";

/**
 * The child environment is built from nothing: a few inherited names, then what the caller adds.
 * SHELL is deliberately absent: the broker never runs a shell, and tools that spawn `$SHELL` would
 * otherwise run the user's interactive shell with its rc files.
 */
export const inheritedEnvironmentNames: readonly string[] = ["PATH", "HOME", "LANG", "LC_*", "TZ", "TMPDIR", "TERM", "USER", "LOGNAME"];

/**
 * What may be *recorded* with a run: names that describe locale and time only. PATH, HOME, USER
 * and LOGNAME reach the child but are not recorded (they carry user names and host layout).
 */
export const recordedEnvironmentNames: readonly string[] = ["LANG", "LC_*", "TZ"];

/** Loader, interpreter, shell and debugger controls: each can run foreign code inside the child. */
const refusedExactNames = new Set([
  "PYTHONPATH",
  "PYTHONHOME",
  "PYTHONSTARTUP",
  "PYTHONINSPECT",
  "PYTHONUSERBASE",
  "PYTHONEXECUTABLE",
  "PYTHONBREAKPOINT",
  "NODE_OPTIONS",
  "NODE_PATH",
  "NODE_EXTRA_CA_CERTS",
  "NODE_REPL_EXTERNAL_MODULE",
  "BUN_OPTIONS",
  "BUN_INSPECT",
  "DENO_OPTIONS",
  "JAVA_TOOL_OPTIONS",
  "_JAVA_OPTIONS",
  "JDK_JAVA_OPTIONS",
  "PERL5LIB",
  "PERLLIB",
  "PERL5OPT",
  "PERL5DB",
  "RUBYLIB",
  "RUBYOPT",
  "GEM_PATH",
  "BASH_ENV",
  "ENV",
  "CDPATH",
  "PS4",
  "SHELLOPTS",
  "BASHOPTS",
  "PROMPT_COMMAND",
  "IFS",
  "GLIBC_TUNABLES",
  "MALLOC_CHECK_",
  "GCONV_PATH",
  "HOSTALIASES",
  "LOCALDOMAIN",
  "RES_OPTIONS",
  "GDBINIT",
  "GIT_ASKPASS",
  "SSH_ASKPASS",
  "SUDO_ASKPASS",
  "GIT_SSH",
  "GIT_SSH_COMMAND",
  "GIT_EXEC_PATH",
  "GIT_EXTERNAL_DIFF",
  "GIT_PAGER",
  "PAGER",
  "EDITOR",
  "VISUAL",
  "SSH_AUTH_SOCK",
  "GOOGLE_APPLICATION_CREDENTIALS",
  "KUBECONFIG",
  "DOCKER_CONFIG",
  "NETRC",
]);

const refusedPrefixes = ["LD_", "DYLD_", "GDB_", "LLDB_", "GIT_CONFIG", "BUN_INSPECT", "AWS_", "AZURE_", "NPM_CONFIG_", "PIP_", "UV_INDEX"];

/** Credential-like names: the word stands alone between underscores (so `KEYBOARD` passes). */
const credentialPattern =
  /(^|_)(TOKEN|TOKENS|PASSWORD|PASSWD|PASS|SECRET|SECRETS|KEY|KEYS|APIKEY|CREDENTIAL|CREDENTIALS|COOKIE|COOKIES|AUTH)(_|$)/;

const namePattern = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Whether a name (of a variable, a key in printed output) looks like it holds a credential. */
export function isCredentialName(name: string): boolean {
  return credentialPattern.test(name.toUpperCase().replaceAll(/[^A-Z0-9_]/g, "_"));
}

/** Why a variable name is refused for the child, or null when it may be passed. */
export function refusedEnvironmentReason(name: string): string | null {
  const upper = name.toUpperCase();
  if (refusedExactNames.has(upper)) return "it controls a loader, interpreter, shell or debugger";
  for (const prefix of refusedPrefixes) {
    if (upper.startsWith(prefix)) return `names starting with ${prefix} are refused (loader, debugger, tool config or credentials)`;
  }
  if (isCredentialName(upper)) return "it looks like a credential";
  return null;
}

/** The entries of a declared environment that buildChildEnvironment would always refuse, with why. */
export function refusedEnvironmentEntries(environment: Record<string, string>): { name: string; reason: string }[] {
  return Object.keys(environment)
    .sort()
    .flatMap((name) => {
      const reason = refusedEnvironmentReason(name);
      return reason === null ? [] : [{ name, reason }];
    });
}

export function matchesNameList(name: string, list: readonly string[]): boolean {
  const upper = process.platform === "win32" ? name.toUpperCase() : name;
  return list.some((entry) => {
    const pattern = process.platform === "win32" ? entry.toUpperCase() : entry;
    return pattern.endsWith("*") ? upper.startsWith(pattern.slice(0, -1)) : upper === pattern;
  });
}

function invalidName(name: string, channel: string): FlameoxError {
  return executionRefused(`Environment variable name ${JSON.stringify(name)} (${channel}) is not a plain identifier.`, {
    remediation: ["Use names made of letters, digits and underscores that do not start with a digit."],
    details: { variable: name, channel },
  });
}

function checkValue(name: string, value: unknown, channel: string): string {
  if (typeof value !== "string" || value.includes("\u0000")) {
    throw executionRefused(`Environment variable ${name} (${channel}) must be a string without NUL bytes.`, {
      remediation: ["Pass environment values as plain strings."],
      details: { variable: name, channel },
    });
  }
  return value;
}

export type EnvironmentRequest = {
  /** Where inherited names are taken from; defaults to this process's environment. */
  parentEnvironment?: Record<string, string | undefined>;
  /** Names (or `PREFIX*`) inherited from the parent; defaults to `inheritedEnvironmentNames`. */
  inherit?: readonly string[];
  /** Caller and workload additions; each name is checked against the refusal policy. */
  environment?: Record<string, string>;
  /**
   * flameox's own variables (collector settings, git isolation). They bypass the refusal policy
   * because flameox, not the workload author, chose them; never recorded unless allowlisted.
   */
  trustedEnvironment?: Record<string, string>;
  /** Extra names (or `PREFIX*`) whose values may be recorded. Credential-like names never are. */
  record?: readonly string[];
};

export type RecordedEnvironment = {
  /** Every name the child received, sorted; names are not secret, values may be. */
  names: string[];
  /** Values of the recorded allowlist only. */
  values: Record<string, string>;
};

export type ChildEnvironment = {
  environment: Record<string, string>;
  recorded: RecordedEnvironment;
};

/** Builds the child environment and its recorded form; throws EXECUTION_REFUSED naming the variable. */
export function buildChildEnvironment(request: EnvironmentRequest): ChildEnvironment {
  const parent = request.parentEnvironment ?? process.env;
  const inherit = request.inherit ?? inheritedEnvironmentNames;
  const environment: Record<string, string> = {};
  for (const [name, value] of Object.entries(parent)) {
    if (value === undefined || !namePattern.test(name)) continue;
    if (!matchesNameList(name, inherit)) continue;
    // An inherited allowlist entry never smuggles a refused name in (e.g. a caller passing `LD_*`).
    if (refusedEnvironmentReason(name) !== null) continue;
    if (value.includes("\u0000")) continue;
    environment[name] = value;
  }
  for (const [name, value] of Object.entries(request.environment ?? {})) {
    if (!namePattern.test(name)) throw invalidName(name, "environment");
    const reason = refusedEnvironmentReason(name);
    if (reason !== null) {
      throw executionRefused(`Environment variable ${name} is refused: ${reason}.`, {
        remediation: [`Remove ${name} from the workload environment; flameox never passes it to a child process.`],
        details: { variable: name, reason },
      });
    }
    environment[name] = checkValue(name, value, "environment");
  }
  for (const [name, value] of Object.entries(request.trustedEnvironment ?? {})) {
    if (!namePattern.test(name)) throw invalidName(name, "trustedEnvironment");
    environment[name] = checkValue(name, value, "trustedEnvironment");
  }
  const recordList = [...recordedEnvironmentNames, ...(request.record ?? [])];
  const values: Record<string, string> = {};
  const names = Object.keys(environment).sort();
  for (const name of names) {
    if (matchesNameList(name, recordList) && refusedEnvironmentReason(name) === null) values[name] = environment[name] as string;
  }
  return { environment, recorded: { names, values } };
}
