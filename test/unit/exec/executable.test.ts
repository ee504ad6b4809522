import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sha256Hex } from "../../../src/domain/canonical-json.ts";
import { FlameoxError } from "../../../src/domain/errors.ts";
import { executableDigest, resolveExecutable } from "../../../src/exec/executable.ts";
import { scratchDirectory } from "./helpers.ts";

setDefaultTimeout(30_000);
const scratch = scratchDirectory();
afterAll(() => scratch.remove());

function refusedCode(action: () => unknown): string {
  try {
    action();
  } catch (error) {
    return error instanceof FlameoxError ? error.code : "other";
  }
  return "none";
}

describe("resolveExecutable", () => {
  const bin = join(scratch.path, "bin");
  mkdirSync(bin);
  const tool = join(bin, "tool");
  writeFileSync(tool, "#!/bin/sh\necho tool\n");
  chmodSync(tool, 0o755);
  const plain = join(bin, "plain");
  writeFileSync(plain, "data");
  chmodSync(plain, 0o644);

  test("finds a bare name on the given PATH and returns an absolute path", () => {
    expect(resolveExecutable("tool", `/nonexistent:${bin}`)).toBe(tool);
  });

  test("skips relative and empty PATH entries", () => {
    expect(refusedCode(() => resolveExecutable("tool", `bin::.`, scratch.path))).toBe("EXECUTION_REFUSED");
  });

  test("resolves a path with a separator against cwd", () => {
    expect(resolveExecutable("./bin/tool", undefined, scratch.path)).toBe(tool);
  });

  test("refuses non-executable files, directories, missing names and no PATH", () => {
    expect(refusedCode(() => resolveExecutable("plain", bin))).toBe("EXECUTION_REFUSED");
    expect(refusedCode(() => resolveExecutable(bin, undefined))).toBe("EXECUTION_REFUSED");
    expect(refusedCode(() => resolveExecutable("nope", bin))).toBe("EXECUTION_REFUSED");
    expect(refusedCode(() => resolveExecutable("tool", undefined))).toBe("EXECUTION_REFUSED");
    expect(refusedCode(() => resolveExecutable("", bin))).toBe("EXECUTION_REFUSED");
  });
});

describe("executableDigest", () => {
  test("is the sha256 of the file's bytes", async () => {
    const path = join(scratch.path, "digest-me");
    writeFileSync(path, "some bytes\n".repeat(100_000));
    expect(await executableDigest(path)).toBe(`sha256:${sha256Hex(readFileSync(path))}`);
  });
});

describe("executableDigest remembers only what cannot have changed unseen", () => {
  test("a file rewritten in place at the same size right after it was digested gets its new digest", async () => {
    const path = join(scratch.path, "rewritten");
    writeFileSync(path, "a".repeat(4096));
    const first = await executableDigest(path);
    writeFileSync(path, "b".repeat(4096));
    const second = await executableDigest(path);
    expect(second).not.toBe(first);
    expect(second).toBe(`sha256:${sha256Hex(readFileSync(path))}`);
  });

  test("a long-settled system executable asked twice is the sha256 of its bytes both times", async () => {
    const path = resolveExecutable("env", "/usr/bin:/bin");
    const expected = `sha256:${sha256Hex(readFileSync(path))}`;
    expect(await executableDigest(path)).toBe(expected);
    expect(await executableDigest(path)).toBe(expected);
  });
});

describe("executableDigest's cache shared by flameox processes", () => {
  const cache = join(scratch.path, "user-cache");
  const source = join(import.meta.dir, "../../../src/exec/executable.ts");
  /** The digest as a fresh process (no in-process memo) computes it with the cache folder in scratch. */
  function digestInNewProcess(path: string): string {
    const child = Bun.spawnSync(
      [
        process.execPath,
        "-e",
        `const { executableDigest } = await import(${JSON.stringify(source)}); console.log(await executableDigest(${JSON.stringify(path)}));`,
      ],
      { env: { ...process.env, FLAMEOX_CACHE_DIR: cache }, stdout: "pipe", stderr: "pipe" },
    );
    if (child.exitCode !== 0) throw new Error(child.stderr.toString());
    return child.stdout.toString().trim();
  }
  const entryOf = (path: string): string => join(cache, "executable-digests", sha256Hex(path));

  test("a settled executable's digest is recorded once and read back, not recomputed, while its identity holds", () => {
    const path = resolveExecutable("env", "/usr/bin:/bin");
    const expected = `sha256:${sha256Hex(readFileSync(path))}`;
    expect(digestInNewProcess(path)).toBe(expected);
    const [identity, digest] = readFileSync(entryOf(path), "utf8").split("\n");
    expect(digest).toBe(expected);
    // A stand-in digest under the same identity is what the next process answers: it did not hash.
    const standIn = `sha256:${"0".repeat(64)}`;
    writeFileSync(entryOf(path), `${identity}\n${standIn}\n`, { mode: 0o600 });
    expect(digestInNewProcess(path)).toBe(standIn);
  });

  test("an entry or a folder that others could write is not trusted: the file is hashed", () => {
    const path = resolveExecutable("env", "/usr/bin:/bin");
    const expected = `sha256:${sha256Hex(readFileSync(path))}`;
    rmSync(entryOf(path), { force: true });
    expect(digestInNewProcess(path)).toBe(expected);
    const [identity] = readFileSync(entryOf(path), "utf8").split("\n");
    const planted = `sha256:${"1".repeat(64)}`;
    writeFileSync(entryOf(path), `${identity}\n${planted}\n`, { mode: 0o600 });
    chmodSync(entryOf(path), 0o666);
    expect(digestInNewProcess(path)).toBe(expected);
    // The same entry made private again is read (so the refusal above came from the mode alone)...
    writeFileSync(entryOf(path), `${identity}\n${planted}\n`, { mode: 0o600 });
    chmodSync(entryOf(path), 0o600);
    expect(digestInNewProcess(path)).toBe(planted);
    // ...and refused again when its folder is open to others.
    chmodSync(join(cache, "executable-digests"), 0o777);
    try {
      expect(digestInNewProcess(path)).toBe(expected);
    } finally {
      chmodSync(join(cache, "executable-digests"), 0o700);
    }
  });

  test("an entry recorded under another identity (the file changed since) is ignored and the file hashed", () => {
    const path = resolveExecutable("env", "/usr/bin:/bin");
    mkdirSync(join(cache, "executable-digests"), { recursive: true });
    writeFileSync(entryOf(path), `1:2:3:4:5\nsha256:${"0".repeat(64)}\n`);
    expect(digestInNewProcess(path)).toBe(`sha256:${sha256Hex(readFileSync(path))}`);
  });

  test("a file that changed moments ago is hashed but not recorded", () => {
    const path = join(scratch.path, "fresh-tool");
    writeFileSync(path, "fresh bytes\n");
    expect(digestInNewProcess(path)).toBe(`sha256:${sha256Hex(readFileSync(path))}`);
    expect(() => readFileSync(entryOf(path))).toThrow();
  });
});
