/**
 * The managed providers flameox can install from the package registry, each pinned to the version
 * the adapters are written against (the same pins as tools/python-requirements.txt), with how a
 * capture uses the installed copy and the real probe that verifies it.
 */
import { coverageRequirement } from "../coverage/coverage-adapter.ts";
import { memrayRequirement } from "../memray/memray-adapter.ts";
import { pyperfRequirement } from "../pyperf/pyperf-adapter.ts";
import { pytestRequirements } from "../pytest/pytest-capture.ts";
import { torchRequirement } from "../torch-profiler/torch-profiler-adapter.ts";
import { shrinkrayArgv, shrinkrayFiles, shrinkrayLauncherSource } from "../shrinkray/shrinkray-engine.ts";

/**
 * How a capture uses the installed copy:
 * - `executable`: a standalone program; plans run `<environment>/bin/<executable>` (py-spy).
 * - `interpreter`: a standalone Python tool; plans run `<environment>/bin/python -m <module>` (pyperf
 *   starts the workload as its own child, so it need not live in the workload's interpreter).
 * - `workload_interpreter`: it runs inside the workload's own interpreter (coverage, memray, the pytest
 *   plugin, torch.profiler). The managed copy is installed and verified, but flameox never changes the
 *   workload's environment or its import path: the workload's interpreter must have the distribution.
 * - `reduction_engine`: a reducer flameox drives itself with the environment's interpreter (shrinkray).
 *   Only the managed copy is used, never one on PATH, so every reduction plan binds the pinned release.
 */
export type ProviderUsage = "executable" | "interpreter" | "workload_interpreter" | "reduction_engine";

/** A check run with the environment's own interpreter or executable after install. */
export type ProviderProbe = {
  /** `{python}` (the environment's interpreter), `{executable}` (its standalone executable) and `{scratch}` are replaced. */
  argv: string[];
  /** Files the probe writes into its scratch folder that must exist afterwards. */
  produces: string[];
  /** Files written into the scratch folder before the probe runs. */
  files?: Record<string, string>;
  what: string;
  /** A file the probe must leave with exactly this content (the tool did its job, not just ran). */
  expect?: { file: string; content: string };
};

export type ManagedProvider = {
  name: string;
  /** The capture adapters this provider serves. */
  adapters: string[];
  version: string;
  requirements: string[];
  /** Distributions whose installed versions must equal their pins. */
  distributions: Record<string, string>;
  usage: ProviderUsage;
  executable: string | null;
  module: string | null;
  probe: ProviderProbe;
  /** The oldest Python the release installs on ([major, minor]); null: any Python 3 flameox finds. */
  minimumPython: [number, number] | null;
};

export type UnavailableProvider = { name: string; reason: string };

function pinned(requirement: string): [string, string] {
  const [name, version] = requirement.split("==");
  return [name!, version!];
}

function provider(
  name: string,
  requirements: string[],
  usage: ProviderUsage,
  probe: ProviderProbe,
  extra: { executable?: string; module?: string; adapters?: string[]; minimumPython?: [number, number] } = {},
): ManagedProvider {
  const distributions = Object.fromEntries(requirements.map(pinned));
  return {
    name,
    adapters: extra.adapters ?? [name],
    version: pinned(requirements[0]!)[1],
    requirements,
    distributions,
    usage,
    executable: extra.executable ?? null,
    module: extra.module ?? null,
    probe,
    minimumPython: extra.minimumPython ?? null,
  };
}

const sleeper = "import time; time.sleep(0.5)";

