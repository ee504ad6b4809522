/**
 * Seeing a profile, end to end through the compiled binary: a known workload captured with py-spy,
 * `flameox report` opened offline in Debian's Chromium, every `flameox export` format imported back
 * with the same hotspots, the SVG flame graph read over MCP, and the viewer plan / `flameox open`.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { callTool, connectMcp, repositoryRoot, runCli, temporaryFolder, toolPath, type McpSession } from "../support/binary.ts";
import { speedscopeSchemaViolations } from "../unit/adapters/export/speedscope-schema.ts";
import { waitFor } from "../support/wait.ts";

setDefaultTimeout(180_000);

const chromiumPath = "/usr/bin/chromium";
const outputDirectory = join(repositoryRoot, ".test-output", "report-e2e");
const python = join(repositoryRoot, ".tools", "venv", "bin", "python");

/**
 * hot_function does three times warm_function's work; both are leaves called from main. hot_function gets
 * ≈ 0.75 of the two leaves' samples; for the ranking to swap, py-spy's share would have to move by 0.25,
 * six times its measured run-to-run SD of 0.042 (test/support/experiment-designs.ts).
 */
const workload = `import sys, time


def hot_function(n):
    total = 0
    for i in range(n * 3):
        total += (i * i) % 7
    return total


def warm_function(n):
    total = 0
    for i in range(n):
        total += (i * i) % 7
    return total


def main(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        hot_function(20_000)
        warm_function(20_000)


if __name__ == "__main__":
    main(float(sys.argv[1]))
`;

type Hotspot = { function: string; file: string | null; self_share: number; total_share: number };

let project: string;
let session: McpSession;
let runId: string;
let hotspots: Hotspot[];
let flamegraphUri: string;

function cli(argv: string[], env: Record<string, string> = {}) {
  return runCli(argv, { cwd: project, env });
}

function hotspotsOf(target: string): Hotspot[] {
  const result = cli(["analyze", "hotspots", target, "--limit", "50", "--json"]);
  expect(result.exitCode).toBe(0);
  return result.json.hotspots as Hotspot[];
}

beforeAll(async () => {
  project = temporaryFolder("report");
  writeFileSync(join(project, "work.py"), workload);
  session = await connectMcp(project, ["--init"]);
  const configured = await callTool(session, "configure_workload", {
    name: "work",
    operation: "create",
    argv: [python, "work.py", "{seconds}"],
    parameters: { seconds: ["1.5"] },
  });
  expect(configured.envelope.ok).toBe(true);
  const plan = await callTool(session, "plan_capture", {
    workload_name: "work",
    adapter: "py-spy",
    parameters: {},
    adapter_options: { rate: 200 },
  });
  expect(plan.envelope.ok).toBe(true);
  const executed = await callTool(session, "execute_capture_plan", { plan_id: plan.envelope.result.plan_id });
  expect(executed.envelope.ok).toBe(true);
  expect(executed.envelope.result.execution_status).toBe("succeeded");
  runId = executed.envelope.result.run_id;
  const analyzed = await callTool(session, "analyze_hotspots", { run_or_artifact: runId, limit: 50 });
  expect(analyzed.envelope.ok).toBe(true);
  hotspots = analyzed.envelope.result.hotspots;
  flamegraphUri = analyzed.envelope.result.flamegraph_uri;
  expect(hotspots[0]!.function).toBe("hot_function");
  expect(hotspots[1]!.function).toBe("warm_function");
});

afterAll(async () => {
  await session?.close();
});

