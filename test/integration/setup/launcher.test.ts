/**
 * The npm launcher, bundled as it ships (one file, ofetch inside), against a loopback HTTP server:
 * installs and hands off, refuses a checksum mismatch or an oversize body leaving nothing behind,
 * recovers from an interrupted download, retries 5xx with backoff, and names a remedy for 404/500.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";

setDefaultTimeout(120_000);
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repositoryRoot } from "./helpers.ts";
import { targets } from "../../../dist-targets/targets.ts";
import { backoffMs } from "../../../npm-launcher/src/download.ts";
import { resolveTarget, supportedTargets } from "../../../npm-launcher/src/target.ts";

const work = realpathSync(mkdtempSync(join(tmpdir(), "flameox-launcher-")));
const version = JSON.parse(readFileSync(join(repositoryRoot, "npm-launcher", "package.json"), "utf8")).version as string;
const target = `${process.platform === "win32" ? "windows" : process.platform}-${process.arch}`;
const assetName = `flameox-${target}`;
const argsFile = join(work, "handed-off-args");
// The "binary": records its arguments and environment marker, then exits 3 (or dies of SIGTERM).
const binary = `#!/bin/sh\nprintf '%s\\n' "$*" "$FLAMEOX_NPM_BOOTSTRAP" > ${JSON.stringify(argsFile)}\n[ "$1 $2" = "setup --die" ] && kill -TERM $$\nexit 3\n# padding ${"x".repeat(200_000)}\n`;
const bytes = new TextEncoder().encode(binary);
const digest = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");

type Mode = "normal" | "interrupt-once" | "oversize" | "missing" | "failing" | "flaky";
let mode: Mode = "normal";
let interrupted = false;
let failures = 0;
const rangeRequests: string[] = [];
const requestTimes: number[] = [];
let server: ReturnType<typeof Bun.serve>;

beforeAll(() => {
  const build = Bun.spawnSync([process.execPath, join(repositoryRoot, "npm-launcher", "build.ts")], { stderr: "pipe" });
  if (build.exitCode !== 0) throw new Error(build.stderr.toString());
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(request) {
      const url = new URL(request.url);
      requestTimes.push(performance.now());
      if (mode === "missing" || url.pathname !== `/v${version}/${assetName}`) return new Response("not found", { status: 404 });
      if (mode === "failing") return new Response("down", { status: 500 });
      if (mode === "flaky" && failures < 2) {
        failures += 1;
        return new Response("busy", { status: 503 });
      }
      if (mode === "oversize") {
        // No Content-Length: the size cap must stop the body itself.
        const stream = new ReadableStream({
          start(controller) {
            controller.enqueue(bytes);
            controller.enqueue(new Uint8Array(4096));
            controller.close();
          },
        });
        return new Response(stream);
      }
      const range = request.headers.get("range");
      if (range) {
        rangeRequests.push(range);
        const start = Number(/bytes=(\d+)-/.exec(range)![1]);
        return new Response(bytes.slice(start), {
          status: 206,
          headers: {
            "Content-Range": `bytes ${start}-${bytes.length - 1}/${bytes.length}`,
            "Content-Length": String(bytes.length - start),
          },
        });
      }
      if (mode === "interrupt-once" && !interrupted) {
        interrupted = true;
        const half = bytes.slice(0, Math.floor(bytes.length / 2));
        const stream = new ReadableStream({
          start(controller) {
            controller.enqueue(half);
            setTimeout(() => controller.close(), 50);
          },
        });
        return new Response(stream, { headers: { "Content-Length": String(bytes.length) } });
      }
      return new Response(bytes, { headers: { "Content-Length": String(bytes.length) } });
    },
  });
});
afterAll(() => {
  server?.stop(true);
  rmSync(work, { recursive: true, force: true });
});

function packageWith(sha256: string): string {
  const root = mkdtempSync(join(work, "pkg-"));
  cpSync(join(repositoryRoot, "npm-launcher", "package.json"), join(root, "package.json"));
  mkdirSync(join(root, "dist"));
  cpSync(join(repositoryRoot, "npm-launcher", "dist", "launcher.mjs"), join(root, "dist", "launcher.mjs"));
  chmodSync(join(root, "dist", "launcher.mjs"), 0o755);
  writeFileSync(
    join(root, "checksums.json"),
    JSON.stringify({ schema_version: 1, version, assets: { [target]: { name: assetName, sha256, size: bytes.length } } }),
  );
  return root;
}

async function launch(root: string, args: string[], dataRoot: string, extraEnv: Record<string, string> = {}) {
  // Async: the loopback server lives in this process and must keep answering.
  const child = Bun.spawn(["node", join(root, "dist", "launcher.mjs"), ...args], {
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: work,
      FLAMEOX_SETUP_DATA_ROOT: dataRoot,
      FLAMEOX_DOWNLOAD_BASE: `http://127.0.0.1:${server.port}`,
      FLAMEOX_DOWNLOAD_RETRY_DELAY_MS: "20",
      ...extraEnv,
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code: child.exitCode, signal: child.signalCode, stderr, stdout };
}

describe("npm launcher", () => {
  test("downloads, verifies, caches by hash and hands off to `<binary> setup …` with its exit code", async () => {
    const root = packageWith(digest);
    const data = join(work, "data-ok");
    const first = await launch(root, ["setup", "--claude", "--yes"], data);
    expect(first.code, first.stderr).toBe(3);
    expect(first.stderr).toContain(`Downloading flameox ${version}`);
    expect(readFileSync(argsFile, "utf8")).toBe("setup --claude --yes\n1\n");
    expect(readdirSync(join(data, "cache", "downloads"))).toEqual([digest]);
    const upgrade = await launch(root, ["upgrade"], data);
    expect(upgrade.code).toBe(3);
    expect(upgrade.stderr).not.toContain("Downloading");
    expect(readFileSync(argsFile, "utf8")).toBe("setup --refresh --yes\n1\n");
  });

  test("a child killed by a signal is re-raised, not turned into an exit code", async () => {
    const root = packageWith(digest);
    const result = await launch(root, ["setup", "--die"], join(work, "data-ok"));
    expect(result.signal).toBe("SIGTERM");
  });

  test("a checksum mismatch fails and leaves nothing behind", async () => {
    const root = packageWith("0".repeat(64));
    const data = join(work, "data-bad");
    const result = await launch(root, ["setup", "--claude"], data);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("Checksum mismatch");
    expect(readdirSync(join(data, "cache", "downloads"))).toEqual([]);
  });

  test("an interrupted download resumes with a Range request", async () => {
    mode = "interrupt-once";
    const root = packageWith(digest);
    const data = join(work, "data-resume");
    const result = await launch(root, ["setup", "--codex"], data);
    mode = "normal";
    expect(interrupted).toBe(true);
    expect(result.code, result.stderr).toBe(3);
    expect(result.stderr).toContain("Download interrupted");
    expect(rangeRequests.length).toBeGreaterThan(0);
    expect(readdirSync(join(data, "cache", "downloads"))).toEqual([digest]);
    expect(existsSync(join(data, "cache", "downloads", `${digest}.partial`))).toBe(false);
  });

  test("an oversize body is cut off and its partial file deleted", async () => {
    mode = "oversize";
    const data = join(work, "data-oversize");
    const result = await launch(packageWith(digest), ["setup", "--claude"], data);
    mode = "normal";
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`larger than the expected ${bytes.length} bytes`);
    expect(readdirSync(join(data, "cache", "downloads"))).toEqual([]);
  });

  test("404 and a persistent 500 fail with a remedy; 5xx is retried with growing delays", async () => {
    mode = "missing";
    const missing = await launch(packageWith(digest), ["setup"], join(work, "data-404"));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("HTTP 404");
    expect(missing.stderr).toContain("npx flameox@latest setup");
    expect(missing.stderr).toContain("--checksums SHA256SUMS");
    mode = "failing";
    requestTimes.length = 0;
    const failing = await launch(packageWith(digest), ["setup"], join(work, "data-500"));
    expect(failing.code).toBe(1);
    expect(failing.stderr).toContain("HTTP 500 after 5 tries");
    expect(failing.stderr).toContain("retry later");
    expect(requestTimes.length).toBe(5);
    // The pauses really grow: each gap is at least the scheduled delay (20, 40, 80, 160 ms with this
    // test's base). A timer never fires early, so these lower bounds hold however loaded the machine is.
    const gaps = requestTimes.slice(1).map((time, index) => time - requestTimes[index]!);
    gaps.forEach((gap, index) => expect(gap).toBeGreaterThanOrEqual(backoffMs({ FLAMEOX_DOWNLOAD_RETRY_DELAY_MS: "20" }, index) - 1));
    mode = "flaky";
    failures = 0;
    const flaky = await launch(packageWith(digest), ["setup", "--cursor"], join(work, "data-503"));
    mode = "normal";
    expect(flaky.code, flaky.stderr).toBe(3);
    expect(failures).toBe(2);
    // The schedule itself: exponential from the base, capped.
    expect([0, 1, 2, 3].map((attempt) => backoffMs({ FLAMEOX_DOWNLOAD_RETRY_DELAY_MS: "100" }, attempt))).toEqual([100, 200, 400, 800]);
    expect(backoffMs({}, 20)).toBe(30_000);
  });

  test("the bundle is one file that imports only Node's own modules", () => {
    const text = readFileSync(join(repositoryRoot, "npm-launcher", "dist", "launcher.mjs"), "utf8");
    const imports = [...text.matchAll(/^\s*import\s[^;]*?from\s*["']([^"']+)["']/gm)].map((match) => match[1]!);
    expect(imports.length).toBeGreaterThan(0);
    expect(imports.filter((specifier) => !specifier.startsWith("node:"))).toEqual([]);
    expect(text).not.toMatch(/\brequire\(["'](?!node:)/);
    expect(text).toContain("createFetch");
  });

  test("--version, unknown commands, and the platforms of the target table", async () => {
    const root = packageWith(digest);
    expect((await launch(root, ["--version"], join(work, "d"))).stdout).toBe(`${version}\n`);
    expect((await launch(root, ["serve"], join(work, "d"))).code).toBe(2);
    expect(supportedTargets).toEqual(targets.map((entry) => entry.id));
    expect(() => resolveTarget({ platform: "linux", arch: "x64", glibc: null })).toThrow(/musl/);
    expect(() => resolveTarget({ platform: "freebsd", arch: "x64", glibc: null })).toThrow(/no prebuilt binary/);
    expect(resolveTarget({ platform: "win32", arch: "x64" })).toBe("windows-x64");
    expect(resolveTarget({ platform: "linux", arch: "arm64", glibc: "2.36" })).toBe("linux-arm64");
  });
});
