import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { digestBounds, digestToc, summarizeToc, tocBounds } from "../../../../src/adapters/xctrace/xctrace-toc.ts";
import { FlameoxError } from "../../../../src/domain/errors.ts";
import { repositoryRoot } from "../../../support/binary.ts";

const toc = readFileSync(join(repositoryRoot, "test", "fixtures", "xctrace", "time-profiler.toc.xml"), "utf8");

test("the table of contents becomes runs with template, duration, target, tables and tracks", () => {
  const summary = summarizeToc(toc);
  expect(summary.run_count).toBe(2);
  expect(summary.runs_truncated).toBe(false);
  const [first, second] = summary.runs;
  expect(first).toMatchObject({
    number: 1,
    template_name: "Time Profiler",
    duration_seconds: 5.111049,
    start_date: "2024-01-16T10:21:33.402+01:00",
    end_reason: "Target app exited",
    instruments_version: "15.2 (15C500b)",
    recording_mode: "Immediate",
    target: {
      platform: "macOS",
      model: "MacBookPro18,3",
      os_version: "14.2.1 (23C71)",
      process_name: "sample-app",
      process_exit_status: "0",
    },
    process_count: 2,
    table_count: 8,
    track_count: 3,
  });
  expect(first!.tables.map((table) => table.schema)).toEqual([
    "time-profile",
    "time-sample",
    "thread-info",
    "process-info",
    "thread-state",
    "tick",
    "os-signpost",
    "dyld-library-load",
  ]);
  expect(first!.tables[1]!.attributes).toEqual({ "target-pid": "4211", "kdebug-match-rule": "0", callstack: "user" });
  expect(first!.tracks).toEqual(["Points of Interest", "Time Profiler", "Thread State Trace"]);
  expect(second).toMatchObject({ number: 2, duration_seconds: 10.002178, end_reason: "Time limit reached", table_count: 2 });
});

test("host paths, device names and identifiers stay out of the agent-facing summary", () => {
  const text = JSON.stringify(summarizeToc(toc));
  for (const hidden of ["/Users/", "Build Host", "00000000-0000", "/System/"]) expect(text).not.toContain(hidden);
});

test("bounds: runs, tables and text are cut with the totals kept", () => {
  // Every field at its longest, so the digest's size is a worst case.
  const long = (text: string) => text.repeat(300);
  const table = (index: number) => `<table schema="${long("s")}-${index}" note="${long("x")}"/>`;
  const fields = ["start-date", "end-date", "duration", "end-reason", "instruments-version", "template-name", "recording-mode"];
  const info = `<info><target><device platform="${long("p")}" model="${long("m")}" os-version="${long("o")}"/><process name="${long("n")}" return-exit-status="${long("e")}"/></target><summary>${fields.map((name) => `<${name}>${long("v")}</${name}>`).join("")}</summary></info>`;
  const tracks = `<tracks>${Array.from({ length: 50 }, () => `<track name="${long("t")}"/>`).join("")}</tracks>`;
  const run = (number: number) =>
    `<run number="${number}">${info}<data>${Array.from({ length: 100 }, (_, index) => table(index)).join("")}</data>${tracks}</run>`;
  const summary = summarizeToc(`<trace-toc>${Array.from({ length: 20 }, (_, index) => run(index + 1)).join("")}</trace-toc>`);
  expect(summary.run_count).toBe(20);
  expect(summary.runs.length).toBe(tocBounds.runs);
  expect(summary.runs_truncated).toBe(true);
  expect(summary.runs[0]!.table_count).toBe(100);
  expect(summary.runs[0]!.tables.length).toBe(tocBounds.tables);
  expect(summary.runs[0]!.tables[0]!.attributes.note!.length).toBe(tocBounds.text + 1);
  // The answer a tool gives is cut further, well inside the 8,000-character result budget.
  const digest = digestToc(summary);
  expect(digest.runs.length).toBe(digestBounds.runs);
  expect(digest.runs[0]!.table_schemas.length).toBe(digestBounds.tables);
  expect(digest.run_count).toBe(20);
  expect(JSON.stringify(digest).length).toBeLessThan(6000);
});

test("what is not a well-formed TOC is ARTIFACT_PARSE_FAILED; declared entities are never expanded", () => {
  for (const xml of [
    '<?xml version="1.0"?><!DOCTYPE t [<!ENTITY a "aaaa">]><trace-toc>&a;</trace-toc>',
    "<trace-toc><run></trace-toc>",
    "<other/>",
    "<trace-toc><run number='1'>",
    "",
  ]) {
    let error: unknown;
    try {
      summarizeToc(xml);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(FlameoxError);
    expect((error as FlameoxError).code).toBe("ARTIFACT_PARSE_FAILED");
  }
  expect(
    summarizeToc(
      '<trace-toc><run number="1"><info><summary><template-name>A &amp; B &#x263A;</template-name></summary></info></run></trace-toc>',
    ).runs[0]!.template_name,
  ).toBe("A & B \u263a");
});
