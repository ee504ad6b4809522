/**
 * The npm launcher, bundled as it ships, against a loopback HTTP server: installs and hands off,
 * refuses a checksum mismatch leaving nothing behind, and recovers from an interrupted download.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
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
// @ts-expect-error plain ESM without types
import { resolveTarget } from "../../../npm-launcher/src/launcher-lib.mjs";

const work = realpathSync(mkdtempSync(join(tmpdir(), "flameox-launcher-")));
const version = JSON.parse(readFileSync(join(repositoryRoot, "npm-launcher", "package.json"), "utf8")).version as string;
const target = `${process.platform === "win32" ? "windows" : process.platform}-${process.arch}`;
const assetName = `flameox-${target}`;
const argsFile = join(work, "handed-off-args");
// The "binary": records its arguments and environment marker, then exits 3 (or dies of SIGTERM).
const binary = `#!/bin/sh\nprintf '%s\\n' "$*" "$FLAMEOX_NPM_BOOTSTRAP" > ${JSON.stringify(argsFile)}\n[ "$1 $2" = "setup --die" ] && kill -TERM $$\nexit 3\n# padding ${"x".repeat(200_000)}\n`;
const bytes = new TextEncoder().encode(binary);
const digest = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");

type Mode = "normal" | "interrupt-once";
let mode: Mode = "normal";
let interrupted = false;
const rangeRequests: string[] = [];
let server: ReturnType<typeof Bun.serve>;

beforeAll(() => {
  const build = Bun.spawnSync([process.execPath, join(repositoryRoot, "npm-launcher", "build.ts")], { stderr: "pipe" });
  if (build.exitCode !== 0) throw new Error(build.stderr.toString());
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(request) {
      const url = new URL(request.url);
      if (url.pathname !== `/v${version}/${assetName}`) return new Response("not found", { status: 404 });
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

async function launch(root: string, args: string[], dataRoot: string) {
  // Async: the loopback server lives in this process and must keep answering.
  const child = Bun.spawn(["node", join(root, "dist", "launcher.mjs"), ...args], {
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: work,
      FLAMEOX_SETUP_DATA_ROOT: dataRoot,
      FLAMEOX_DOWNLOAD_BASE: `http://127.0.0.1:${server.port}`,
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

  test("--version, unknown commands, and unsupported targets", async () => {
    const root = packageWith(digest);
    expect((await launch(root, ["--version"], join(work, "d"))).stdout).toBe(`${version}\n`);
    expect((await launch(root, ["serve"], join(work, "d"))).code).toBe(2);
    expect(() => resolveTarget({ platform: "linux", arch: "x64", glibc: null })).toThrow(/musl/);
    expect(() => resolveTarget({ platform: "freebsd", arch: "x64", glibc: null })).toThrow(/no prebuilt binary/);
    expect(resolveTarget({ platform: "win32", arch: "x64" })).toBe("windows-x64");
    expect(resolveTarget({ platform: "linux", arch: "arm64", glibc: "2.36" })).toBe("linux-arm64");
  });
});
