import { setDefaultTimeout, describe, expect, test } from "bun:test";
import { renderReport } from "../../../../src/analysis/report/html.ts";
import { embedTimeline, scriptSafeJson } from "../../../../src/analysis/report/report-data.ts";
import type { EmbeddedGraph, EmbeddedTimeline } from "../../../../src/analysis/report/report-data.ts";
import { largeSampleSet, makeFrame } from "../../../fixtures/report/synthetic-profile.ts";
import { syntheticReportInput, syntheticTraceEvents } from "../../../fixtures/report/report-input.ts";

// Million-sample inputs take seconds on a loaded machine.
setDefaultTimeout(60_000);

function embeddedData(html: string): { graphs: EmbeddedGraph[]; timeline: EmbeddedTimeline | null } {
  const match = /<script type="application\/json" id="flameox-data">([\s\S]*?)<\/script>/.exec(html);
  if (!match) throw new Error("no data block");
  return JSON.parse(match[1] as string);
}

describe("renderReport", () => {
  test("is one self-contained document that loads nothing from anywhere", () => {
    const html = renderReport(syntheticReportInput());
    expect(html.startsWith("<!doctype html>")).toBe(true);
    expect(html).toContain("Content-Security-Policy");
    expect(html).toContain("default-src 'none'");
    // No external resource of any kind: every href is an in-page anchor, nothing has src=, no CSS url()/@import.
    expect([...html.matchAll(/href="([^"]*)"/g)].every((match) => (match[1] as string).startsWith("#"))).toBe(true);
    expect(html).not.toMatch(/\ssrc=/);
    expect(html).not.toMatch(/url\(|@import|@font-face/);
    expect(html).not.toMatch(/https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
    for (const section of [
      "flamegraph-canvas",
      "differential-flamegraph-canvas",
      "timeline-canvas",
      "comparison-ci",
      "slowest-tests",
      "top-allocators",
      "top-functions",
    ]) {
      expect(html).toContain(`data-testid="${section}"`);
    }
  });

  test("leaves out sections without evidence", () => {
    const html = renderReport({ title: "Only tests", slowest_tests: [{ name: "t", duration_ns: 5 }] });
    expect(html).toContain('data-testid="slowest-tests"');
    expect(html).not.toContain("flamegraph-canvas");
    expect(html).not.toContain("timeline-canvas");
    expect(embeddedData(html)).toEqual({ graphs: [], timeline: null });
    expect(renderReport({})).toContain("No profile, trace, comparison, test or allocation evidence");
  });

  test("embedded JSON cannot close its script element", () => {
    const evil = makeFrame("</script><script>alert(1)</script><!--", "x.py", 1);
    const html = renderReport({
      profile: {
        frames: [evil],
        stacks: [{ thread: null, process: null, frame_keys: [evil.frame_key], weight: 3, unit: "samples", sample_count: 3 }],
      },
      slowest_tests: [{ name: "<img onerror=x>", duration_ns: 1 }],
    });
    expect(html.match(/<\/script>/g)?.length).toBe(2);
    expect(html).not.toContain("<img onerror");
    const data = embeddedData(html);
    expect(data.graphs[0]?.frames[1]?.[0]).toBe("</script><script>alert(1)</script><!--");
    expect(scriptSafeJson({ text: "a</b>\u2028&" })).toBe('{"text":"a\\u003c/b\\u003e\\u2028\\u0026"}');
  });

  test("embeds the aggregated, pruned tree for a million samples, never the samples", () => {
    const html = renderReport({ profile: largeSampleSet(1_000_000, 100_000), limits: { max_nodes: 5000, min_share: 0.0001 } });
    const [graph] = embeddedData(html).graphs;
    expect(graph?.total).toBe(1_000_000);
    expect((graph?.frame.length ?? 0) - 1).toBeLessThanOrEqual(5000);
    expect(graph?.omitted_nodes).toBeGreaterThan(0);
    expect(graph?.weight.slice(1).every((weight) => weight >= 100)).toBe(true);
    expect(html.length).toBeLessThan(2_000_000);
    // Offsets nest: every child lies inside its parent.
    for (let index = 1; index < (graph?.frame.length ?? 0); index += 1) {
      const parent = graph?.parent[index] as number;
      expect((graph?.start[index] as number) >= (graph?.start[parent] as number)).toBe(true);
      expect((graph?.start[index] as number) + (graph?.weight[index] as number)).toBeLessThanOrEqual(
        (graph?.start[parent] as number) + (graph?.weight[parent] as number) + 1e-6,
      );
    }
  });

  test("the differential graph carries both sides' weights and the change in share", () => {
    const data = embeddedData(renderReport(syntheticReportInput()));
    const differential = data.graphs.find((graph) => graph.id === "differential");
    expect(differential?.baseline?.total).toBe(120_000_000);
    expect(differential?.total).toBe(450_000_000);
    const computeA = differential?.frames.findIndex((frame) => frame[0] === "compute_a") as number;
    const node = differential?.frame.indexOf(computeA) as number;
    expect(differential?.baseline?.delta[node]).toBeCloseTo(180 / 450 - 30 / 120, 9);
  });
});

describe("embedTimeline", () => {
  test("keeps the longest events in the busiest lanes", () => {
    const events = syntheticTraceEvents(50, ["1", "2", "3", "4"]);
    const timeline = embedTimeline(events, { maxEvents: 120, maxLanes: 2, maxDepth: 8 });
    expect(timeline?.total_events).toBe(400);
    expect(timeline?.shown_events).toBe(120);
    expect(timeline?.lanes.length).toBe(2);
    expect(timeline?.omitted_lanes).toBe(2);
    expect(timeline?.lanes[0]?.rows).toBe(2);
    const bounded = embedTimeline(events, { maxEvents: 50, maxLanes: 8, maxDepth: 8 });
    expect(bounded?.shown_events).toBe(50);
    // The 50 longest are all outer steps (1.5 ms), none of the 0.9 ms matmuls.
    expect(bounded?.names.length).toBe(1);
    expect(embedTimeline([], { maxEvents: 10, maxLanes: 2, maxDepth: 4 })).toBeNull();
  });
});
