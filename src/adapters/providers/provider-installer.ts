/**
 * Builds and verifies one managed provider environment: a fresh venv made by the base interpreter,
 * the pinned requirements installed into it by pip from the user's configured package index (wheels
 * only, so no package's build script runs), then the installed versions and a real probe checked with
 * the environment's own interpreter. Every process goes through the broker with the operation's
 * deadline and cancellation signal.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { capabilityUnavailable, type FlameoxError, processCancelled, processFailed, processTimeout } from "../../domain/errors.ts";
import { runProcess } from "../../exec/broker.ts";
import { matchesNameList } from "../../exec/environment-policy.ts";
import { runMarkerVariable } from "../../exec/environment-scan.ts";
import { resolveExecutable } from "../../exec/executable.ts";
import type { ManagedProvider } from "./provider-catalog.ts";

export type FailureCategory = "network" | "filesystem" | "verification" | "cancelled" | "timeout" | "process";

export type InstallerContext = {
  signal: AbortSignal;
  /** Absolute deadline (ms since the epoch) for the whole operation. */
  deadline: number;
  /** Where process output and probe files go. */
  scratch: string;
  /** Carried by every installer process and its descendants, so a later process can find them if this one dies. */
  marker: string;
  parentEnvironment?: Record<string, string | undefined>;
};

/** The interpreter environments are made from; `pipForOthers`: its pip can install into another interpreter (pip ≥ 22.3). */
export type BasePython = { executable: string; version: string; pipForOthers: boolean };

/**
 * What pip needs from the user's environment to reach their package index: its own settings (index,
 * certificates, timeouts, constraints), proxies and certificate stores. These go to pip only, never
 * to a workload, and are never recorded.
 */
export const installerEnvironmentNames = [
  "PIP_*",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "ALL_PROXY",
  "http_proxy",
  "https_proxy",
  "no_proxy",
  "all_proxy",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "REQUESTS_CA_BUNDLE",
  "XDG_CONFIG_HOME",
  "XDG_CACHE_HOME",
  "PYENV_ROOT",
  "PYENV_VERSION",
];

function installerEnvironment(parent: Record<string, string | undefined>): Record<string, string> {
  const environment: Record<string, string> = {};
  for (const [name, value] of Object.entries(parent)) {
    if (value !== undefined && !value.includes("\u0000") && matchesNameList(name, installerEnvironmentNames)) environment[name] = value;
  }
  return { ...environment, PIP_DISABLE_PIP_VERSION_CHECK: "1", PIP_NO_INPUT: "1", PYTHONDONTWRITEBYTECODE: "1" };
}

type Finished = { exitCode: number | null; stdout: string; stderr: string };

let sequence = 0;

/** One installer step through the broker; a timeout or cancellation becomes the typed error of that cause. */
async function step(argv: string[], context: InstallerContext, what: string, category: FailureCategory = "process"): Promise<Finished> {
  if (context.signal.aborted) throw cancelled(what);
  sequence += 1;
  const stdoutPath = join(context.scratch, `step-${sequence}.stdout`);
  const stderrPath = join(context.scratch, `step-${sequence}.stderr`);
  const result = await runProcess(
    {
      argv,
      cwd: context.scratch,
      deadline: context.deadline,
      stdoutPath,
      stderrPath,
      outputBudgetBytes: 4 * 1024 * 1024,
      trustedEnvironment: { ...installerEnvironment(context.parentEnvironment ?? process.env), [runMarkerVariable]: context.marker },
    },
    { signal: context.signal, sampling: false, gracePeriodMs: 2_000, parentEnvironment: context.parentEnvironment },
  );
  if (result.cancelled && result.cancellation_cause === "caller_cancelled") throw cancelled(what);
  if (result.timed_out) {
    throw processTimeout(`${what} ran past the setup deadline.`, {
      details: { failure_category: "timeout" satisfies FailureCategory, failure_detail: what },
    });
  }
  const finished = { exitCode: result.exit_code, stdout: tail(stdoutPath, 64_000), stderr: tail(stderrPath, 8_000) };
  if (finished.exitCode !== 0) {
    const detail = lastLines(finished.stderr || finished.stdout);
    throw processFailed(`${what} failed (exit ${finished.exitCode ?? result.terminating_signal}).`, {
      details: { failure_category: classify(detail, category), failure_detail: detail },
    });
  }
  return finished;
}

