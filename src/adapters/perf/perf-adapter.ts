import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { artifactParseFailed, capabilityUnavailable, type FlameoxError, planRefused } from "../../domain/errors.ts";
import { frameKey, type EvidenceSink } from "../../domain/evidence.ts";
import type { WorkloadInvocation, CaptureCommand, CommandResult, CommandRunner, ProbeResult } from "../capture-adapter.ts";

export const perfDataFileName = "perf.data";
export const perfExtractorVersion = "flameox.perf-script@1";
const scriptFields = "comm,pid,tid,time,period,event,ip,sym,symoff,dso";
/**
 * `perf record` copies every DSO it sampled into ~/.debug (5–12 MB per run) unless told not to.
 * flameox symbolizes on the host that recorded, from the binaries in place, so the cache is never
 * needed, and a read-only probe or a capture must not write outside the workspace.
 */
const recordArguments = ["record", "--no-buildid-cache", "-g"];

/** Call graphs by frame pointers (-g); any workload, Python or native. */
export function perfCaptureCommand(input: {
  workload: WorkloadInvocation;
  artifactDirectory: string;
  perf?: string;
  frequency?: number;
}): CaptureCommand {
  const output = join(input.artifactDirectory, perfDataFileName);
  const argv = [input.perf ?? "perf", ...recordArguments, "-o", output];
  if (input.frequency !== undefined) {
    if (!Number.isInteger(input.frequency) || input.frequency < 1 || input.frequency > 100_000) {
      throw planRefused("capture", `perf frequency must be 1..100000 Hz, got ${input.frequency}.`, {
        remediation: ["Choose a sampling frequency such as 999."],
      });
    }
    argv.push("-F", String(input.frequency));
  }
  return {
    argv: [...argv, "--", ...input.workload.argv],
    cwd: input.workload.cwd,
    environment: {},
    artifacts: [{ name: perfDataFileName, path: output, role: "primary", mediaType: "application/octet-stream" }],
  };
}

/** The extraction command: perf.data is host-specific binary; `perf script` symbolizes it on this host. */
export function perfScriptCommand(perfData: string, perf = "perf"): string[] {
  return [perf, "script", "-i", perfData, "-F", scriptFields];
}

const permissionMarkers = [
  /permission denied/i,
  /operation not permitted/i,
  /no permission/i,
  /perf_event_open/i,
  /perf_event_paranoid/i,
  /access denied/i,
];

