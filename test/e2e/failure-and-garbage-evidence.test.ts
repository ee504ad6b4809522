// Over real stdio against the compiled binary: a gcc-built program's AddressSanitizer report and a
// garbage trace, imported with import_artifact; analyze_failures lists the report with its kind,
// message and frames; analyze_hotspots answers the trace and repeats its limitation.
import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { copyFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { failureSources, gcc, sanitizerStderr } from "../fixtures/failures/programs.ts";
import { callTool, connectMcp, type McpSession, temporaryFolder } from "../support/binary.ts";

// Builds a C program with gcc and drives the binary.
setDefaultTimeout(120_000);

let session: McpSession | undefined;
afterEach(async () => {
  await session?.close();
  session = undefined;
});

test.skipIf(!gcc)(
  "an ASan report and a trace with a 1e300 µs timestamp through import_artifact, analyze_failures, analyze_hotspots",
  async () => {
    const project = temporaryFolder("failure-evidence");
    copyFileSync(join(failureSources, "heap_overflow.c"), join(project, "heap_overflow.c"));
    const stderr = await sanitizerStderr("heap_overflow.c", ["-O0", "-fsanitize=address,undefined"]);
    writeFileSync(join(project, "asan.log"), stderr.replaceAll(failureSources, project));
    const events = [
      { ph: "X", name: "absurd", cat: "c", pid: 1, tid: 1, ts: 1e300, dur: 5 },
      { ph: "X", name: "work", cat: "c", pid: 1, tid: 1, ts: 10, dur: 5 },
    ];
    writeFileSync(join(project, "trace.json"), JSON.stringify({ traceEvents: events }));
    session = await connectMcp(project);
    await callTool(session, "initialize_workspace");

    const log = await callTool(session, "import_artifact", { path: "asan.log" });
    expect(log.envelope.result.kind).toBe("sanitizer_report");
    expect(log.envelope.result.evidence.next_tool).toBe("analyze_failures");
    const failures = await callTool(session, "analyze_failures", { limit: 10 });
    const cluster = failures.envelope.result.clusters.find((entry: { source: string }) => entry.source === "report");
    expect(cluster.signature).toBe("AddressSanitizer: heap-buffer-overflow in read_past_end");
    expect(cluster.examples[0].error_kind).toBe("heap-buffer-overflow");
    expect(cluster.examples[0].message).toStartWith("heap-buffer-overflow on address");
    expect(cluster.examples[0].frames[0]).toEqual({ function: "read_past_end", file: "heap_overflow.c", line: 3, module: null });

    const trace = await callTool(session, "import_artifact", { path: "trace.json" });
    expect(trace.envelope.ok).toBe(true);
    const hotspots = await callTool(session, "analyze_hotspots", { run_or_artifact: trace.envelope.result.run_id, limit: 5 });
    expect(hotspots.envelope.result.hotspots.map((hotspot: { function: string }) => hotspot.function)).toEqual(["work"]);
    expect(hotspots.envelope.result.limitations).toEqual(["1 events had a ts or dur beyond 4e15 µs (no clock's value) and were left out."]);
  },
);
