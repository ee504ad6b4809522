/**
 * Opens a generated report in Debian's Chromium (through playwright-core) from file://, offline, and
 * drives it like a person: hover, search, click to zoom, reset. A screenshot is kept under
 * .test-output/report/ as the test's artifact.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { renderReport } from "../../../../src/analysis/report/html.ts";
import { syntheticReportInput } from "../../../fixtures/report/report-input.ts";

setDefaultTimeout(90_000);

const chromiumPath = "/usr/bin/chromium";
const root = resolve(import.meta.dir, "../../../..");
const outputDirectory = join(root, ".test-output", "report");
const reportPath = join(outputDirectory, "report.html");
const screenshotPath = join(outputDirectory, "report.png");

type LaidOutFrame = {
  index: number;
  parent: number;
  name: string;
  x: number;
  y: number;
  width: number;
  height: number;
  depth: number;
  highlighted: boolean;
  dimmed: boolean;
  delta_share: number | null;
};

let context: BrowserContext;
let page: Page;
let userDataDirectory: string;
const consoleErrors: string[] = [];
const networkRequests: string[] = [];

async function frames(graph = "profile"): Promise<LaidOutFrame[]> {
  return (await page.evaluate(`window.flameox.frames(${JSON.stringify(graph)})`)) as LaidOutFrame[];
}

async function nextPaint(): Promise<void> {
  await page.evaluate("new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done(true))))");
}

async function pixelAt(testId: string, x: number, y: number): Promise<number[]> {
  // Page code is passed as text: the test program is typed without the DOM library.
  const script = `(() => {
    const canvas = document.querySelector('[data-testid="${testId}"]');
    const ratio = canvas.width / canvas.clientWidth;
    const data = canvas.getContext("2d").getImageData(Math.round(${x} * ratio), Math.round(${y} * ratio), 1, 1).data;
    return [data[0], data[1], data[2]];
  })()`;
  return (await page.evaluate(script)) as number[];
}

function only(list: LaidOutFrame[], name: string): LaidOutFrame {
  const found = list.filter((frame) => frame.name === name);
  expect(found.length).toBe(1);
  return found[0] as LaidOutFrame;
}

beforeAll(async () => {
  if (!existsSync(chromiumPath)) {
    throw new Error(`Chromium is missing at ${chromiumPath}; run 'node scripts/ensure.mjs --all' (installs Debian's chromium).`);
  }
  mkdirSync(outputDirectory, { recursive: true });
  writeFileSync(reportPath, renderReport(syntheticReportInput()));
  const { chromium } = await import("playwright-core");
  userDataDirectory = mkdtempSync(join(tmpdir(), "flameox-report-browser-"));
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
  await page.goto(`file://${reportPath}`);
  await page.waitForFunction("window.flameox !== undefined && window.flameox.ready === true");
  await nextPaint();
});

afterAll(async () => {
  await context?.close();
  if (userDataDirectory) rmSync(userDataDirectory, { recursive: true, force: true });
});

test("the hot function's frame is the widest under its parent", async () => {
  const laidOut = await frames();
  const hot = only(laidOut, "hot_path");
  const siblings = laidOut.filter((frame) => frame.parent === hot.parent && frame.index !== hot.index);
  expect(siblings.length).toBeGreaterThan(0);
  for (const sibling of siblings) expect(hot.width).toBeGreaterThan(sibling.width);
  const canvasWidth = (await page.evaluate(`document.querySelector('[data-testid="flamegraph-canvas"]').clientWidth`)) as number;
  // hot_path is 270 of the candidate's 450 ms.
  expect(hot.width / canvasWidth).toBeCloseTo(0.6, 3);
});

test("hovering shows self, total and share", async () => {
  const hot = only(await frames(), "hot_path");
  const box = await page.getByTestId("flamegraph-canvas").boundingBox();
  if (!box) throw new Error("canvas not laid out");
  await page.mouse.move(box.x + hot.x + hot.width / 2, box.y + hot.y + hot.height / 2);
  const tooltip = page.locator("#profile .tooltip");
  await tooltip.waitFor({ state: "visible" });
  const text = await tooltip.textContent();
  expect(text).toContain("hot_path");
  expect(text).toContain("app/hot.py:5");
  expect(text).toContain("self 30.00 ms");
  expect(text).toContain("total 270 ms");
  expect(text).toContain("share 60.00%");
  await page.mouse.move(0, 0);
});

test("search highlights the matching frame", async () => {
  await page.getByTestId("flamegraph-search").fill("hot_path");
  await nextPaint();
  const laidOut = await frames();
  const hot = only(laidOut, "hot_path");
  expect(hot.highlighted).toBe(true);
  expect(laidOut.filter((frame) => frame.highlighted).map((frame) => frame.name)).toEqual(["hot_path"]);
  expect(await page.getByTestId("flamegraph-status").textContent()).toContain("matched 1 frames, 60.00% of total");
  // The canvas really painted it in the highlight colour.
  expect(await pixelAt("flamegraph-canvas", hot.x + 2, hot.y + 2)).toEqual([214, 51, 255]);
  await page.getByTestId("flamegraph-search").fill("");
  await nextPaint();
  expect((await frames()).some((frame) => frame.highlighted)).toBe(false);
});

test("clicking a frame zooms it to the full width; reset restores the view", async () => {
  const before = only(await frames(), "hot_path");
  const box = await page.getByTestId("flamegraph-canvas").boundingBox();
  if (!box) throw new Error("canvas not laid out");
  await page.mouse.click(box.x + before.x + before.width / 2, box.y + before.y + before.height / 2);
  await nextPaint();
  const zoomed = await frames();
  const hot = only(zoomed, "hot_path");
  expect(hot.x).toBeCloseTo(0, 6);
  expect(hot.width).toBeCloseTo(box.width, 0);
  // Its callers stay visible above it, dimmed, and its callees now share its full width.
  expect(only(zoomed, "main").dimmed).toBe(true);
  expect(zoomed.some((frame) => frame.name === "parse_input")).toBe(false);
  const computeA = only(zoomed, "compute_a");
  expect(computeA.width / hot.width).toBeCloseTo(180 / 270, 3);
  await page.getByTestId("flamegraph-reset").click();
  await nextPaint();
  expect(only(await frames(), "hot_path").width).toBeCloseTo(before.width, 6);
});

test("the differential graph colours gained time red and lost time blue", async () => {
  const laidOut = await frames("differential");
  const gained = only(laidOut, "compute_a");
  const lost = only(laidOut, "parse_input");
  expect(gained.delta_share).toBeGreaterThan(0);
  expect(lost.delta_share).toBeLessThan(0);
  const red = await pixelAt("differential-flamegraph-canvas", gained.x + 2, gained.y + 2);
  const blue = await pixelAt("differential-flamegraph-canvas", lost.x + 2, lost.y + 2);
  expect(red[0]).toBeGreaterThan(red[2] as number);
  expect(blue[2]).toBeGreaterThan(blue[0] as number);
});

test("the timeline draws one lane per thread and the comparison draws its interval", async () => {
  const lanes = (await page.evaluate("window.flameox.timeline.lanes()")) as Array<{ label: string }>;
  expect(lanes.map((lane) => lane.label).sort()).toEqual(["pid 100 · tid 1", "pid 100 · tid 2", "pid 100 · tid 3"]);
  expect(await page.getByTestId("comparison-ci").isVisible()).toBe(true);
  expect(await page.getByTestId("comparison-decision").textContent()).toBe("regression");
  expect(await page.getByTestId("slowest-tests").textContent()).toContain("tests/test_api.py::test_slow");
  expect(await page.getByTestId("top-allocators").textContent()).toContain("50.0 MiB");
});

test("stays offline and error-free; a screenshot is kept", async () => {
  await page.screenshot({ path: screenshotPath, fullPage: true });
  expect(statSync(screenshotPath).size).toBeGreaterThan(10_000);
  expect(networkRequests).toEqual([]);
  expect(consoleErrors).toEqual([]);
});
