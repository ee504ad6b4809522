/**
 * Which viewers can open a run's (or artifact's) evidence, and the exact flameox commands that write
 * the files they read: the HTML report, speedscope, pprof, and the Chrome trace for Perfetto and the
 * Firefox Profiler. Looks at PATH for local viewers; never starts one.
 */
import { lstatSync } from "node:fs";
import { basename, delimiter, join } from "node:path";
import type { StackUnit } from "../domain/evidence.ts";

export type ExportFormat = "speedscope" | "pprof" | "collapsed" | "chrome";

export type ViewerEntry = {
  viewer: "report" | "speedscope" | "pprof" | "perfetto" | "firefox_profiler";
  name: string;
  format: "html" | ExportFormat;
  /** argv that writes the file the viewer opens; run it from the project root. */
  prepare_command: string[];
  output: string;
  /** argv that opens the file where a local viewer is installed, else null (open it by hand). */
  open_command: string[] | null;
  installed: boolean;
  how_to_open: string;
};

export type ViewerPlan = {
  schema_version: 1;
  run_or_artifact: string;
  run_ids: string[];
  evidence: { stacks: boolean; trace_events: boolean; units: StackUnit[] };
  report_command: string[];
  viewers: ViewerEntry[];
  notes: string[];
};

function onPath(command: string): string | null {
  for (const folder of (process.env.PATH ?? "").split(delimiter)) {
    if (!folder) continue;
    const candidate = join(folder, command);
    try {
      if (lstatSync(candidate).isFile() || lstatSync(candidate).isSymbolicLink()) return candidate;
    } catch {
      // Not in this folder.
    }
  }
  return null;
}

/** A file name from an id: no colons or slashes, short enough for any file system. */
function fileStem(id: string): string {
  return id
    .replace(/^sha256:/, "")
    .replace(/[^A-Za-z0-9._-]+/g, "_")
    .slice(0, 40);
}

/** The file-writing viewers for stack samples: speedscope and pprof. */
function stackViewers(id: string, stem: string): ViewerEntry[] {
  const speedscope = onPath("speedscope");
  const pprof = onPath("pprof");
  const go = onPath("go");
  return [
    {
      viewer: "speedscope",
      name: "speedscope",
      format: "speedscope",
      prepare_command: ["flameox", "export", id, "--format", "speedscope", "--output", `flameox-${stem}.speedscope.json`],
      output: `flameox-${stem}.speedscope.json`,
      open_command: speedscope ? ["speedscope", `flameox-${stem}.speedscope.json`] : null,
      installed: speedscope !== null,
      how_to_open:
        "Run `speedscope FILE` where the speedscope CLI is installed, or load the file into the speedscope web app (it stays in the browser).",
    },
    {
      viewer: "pprof",
      name: "pprof",
      format: "pprof",
      prepare_command: ["flameox", "export", id, "--format", "pprof", "--output", `flameox-${stem}.pb.gz`],
      output: `flameox-${stem}.pb.gz`,
      open_command: pprof
        ? ["pprof", "-http=127.0.0.1:0", `flameox-${stem}.pb.gz`]
        : go
          ? ["go", "tool", "pprof", "-http=127.0.0.1:0", `flameox-${stem}.pb.gz`]
          : null,
      installed: pprof !== null || go !== null,
      how_to_open: "Run `pprof -http=127.0.0.1:0 FILE` (or `go tool pprof -http=127.0.0.1:0 FILE`).",
    },
  ];
}

/** The browser viewers of a Chrome trace: recorded trace events, or a flame chart synthesized from the stacks. */
function traceViewers(id: string, stem: string, recordedTraces: boolean): ViewerEntry[] {
  const output = `flameox-${stem}.trace.json`;
  const prepare = ["flameox", "export", id, "--format", "chrome", "--output", output];
  const source = recordedTraces
    ? "the recorded trace events"
    : "a flame chart synthesized from the stacks (durations are weights, not wall-clock times)";
  const viewer = (kind: "perfetto" | "firefox_profiler", name: string, how: string): ViewerEntry => ({
    viewer: kind,
    name,
    format: "chrome",
    prepare_command: prepare,
    output,
    open_command: null,
    installed: false,
    how_to_open: `${how}; it shows ${source}.`,
  });
  return [
    viewer("perfetto", "Perfetto UI", "Open the Perfetto UI in a browser and load the file (Open trace file)"),
    viewer("firefox_profiler", "Firefox Profiler", "Open the Firefox Profiler in a browser and load the file (Load a profile from file)"),
  ];
}

export function viewerPlanFor(
  runOrArtifact: string,
  runIds: string[],
  evidence: { stacks: boolean; traces: boolean; units: StackUnit[] },
): ViewerPlan {
  const { stacks, traces, units } = evidence;
  const stem = fileStem(runOrArtifact);
  const id = runOrArtifact;
  const reportOutput = `flameox-${stem}-report.html`;
  const browser = onPath("xdg-open") ?? onPath("open");
  const report: ViewerEntry = {
    viewer: "report",
    name: "flameox report (self-contained HTML, any browser, offline)",
    format: "html",
    prepare_command: ["flameox", "report", id, "--output", reportOutput],
    output: reportOutput,
    open_command: browser ? [basename(browser), reportOutput] : null,
    installed: browser !== null,
    how_to_open: "Open the HTML file in any browser; it needs no network.",
  };
  const onlyBytes = units.length > 0 && units.every((unit) => unit === "bytes" || unit === "retained_bytes");
  const viewers: ViewerEntry[] = [
    ...(stacks || traces ? [report] : []),
    ...(stacks ? stackViewers(id, stem) : []),
    ...(traces || (stacks && !onlyBytes) ? traceViewers(id, stem, traces) : []),
  ];
  const notes: string[] = [];
  if (!stacks && !traces)
    notes.push(
      "No stack samples or trace events are stored for this run or artifact; capture with py-spy or perf, or import a profile, first.",
    );
  if (traces && stacks)
    notes.push(
      "The chrome export writes the recorded trace events; pass --unit to export a flame chart synthesized from the stacks instead.",
    );
  notes.push("Commands write files relative to the current folder; nothing is launched unless you run `flameox open ID --launch`.");
  return {
    schema_version: 1,
    run_or_artifact: runOrArtifact,
    run_ids: runIds,
    evidence: { stacks, trace_events: traces, units },
    report_command: report.prepare_command,
    viewers,
    notes,
  };
}