export const managedProviders: ManagedProvider[] = [
  provider(
    "py-spy",
    ["py-spy==0.4.3"],
    "executable",
    {
      // A real recording of a child interpreter: proves the binary runs and may ptrace here.
      argv: [
        "{executable}",
        "record",
        "--nonblocking",
        "--rate",
        "50",
        "--format",
        "speedscope",
        "--output",
        "{scratch}/probe.json",
        "--",
        "{python}",
        "-c",
        sleeper,
      ],
      produces: ["probe.json"],
      what: "a py-spy recording of a Python child",
    },
    { executable: "py-spy" },
  ),
  provider(
    "pyperf",
    [pyperfRequirement],
    "interpreter",
    {
      argv: [
        "{python}",
        "-m",
        "pyperf",
        "command",
        "--processes",
        "1",
        "--values",
        "1",
        "--warmups",
        "0",
        "--loops",
        "1",
        "--output",
        "{scratch}/probe.json",
        "--",
        "{python}",
        "-c",
        "pass",
      ],
      produces: ["probe.json"],
      what: "a one-value pyperf command benchmark",
    },
    { module: "pyperf" },
  ),
  provider(
    "coverage",
    [coverageRequirement],
    "workload_interpreter",
    {
      argv: ["{python}", "-I", "-m", "coverage", "run", "--branch", "--data-file={scratch}/probe.coverage", "{scratch}/probe_target.py"],
      files: { "probe_target.py": "total = sum(range(10))\nif total:\n    total += 1\n" },
      produces: ["probe.coverage"],
      what: "a branch-coverage run of a small script",
    },
    { module: "coverage" },
  ),
  provider(
    "memray",
    [memrayRequirement],
    "workload_interpreter",
    {
      argv: ["{python}", "-I", "-m", "memray", "run", "--quiet", "--output", "{scratch}/probe.bin", "{scratch}/probe_target.py"],
      files: { "probe_target.py": "blocks = [bytearray(4096) for _ in range(64)]\n" },
      produces: ["probe.bin"],
      what: "a memray recording of a small script",
    },
    { module: "memray" },
  ),
  provider(
    "pytest",
    pytestRequirements,
    "workload_interpreter",
    {
      argv: ["{python}", "-I", "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml={scratch}/probe.xml", "{scratch}/test_probe.py"],
      files: { "test_probe.py": "def test_probe():\n    assert 1 + 1 == 2\n" },
      produces: ["probe.xml"],
      what: "a one-test pytest session",
    },
    { module: "pytest" },
  ),
  provider(
    "torch.profiler",
    [torchRequirement],
    "workload_interpreter",
    {
      argv: [
        "{python}",
        "-I",
        "-c",
        [
          "import sys, torch",
          "from torch.profiler import profile, ProfilerActivity",
          "with profile(activities=[ProfilerActivity.CPU]) as p:",
          "    torch.ones(8, 8) @ torch.ones(8, 8)",
          "p.export_chrome_trace(sys.argv[1])",
        ].join("\n"),
        "{scratch}/probe.trace.json",
      ],
      produces: ["probe.trace.json"],
      what: "a CPU torch.profiler trace of one matrix product",
    },
    { module: "torch" },
  ),
  provider(
    "shrinkray",
    // Newer releases require llama-cpp-python, which has no binary wheel: setup installs wheels only.
    ["shrinkray==26.7.6.1"],
    "reduction_engine",
    {
      // A real reduction through the same launcher and flags reductions use: three lines down to the kept word.
      argv: shrinkrayArgv({
        python: "{python}",
        launcher: `{scratch}/${shrinkrayFiles.launcher}`,
        test: "{scratch}/probe_test.py",
        candidate: "{scratch}/probe.txt",
        timeoutSeconds: 60,
      }),
      files: {
        [shrinkrayFiles.launcher]: shrinkrayLauncherSource,
        "probe_test.py": 'import sys\nsys.exit(0 if b"keep" in open(sys.argv[1], "rb").read() else 1)\n',
        "probe.txt": "drop\nkeep\ndrop too\n",
      },
      produces: ["probe.txt"],
      expect: { file: "probe.txt", content: "keep" },
      what: "a ShrinkRay reduction of a three-line file",
    },
    { executable: "shrinkray", minimumPython: [3, 12] },
  ),
];

/** Names start_capability_setup accepts that no package on the registry provides, with why. */
export const unavailableProviders: UnavailableProvider[] = [
  {
    name: "perfetto",
    reason:
      "The package registry carries Perfetto's Python API but not trace_processor_shell (the API downloads it from Perfetto's own storage at first use), so it cannot be installed here; install trace_processor on PATH by hand.",
  },
  {
    name: "toxiproxy",
    reason: "Toxiproxy is not published on the package registry and this release has no fault-injection adapter that would use it.",
  },
];

export function managedProvider(name: string): ManagedProvider | undefined {
  return managedProviders.find((entry) => entry.name === name);
}

/** The provider that serves a capture adapter, if flameox can install one for it. */
export function providerForAdapter(adapter: string): ManagedProvider | undefined {
  return managedProviders.find((entry) => entry.adapters.includes(adapter));
}

export function unavailableProvider(name: string): UnavailableProvider | undefined {
  return unavailableProviders.find((entry) => entry.name === name);
}
