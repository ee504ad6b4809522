// Failure logs through the real services: a sanitizer report of a real gcc-built program and a
// Python traceback of a real crash are imported, become failure evidence, and analyze_failures
// lists them with their kind of error, message and frames.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { copyFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { failureSources, gcc, sanitizerStderr } from "../../fixtures/failures/programs.ts";
import { runCommand, venvPython } from "../../fixtures/python/tools.ts";
import { failure, project } from "../adapters/harness.ts";
import { projectImport } from "../../support/imports.ts";

// Builds C programs with gcc, runs Python, imports into a fresh workspace per test.
setDefaultTimeout(90_000);

type Services = Awaited<ReturnType<typeof project>>["services"];

function importLog(services: Services, path: string, kind: string | null) {
  return services.imports.importArtifact(projectImport(path, kind));
}

describe.skipIf(!gcc)("sanitizer reports", () => {
  test("an ASan+UBSan build's report, detected by content, is listed by analyze_failures with kind, message and frames", async () => {
    const { root, services } = await project("asan-log");
    // The program's source inside the project, so its frames are project-relative.
    copyFileSync(join(failureSources, "heap_overflow.c"), join(root, "heap_overflow.c"));
    const stderr = await sanitizerStderr("heap_overflow.c", ["-O0", "-fsanitize=address,undefined"]);
    writeFileSync(join(root, "asan.log"), `starting the service\n${stderr.replaceAll(failureSources, root)}`);
    const receipt = await importLog(services, "asan.log", null);
    expect(receipt.kind).toBe("sanitizer_report");
    expect(receipt.evidence).toMatchObject({ status: "available", tables: { observations: 1 }, next_tool: "analyze_failures" });
    const result = await services.failureAnalysis.analyze({ limit: 10, filter: null });
    const cluster = result.clusters.find((entry) => entry.source === "report")!;
    expect(cluster.signature).toBe("AddressSanitizer: heap-buffer-overflow in read_past_end");
    expect(cluster.run_ids).toEqual([receipt.run_id]);
    const example = cluster.examples[0]!;
    expect(example.subject).toBe("heap_overflow.c:3 in read_past_end");
    expect(example.error_kind).toBe("heap-buffer-overflow");
    expect(example.message).toStartWith("heap-buffer-overflow on address 0x");
    expect(example.frames!.slice(0, 2)).toEqual([
      { function: "read_past_end", file: "heap_overflow.c", line: 3, module: null },
      { function: "main", file: "heap_overflow.c", line: 7, module: null },
    ]);
  });

  test("TSan and UBSan reports imported with kind sanitizer_report cluster apart", async () => {
    const { root, services } = await project("tsan-log");
    const race = await sanitizerStderr("data_race.c", ["-O1", "-fsanitize=thread"]);
    const overflow = await sanitizerStderr("signed_overflow.c", ["-O0", "-fsanitize=undefined"], { UBSAN_OPTIONS: "print_stacktrace=1" });
    writeFileSync(join(root, "race.log"), race);
    writeFileSync(join(root, "overflow.log"), overflow);
    await importLog(services, "race.log", "sanitizer_report");
    await importLog(services, "overflow.log", "sanitizer_report");
    const result = await services.failureAnalysis.analyze({ limit: 10, filter: null });
    const signatures = result.clusters.filter((entry) => entry.source === "report").map((entry) => entry.signature);
    expect(signatures).toContain("ThreadSanitizer: data race in bump");
    expect(signatures).toContain("UndefinedBehaviorSanitizer: signed integer overflow in add_one");
  });
});

describe("Python tracebacks and logs without failures", () => {
  test("a real crash's stderr among other output: the exception, its message and its innermost frames", async () => {
    const { root, services } = await project("traceback-log");
    copyFileSync(join(failureSources, "crash.py"), join(root, "crash.py"));
    const crashed = await runCommand([venvPython, "crash.py"], { cwd: root, timeoutMs: 30_000 });
    expect(crashed.exitCode).toBe(1);
    writeFileSync(join(root, "service.log"), `INFO ready\n${crashed.stderr}INFO shutting down\n`);
    const receipt = await importLog(services, "service.log", null);
    expect(receipt.kind).toBe("process_output");
    const result = await services.failureAnalysis.analyze({ limit: 10, filter: null });
    const cluster = result.clusters.find((entry) => entry.source === "report")!;
    expect(cluster.signature).toBe("python: RuntimeError in start");
    const example = cluster.examples[0]!;
    expect(example.message).toBe("configuration is incomplete");
    // Innermost first, project-relative: start raised the RuntimeError at line 12.
    expect(example.frames!.slice(0, 2)).toEqual([
      { function: "start", file: "crash.py", line: 12, module: null },
      { function: "<module>", file: "crash.py", line: 15, module: null },
    ]);
    expect(example.subject).toBe("crash.py:12 in start");
  });

  test("kind sanitizer_report on a file without a report is ARTIFACT_PARSE_FAILED; an ordinary log stays opaque", async () => {
    const { root, services } = await project("no-report");
    writeFileSync(join(root, "quiet.log"), "INFO all good\nINFO done\n");
    const error = await failure(() => importLog(services, "quiet.log", "sanitizer_report"));
    expect(error.code).toBe("ARTIFACT_PARSE_FAILED");
    const opaque = await importLog(services, "quiet.log", null);
    expect(opaque.kind).toBe("collector_metadata");
    expect(opaque.evidence.status).toBe("not_extracted");
  });
});