describe("flameox report in a browser", () => {
  let context: BrowserContext;
  let page: Page;
  let userDataDirectory: string;
  const consoleErrors: string[] = [];
  const networkRequests: string[] = [];
  type LaidOut = { index: number; parent: number; name: string; x: number; y: number; width: number; height: number; highlighted: boolean };
  const frames = async () => (await page.evaluate(`window.flameox.frames("profile")`)) as LaidOut[];
  const nextPaint = () => page.evaluate("new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done(true))))");
  const only = (list: LaidOut[], name: string): LaidOut => {
    const found = list.filter((frame) => frame.name === name);
    expect(found.length).toBe(1);
    return found[0]!;
  };

  beforeAll(async () => {
    if (!existsSync(chromiumPath)) throw new Error(`Chromium is missing at ${chromiumPath}; run 'node scripts/ensure.mjs --all'.`);
    const before = new Set(readdirSync(project));
    const written = cli(["report", runId, "--output", "report.html"]);
    expect(written.stderr).toBe("");
    expect(written.exitCode).toBe(0);
    expect(written.stdout.trim()).toBe(join(project, "report.html"));
    // Only the named file appears beside the workspace.
    expect(readdirSync(project).filter((name) => !before.has(name))).toEqual(["report.html"]);
    mkdirSync(outputDirectory, { recursive: true });
    const { chromium } = await import("playwright-core");
    userDataDirectory = mkdtempSync(join(tmpdir(), "flameox-report-e2e-"));
    context = await chromium.launchPersistentContext(userDataDirectory, {
      executablePath: chromiumPath,
      headless: true,
      viewport: { width: 1280, height: 900 },
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
      ],
    });
    page = await context.newPage();
    page.on("console", (message) => {
      if (message.type() === "error") consoleErrors.push(message.text());
    });
    page.on("pageerror", (error) => consoleErrors.push(error.message));
    page.on("request", (request) => {
      if (!/^(file|data|about):/.test(request.url())) networkRequests.push(request.url());
    });
    await page.goto(`file://${join(project, "report.html")}`);
    await page.waitForFunction("window.flameox !== undefined && window.flameox.ready === true");
    await nextPaint();
  });

  afterAll(async () => {
    await context?.close();
    if (userDataDirectory) rmSync(userDataDirectory, { recursive: true, force: true });
  });

  test("the hot function's frame is the widest under its parent", async () => {
    const laidOut = await frames();
    const hot = only(laidOut, "hot_function");
    const siblings = laidOut.filter((frame) => frame.parent === hot.parent && frame.index !== hot.index);
    expect(siblings.map((frame) => frame.name)).toContain("warm_function");
    for (const sibling of siblings) expect(hot.width).toBeGreaterThan(sibling.width);
    expect(laidOut.find((frame) => frame.index === hot.parent)?.name).toBe("main");
  });

  test("search highlights it and clicking zooms it to the full width", async () => {
    await page.getByTestId("flamegraph-search").fill("hot_function");
    await nextPaint();
    const searched = await frames();
    expect(searched.filter((frame) => frame.highlighted).map((frame) => frame.name)).toEqual(["hot_function"]);
    await page.getByTestId("flamegraph-search").fill("");
    await nextPaint();
    const before = only(await frames(), "hot_function");
    const box = await page.getByTestId("flamegraph-canvas").boundingBox();
    if (!box) throw new Error("canvas not laid out");
    await page.mouse.click(box.x + before.x + before.width / 2, box.y + before.y + before.height / 2);
    await nextPaint();
    const zoomed = only(await frames(), "hot_function");
    expect(zoomed.x).toBeCloseTo(0, 6);
    expect(zoomed.width).toBeCloseTo(box.width, 0);
    expect((await frames()).some((frame) => frame.name === "warm_function")).toBe(false);
    await page.getByTestId("flamegraph-reset").click();
    await nextPaint();
    expect(only(await frames(), "hot_function").width).toBeCloseTo(before.width, 6);
  });

  test("the top-functions table ranks it first; offline, error-free, screenshot kept", async () => {
    expect(await page.getByTestId("top-functions").textContent()).toContain("hot_function");
    const screenshot = join(outputDirectory, "report.png");
    await page.screenshot({ path: screenshot, fullPage: true });
    expect(statSync(screenshot).size).toBeGreaterThan(10_000);
    writeFileSync(join(outputDirectory, "report.html"), readFileSync(join(project, "report.html")));
    expect(networkRequests).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });
});