function cancelled(what: string): FlameoxError {
  return processCancelled(`Capability setup was cancelled during ${what}.`, {
    details: { failure_category: "cancelled" satisfies FailureCategory, failure_detail: what },
  });
}

function tail(path: string, bytes: number): string {
  try {
    const text = readFileSync(path, "utf8");
    return text.length > bytes ? text.slice(-bytes) : text;
  } catch {
    return "";
  }
}

function lastLines(text: string): string {
  const lines = text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");
  return lines.slice(-4).join(" | ").slice(-500);
}

function classify(detail: string, fallback: FailureCategory): FailureCategory {
  if (/No space left|Permission denied|Read-only file system|Disk quota/i.test(detail)) return "filesystem";
  if (
    /Connection|NewConnectionError|Max retries|Temporary failure in name resolution|Name or service not known|ProxyError|SSLError|timed out|No matching distribution|Could not find a version/i.test(
      detail,
    )
  )
    return "network";
  return fallback;
}

const baseProbe = [
  "import json, sys",
  "try:",
  "    import pip",
  "    pip_version = pip.__version__",
  "except Exception:",
  "    pip_version = None",
  "print(json.dumps({'version': '%d.%d.%d' % sys.version_info[:3], 'pip': pip_version}))",
].join("\n");

/**
 * The interpreters a provider environment may be made from, in the order they are tried: python3 then
 * python on PATH; for a provider that needs a newer Python, then `python3.<minor>` on PATH from the
 * oldest minor it accepts up (the oldest has binary wheels first), then pyenv's versions folder
 * (`$PYENV_ROOT/versions`, else `~/.pyenv/versions`), oldest acceptable version first. A name is
 * only a candidate: each is asked its version (a pyenv shim of an inactive version fails and is skipped).
 */
export function basePythonCandidates(
  pathValue: string,
  environment: Record<string, string | undefined>,
  minimum: [number, number] | null,
): string[] {
  const names = ["python3", "python"];
  if (minimum) for (let minor = minimum[1]; minor <= minimum[1] + 4; minor++) names.push(`python${minimum[0]}.${minor}`);
  const candidates: string[] = [];
  for (const name of names) {
    try {
      candidates.push(resolveExecutable(name, pathValue));
    } catch {
      // Not on PATH: try the next name.
    }
  }
  if (minimum) candidates.push(...pyenvInterpreters(environment, minimum));
  return [...new Set(candidates)];
}

export function pyenvInterpreters(environment: Record<string, string | undefined>, minimum: [number, number]): string[] {
  const root = environment.PYENV_ROOT?.trim() || (environment.HOME?.trim() ? join(environment.HOME.trim(), ".pyenv") : null);
  if (!root) return [];
  let entries: string[];
  try {
    entries = readdirSync(join(root, "versions"));
  } catch {
    return [];
  }
  return entries
    .map((name) => ({ name, parts: /^(\d+)\.(\d+)\.(\d+)$/.exec(name)?.slice(1).map(Number) }))
    .filter((entry): entry is { name: string; parts: number[] } => entry.parts !== undefined && atLeast(entry.parts, minimum))
    .sort((left, right) => compareVersions(left.parts, right.parts))
    .map((entry) => join(root, "versions", entry.name, "bin", "python3"))
    .filter((path) => existsSync(path));
}