/** Really runs `perf record -- true`: reading perf_event_paranoid alone does not say what a container allows. */
export async function probePerf(run: CommandRunner, options: { perf?: string; paranoidPath?: string } = {}): Promise<ProbeResult> {
  const perf = options.perf ?? "perf";
  const install = "apt-get install linux-perf (Debian) — or your distribution's perf package";
  let paranoid: string | null = null;
  try {
    paranoid = readFileSync(options.paranoidPath ?? "/proc/sys/kernel/perf_event_paranoid", "utf8").trim();
  } catch {
    paranoid = null;
  }
  let version: CommandResult;
  try {
    version = await run([perf, "--version"], { timeoutMs: 5_000 });
  } catch (error) {
    return {
      status: "unavailable",
      version: null,
      remediation: [`Install perf: ${install}`],
      limitations: [],
      details: { error: String(error).slice(0, 300), perf_event_paranoid: paranoid },
    };
  }
  if (version.exitCode !== 0) {
    return {
      status: "unavailable",
      version: null,
      remediation: [`perf did not run (exit ${version.exitCode}); install a perf matching this kernel: ${install}`],
      limitations: [],
      details: { stderr: version.stderr.slice(-300), perf_event_paranoid: paranoid },
    };
  }
  const versionText = (version.stdout.trim() || version.stderr.trim()).split("\n")[0] ?? null;
  const directory = mkdtempSync(join(tmpdir(), "flameox-perf-probe-"));
  try {
    const trial = await run([perf, ...recordArguments, "-o", join(directory, "perf.data"), "--", "true"], { timeoutMs: 10_000 });
    const diagnostic = `${trial.stdout}\n${trial.stderr}`.replace(/\s+/g, " ").trim().slice(0, 500);
    if (trial.exitCode === 0 && existsSync(join(directory, "perf.data"))) {
      return {
        status: "available",
        version: versionText,
        remediation: [],
        limitations: ["Frame-pointer call graphs: code built without frame pointers shows short stacks."],
        details: { perf_event_paranoid: paranoid, permission: "granted" },
      };
    }
    if (permissionMarkers.some((marker) => marker.test(diagnostic))) {
      return {
        status: "permission_required",
        version: versionText,
        remediation: [
          `perf_event_paranoid is ${paranoid ?? "unknown"}; allow user profiling with: sudo sysctl kernel.perf_event_paranoid=1`,
          "or grant CAP_PERFMON (CAP_SYS_ADMIN on kernels before 5.8) to the process that runs perf.",
        ],
        limitations: [],
        details: { perf_event_paranoid: paranoid, permission: "denied", diagnostic },
      };
    }
    return {
      status: "unavailable",
      version: versionText,
      remediation: [`perf record failed: ${diagnostic || `exit ${trial.exitCode}`}`],
      limitations: [],
      details: { perf_event_paranoid: paranoid, permission: "unknown" },
    };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

function parseFailed(message: string, details: Record<string, unknown> = {}): FlameoxError {
  return artifactParseFailed(`perf: ${message}`, {
    details,
    remediation: ["Record again with the perf adapter; perf.data must be complete and read on the host (and kernel) that wrote it."],
  });
}

const headerPattern = /^(\S.*?)\s+(\d+)\/(\d+)\s+(\d+\.\d+):\s+(?:(\d+)\s+)?(\S+?):\s*$/;
const framePattern = /^\s+([0-9a-f]+)\s+(.+?)\s+\((.*)\)\s*$/;

export type PerfSummary = {
  samples: number;
  stacks: number;
  events: string[];
  /** Leaf functions by samples, most first. */
  topLeaves: { function: string; module: string | null; samples: number }[];
};

function frameLanguage(module: string): string {
  return module === "[kernel.kallsyms]" || module.startsWith("[kernel") ? "kernel" : "native";
}

/** Parses `perf script -F comm,pid,tid,time,period,event,ip,sym,symoff,dso` text; perf lists the leaf first. */
export function extractPerfScript(text: string, sink: EvidenceSink): PerfSummary {
  const lines = text.split("\n");
  type Sample = { process: string; thread: string; event: string; frames: { function: string; module: string | null }[] };
  const aggregated = new Map<string, { thread: string; process: string; keys: string[]; samples: number }>();
  const leaves = new Map<string, { function: string; module: string | null; samples: number }>();
  const events = new Set<string>();
  let current: Sample | null = null;
  let sampleCount = 0;
  const finish = () => {
    if (!current) return;
    if (current.frames.length === 0) throw parseFailed("a sample has no call chain (recorded without -g?)");
    const rootFirst = [...current.frames].reverse();
    const keys = rootFirst.map((frame) => {
      const language = frameLanguage(frame.module ?? "");
      const key = frameKey({ language, function: frame.function, file: frame.module, line: null });
      sink.frame({ frame_key: key, function: frame.function, file: frame.module, line: null, module: frame.module, language });
      return key;
    });
    const id = `${current.process}\u0000${current.thread}\u0000${keys.join(",")}`;
    const entry = aggregated.get(id) ?? { thread: current.thread, process: current.process, keys, samples: 0 };
    entry.samples += 1;
    aggregated.set(id, entry);
    const leaf = current.frames[0]!;
    const leafId = `${leaf.function}\u0000${leaf.module}`;
    const leafEntry = leaves.get(leafId) ?? { ...leaf, samples: 0 };
    leafEntry.samples += 1;
    leaves.set(leafId, leafEntry);
    sampleCount += 1;
    current = null;
  };
  lines.forEach((line, index) => {
    if (line.trim() === "") {
      finish();
      return;
    }
    if (current === null) {
      const header = headerPattern.exec(line);
      if (!header) throw parseFailed(`line ${index + 1} is not a sample header`, { line: line.slice(0, 200) });
      events.add(header[6]!);
      current = { process: `${header[1]} ${header[2]}`, thread: `${header[1]} ${header[3]}`, event: header[6]!, frames: [] };
      return;
    }
    const frame = framePattern.exec(line);
    if (!frame) throw parseFailed(`line ${index + 1} is not a call-chain frame`, { line: line.slice(0, 200) });
    const symbol = frame[2]!.replace(/\+0x[0-9a-f]+$/, "");
    const module = frame[3] === "[unknown]" ? null : frame[3]!;
    (current as Sample).frames.push({ function: symbol === "[unknown]" ? `0x${frame[1]}` : symbol, module });
  });
  if (!text.endsWith("\n") && current !== null) throw parseFailed("the text ends inside a sample (truncated)");
  finish();
  if (sampleCount === 0) throw parseFailed("no samples");
  for (const entry of aggregated.values()) {
    sink.stack({
      thread: entry.thread,
      process: entry.process,
      frame_keys: entry.keys,
      weight: entry.samples,
      unit: "samples",
      sample_count: entry.samples,
    });
  }
  return {
    samples: sampleCount,
    stacks: aggregated.size,
    events: [...events],
    topLeaves: [...leaves.values()].sort((left, right) => right.samples - left.samples).slice(0, 20),
  };
}

/** Runs `perf script` on the artifact and parses it; perf's own refusal means the file is unreadable. */
export async function extractPerfData(
  input: { artifact: string; run: CommandRunner; perf?: string },
  sink: EvidenceSink,
): Promise<PerfSummary> {
  if (!existsSync(input.artifact)) throw parseFailed(`${input.artifact} does not exist`);
  let result: CommandResult;
  try {
    result = await input.run(perfScriptCommand(input.artifact, input.perf), { timeoutMs: 300_000 });
  } catch (error) {
    throw capabilityUnavailable(`perf could not be started: ${String(error).slice(0, 300)}`, {
      remediation: ["Install perf: apt-get install linux-perf"],
    });
  }
  if (result.exitCode !== 0) throw parseFailed(`perf script failed (exit ${result.exitCode}): ${result.stderr.trim().slice(-300)}`);
  return extractPerfScript(result.stdout, sink);
}