describe("report inputs and output safety", () => {
  test("a differential report against a baseline, and several runs pooled", () => {
    const exported = cli(["export", runId, "--format", "speedscope", "--output", "baseline.speedscope.json"]);
    expect(exported.exitCode).toBe(0);
    const imported = cli(["import", "baseline.speedscope.json", "--json"]);
    expect(imported.exitCode).toBe(0);
    const other = imported.json.run_id as string;
    const differential = cli(["report", runId, "--baseline", other, "--output", "diff.html", "--json"]);
    expect(differential.exitCode).toBe(0);
    expect(differential.json.sections).toContain("differential_flame_graph");
    expect(differential.json.baseline_run_ids).toEqual([other]);
    expect(readFileSync(join(project, "diff.html"), "utf8")).toContain('data-graph="differential"');
    const pooled = cli(["report", `${runId},${other}`, "--output", "pooled.html", "--json"]);
    expect(pooled.exitCode).toBe(0);
    expect(pooled.json.run_ids.sort()).toEqual([runId, other].sort());
    const repeated = cli(["report", runId, other, "--output", "pooled.html", "--json"]);
    expect(repeated.exitCode).toBe(0);
    expect(repeated.json.run_ids.sort()).toEqual([runId, other].sort());
  });

  test("refuses to overwrite a folder or a link, and names missing runs", () => {
    mkdirSync(join(project, "a-folder"));
    const folder = cli(["report", runId, "--output", "a-folder", "--json"]);
    expect(folder.exitCode).toBe(9);
    expect(folder.json.error.code).toBe("EXECUTION_REFUSED");
    expect(readdirSync(join(project, "a-folder"))).toEqual([]);
    const target = join(project, "elsewhere.txt");
    writeFileSync(target, "keep\n");
    Bun.spawnSync(["ln", "-s", target, join(project, "link.html")]);
    const link = cli(["report", runId, "--output", "link.html", "--json"]);
    expect(link.json.error.code).toBe("EXECUTION_REFUSED");
    expect(readFileSync(target, "utf8")).toBe("keep\n");
    const missing = cli(["report", "no-such-run", "--output", "x.html", "--json"]);
    expect(missing.json.error.code).toBe("RUN_NOT_FOUND");
    expect(existsSync(join(project, "x.html"))).toBe(false);
    const noOutput = cli(["report", runId, "--json"]);
    expect(noOutput.json.error.code).toBe("INVALID_ARGUMENTS");
  });
});

describe("flameox export", () => {
  const files: Record<string, string> = {
    speedscope: "out.speedscope.json",
    pprof: "out.pb.gz",
    collapsed: "out.collapsed.txt",
    chrome: "out.trace.json",
  };
  for (const [format, file] of Object.entries(files)) {
    test(`${format} re-imports into flameox with the same hotspots`, () => {
      const exported = cli(["export", runId, "--format", format, "--output", file, "--json"]);
      expect(exported.exitCode).toBe(0);
      expect(exported.json.path).toBe(join(project, file));
      if (format === "speedscope") expect(speedscopeSchemaViolations(JSON.parse(readFileSync(join(project, file), "utf8")))).toEqual([]);
      const imported = cli(["import", file, "--json"]);
      expect(imported.exitCode).toBe(0);
      expect(imported.json.evidence.status).toBe("available");
      const again = hotspotsOf(imported.json.run_id);
      expect(again.slice(0, 2).map((hotspot) => hotspot.function)).toEqual(["hot_function", "warm_function"]);
      // Keyed by function and file: py-spy may also sample an import's `<module>` in another file.
      const byName = new Map(again.map((hotspot) => [`${hotspot.function}\u0000${hotspot.file}`, hotspot]));
      for (const original of hotspots) {
        const copy = byName.get(`${original.function}\u0000${original.file}`);
        expect(copy).toBeDefined();
        expect(copy!.self_share).toBeCloseTo(original.self_share, 3);
        expect(copy!.total_share).toBeCloseTo(original.total_share, 3);
      }
    });
  }

  test("a recorded Chrome trace exports as its trace events and re-imports with the same hotspots; its report draws the timeline", () => {
    copyFileSync(join(repositoryRoot, "test", "fixtures", "formats", "py-spy.chrometrace.json"), join(project, "recorded.trace.json"));
    const original = cli(["import", "recorded.trace.json", "--json"]);
    expect(original.exitCode).toBe(0);
    const exported = cli(["export", original.json.run_id, "--format", "chrome", "--output", "recorded-again.json", "--json"]);
    expect(exported.json.source).toBe("trace_events");
    const imported = cli(["import", "recorded-again.json", "--json"]);
    expect(imported.json.evidence.limitations).toEqual([]);
    const before = hotspotsOf(original.json.run_id);
    const after = hotspotsOf(imported.json.run_id);
    expect(after.map((hotspot) => [hotspot.function, hotspot.self_share.toFixed(4)])).toEqual(
      before.map((hotspot) => [hotspot.function, hotspot.self_share.toFixed(4)]),
    );
    expect(before.slice(0, 2).map((hotspot) => hotspot.function)).toEqual(["hot_loop", "background"]);
    const report = cli(["report", original.json.run_id, "--output", "recorded.html", "--json"]);
    expect(report.json.sections).toContain("timeline");
  });

  test("an unknown format is a usage error and writes nothing", () => {
    const result = cli(["export", runId, "--format", "svg", "--output", "out.svg", "--json"]);
    expect(result.exitCode).toBe(2);
    expect(existsSync(join(project, "out.svg"))).toBe(false);
  });
});