function compareVersions(left: number[], right: number[]): number {
  for (let index = 0; index < Math.max(left.length, right.length); index++) {
    const difference = (left[index] ?? 0) - (right[index] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

function atLeast(version: number[], minimum: [number, number]): boolean {
  return compareVersions(version.slice(0, 2), minimum) >= 0;
}

/**
 * The first candidate that runs and is at least `minimum`. None: CAPABILITY_UNAVAILABLE naming the
 * Python the provider needs and the versions that were found, so setup never fails silently.
 */
export async function findBasePython(
  pathValue: string,
  context: InstallerContext,
  minimum: [number, number] | null = null,
  forWhat = "a provider environment",
): Promise<BasePython> {
  const environment = context.parentEnvironment ?? process.env;
  const found: string[] = [];
  for (const executable of basePythonCandidates(pathValue, environment, minimum)) {
    let facts: { version?: string; pip?: string | null };
    try {
      const probed = await step([executable, "-I", "-c", baseProbe], context, "asking a base interpreter its version");
      facts = JSON.parse(probed.stdout.trim().split("\n").pop() ?? "{}");
    } catch (error) {
      if ((error as FlameoxError).code === "PROCESS_CANCELLED" || (error as FlameoxError).code === "PROCESS_TIMEOUT") throw error;
      continue;
    }
    const version = facts.version ?? "unknown";
    found.push(version);
    if (minimum && !atLeast(version.split(".").map(Number), minimum)) continue;
    const [major = 0, minor = 0] = (facts.pip ?? "0.0").split(".").map((part) => Number.parseInt(part, 10));
    return { executable, version, pipForOthers: major > 22 || (major === 22 && minor >= 3) };
  }
  const needed = minimum ? `Python >= ${minimum.join(".")}` : "Python 3";
  const seen = found.length > 0 ? `found only ${[...new Set(found)].join(", ")}` : "found none";
  throw capabilityUnavailable(`${forWhat} needs ${needed} with its venv module; ${seen}.`, {
    details: { failure_category: "unsupported_platform", failure_detail: `needs ${needed}; ${seen}`, required_python: needed },
    remediation: [
      `Install ${needed} (python3.${minimum?.[1] ?? "x"} on PATH, or a pyenv version), then start the setup again with a new idempotency key.`,
    ],
  });
}

/** A venv's own programs: bin/ on POSIX, Scripts/*.exe on Windows. */
export function environmentProgram(environment: string, name: string): string {
  return process.platform === "win32" ? join(environment, "Scripts", `${name}.exe`) : join(environment, "bin", name);
}

export function environmentPython(environment: string): string {
  return environmentProgram(environment, "python");
}

/**
 * A fresh venv with the requirements installed. Where the base interpreter's pip can install into
 * another interpreter the venv is made without its own pip (much faster); otherwise with it.
 */
export async function buildEnvironment(
  base: BasePython,
  environment: string,
  requirements: string[],
  context: InstallerContext,
): Promise<void> {
  const venv = [base.executable, "-I", "-m", "venv"];
  if (base.pipForOthers) venv.push("--without-pip");
  await step([...venv, environment], context, "creating the provider's virtual environment", "filesystem");
  const pip = base.pipForOthers
    ? [base.executable, "-I", "-m", "pip", "--python", environmentPython(environment)]
    : [environmentPython(environment), "-I", "-m", "pip"];
  await step(
    [...pip, "install", "--no-input", "--only-binary=:all:", "--no-warn-script-location", "--disable-pip-version-check", ...requirements],
    context,
    `pip install ${requirements.join(" ")}`,
    "network",
  );
}

const versionScript = [
  "import json, sys",
  "import importlib.metadata as m",
  "out = {}",
  "for name in sys.argv[1:]:",
  "    try: out[name] = m.version(name)",
  "    except m.PackageNotFoundError: out[name] = None",
  "print(json.dumps(out))",
].join("\n");

/** The versions the environment's own interpreter reports; every pin must match exactly. */
export async function checkVersions(
  provider: ManagedProvider,
  environment: string,
  context: InstallerContext,
): Promise<Record<string, string>> {
  const names = Object.keys(provider.distributions);
  const found = await step([environmentPython(environment), "-I", "-c", versionScript, ...names], context, "reading installed versions");
  const versions = JSON.parse(found.stdout.trim().split("\n").pop() ?? "{}") as Record<string, string | null>;
  const wrong = names.filter((name) => versions[name] !== provider.distributions[name]);
  if (wrong.length > 0) {
    throw processFailed(
      `The provider environment holds the wrong versions: ${wrong.map((name) => `${name} ${versions[name] ?? "missing"}`).join(", ")}.`,
      {
        details: {
          failure_category: "verification" satisfies FailureCategory,
          failure_detail: `expected ${wrong.map((name) => `${name}==${provider.distributions[name]}`).join(", ")}`,
        },
      },
    );
  }
  return versions as Record<string, string>;
}

export type ProbeOutcome = { versionOutput: string; probe: string; permissionStatus: "granted" | "denied" | "not_required" };

/**
 * The real probe, run where the environment will be used from: the tool does its job once on a tiny
 * input. A refused ptrace is reported as a permission, not a broken install.
 */
export async function probeProvider(provider: ManagedProvider, environment: string, context: InstallerContext): Promise<ProbeOutcome> {
  const python = environmentPython(environment);
  const probeDirectory = join(context.scratch, `probe-${provider.name}`);
  rmSync(probeDirectory, { recursive: true, force: true });
  mkdirSync(probeDirectory, { recursive: true });
  for (const [name, text] of Object.entries(provider.probe.files ?? {})) writeFileSync(join(probeDirectory, name), text);
  const argv = provider.probe.argv.map((argument) =>
    argument
      .replaceAll("{python}", python)
      .replaceAll("{executable}", provider.executable ? environmentProgram(environment, provider.executable) : "")
      .replaceAll("{scratch}", probeDirectory),
  );
  // A Python console script's interpreter line names the staging folder it was installed in, so a
  // reduction engine's script is run by the environment's interpreter, as reductions run it.
  const versionArgv = provider.executable
    ? provider.usage === "reduction_engine"
      ? [python, "-I", environmentProgram(environment, provider.executable), "--version"]
      : [environmentProgram(environment, provider.executable), "--version"]
    : null;
  const versionOutput = versionArgv
    ? (await step(versionArgv, context, `${provider.executable} --version`, "verification")).stdout.trim()
    : `${provider.module} ${provider.version}`;
  try {
    await step(argv, context, provider.probe.what, "verification");
  } catch (error) {
    const detail = String((error as FlameoxError).details?.failure_detail ?? "");
    if (provider.name === "py-spy" && /permission|ptrace|Operation not permitted/i.test(detail))
      return { versionOutput, probe: `${provider.probe.what}: ptrace refused`, permissionStatus: "denied" };
    throw error;
  }
  const missing = provider.probe.produces.filter((file) => !existsSync(join(probeDirectory, file)));
  if (missing.length > 0) {
    throw processFailed(`The ${provider.name} probe (${provider.probe.what}) wrote no ${missing.join(", ")}.`, {
      details: { failure_category: "verification" satisfies FailureCategory, failure_detail: provider.probe.what },
    });
  }
  const expected = provider.probe.expect;
  if (expected) {
    const content = tail(join(probeDirectory, expected.file), 64_000);
    if (content !== expected.content)
      throw processFailed(`The ${provider.name} probe (${provider.probe.what}) left ${expected.file} with other content than expected.`, {
        details: {
          failure_category: "verification" satisfies FailureCategory,
          failure_detail: `${expected.file}: ${JSON.stringify(content.slice(0, 200))}`,
        },
      });
  }
  return { versionOutput, probe: `${provider.probe.what}: ok`, permissionStatus: provider.name === "py-spy" ? "granted" : "not_required" };
}