describe("MCP: SVG flame graph and viewer plan; flameox open", () => {
  test("the flame graph resource is an <svg> naming the hot function in a <title>", async () => {
    expect(flamegraphUri).toBe(`flameox://runs/${runId}/flamegraph.svg`);
    const resource = await session.client.readResource({ uri: flamegraphUri });
    const content = resource.contents[0] as { mimeType: string; text: string };
    expect(content.mimeType).toBe("image/svg+xml");
    expect(content.text.startsWith("<svg")).toBe(true);
    expect(content.text).toMatch(/<title>hot_function \(work\.py:\d+\) — self /);
    const templates = await session.client.listResourceTemplates();
    expect(templates.resourceTemplates.map((template) => template.uriTemplate)).toContain("flameox://runs/{run_id}/flamegraph.svg");
    // A missing run is MCP's resource-not-found error carrying the domain code, not a successful read.
    const missing = await session.client.readResource({ uri: "flameox://runs/no-such-run/flamegraph.svg" }).catch((error) => error);
    expect(missing.code).toBe(-32002);
    expect(missing.data.error.code).toBe("RUN_NOT_FOUND");
  });

  test("get_native_viewer_plan names the report and the viewers with exact commands, read-only", async () => {
    const listed = await session.client.listTools();
    const tool = listed.tools.find((entry) => entry.name === "get_native_viewer_plan");
    expect(tool?.annotations?.readOnlyHint).toBe(true);
    const plan = await callTool(session, "get_native_viewer_plan", { run_or_artifact: runId });
    expect(plan.envelope.ok).toBe(true);
    const result = plan.envelope.result;
    expect(result.report_command).toEqual(["flameox", "report", runId, "--output", `flameox-${runId}-report.html`]);
    expect(result.viewers.map((viewer: any) => viewer.viewer)).toEqual(["report", "speedscope", "pprof", "perfetto", "firefox_profiler"]);
    const speedscope = result.viewers.find((viewer: any) => viewer.viewer === "speedscope");
    expect(speedscope.prepare_command).toEqual([
      "flameox",
      "export",
      runId,
      "--format",
      "speedscope",
      "--output",
      `flameox-${runId}.speedscope.json`,
    ]);
    expect(result.viewers.find((viewer: any) => viewer.viewer === "perfetto").prepare_command).toContain("chrome");
    // The plan's own commands work as written.
    const prepared = cli(speedscope.prepare_command.slice(1));
    expect(prepared.exitCode).toBe(0);
    expect(existsSync(join(project, speedscope.output))).toBe(true);
  });

  test("flameox open prints the plan; --launch starts the installed viewer, never with --json", async () => {
    const printed = cli(["open", runId]);
    expect(printed.exitCode).toBe(0);
    expect(printed.stdout).toContain(`flameox report ${runId} --output`);
    expect(printed.stdout).toContain("Perfetto UI");
    const refused = cli(["open", runId, "--launch", "--json"]);
    expect(refused.exitCode).toBe(9);
    expect(refused.json.error.code).toBe("EXECUTION_REFUSED");
    // A stand-in browser opener records what it was asked to open.
    const fakeBin = temporaryFolder("fake-opener");
    const marker = join(fakeBin, "opened.txt");
    writeFileSync(join(fakeBin, "xdg-open"), `#!/bin/sh\nprintf '%s\\n' "$@" > '${marker}'\n`);
    chmodSync(join(fakeBin, "xdg-open"), 0o755);
    const launched = cli(["open", runId, "--launch", "--viewer", "report", "--output", "opened.html"], {
      PATH: `${fakeBin}:${toolPath()}`,
    });
    expect(launched.stderr).toBe("");
    expect(launched.exitCode).toBe(0);
    // The opener runs detached from flameox; its line is complete once it ends with a newline.
    const opened = await waitFor(
      "the stand-in opener's record",
      () => existsSync(marker) && readFileSync(marker, "utf8").endsWith("\n") && readFileSync(marker, "utf8"),
    );
    expect(opened.trim()).toBe(join(project, "opened.html"));
    expect(readFileSync(join(project, "opened.html"), "utf8")).toContain("<!doctype html>");
  });
});
