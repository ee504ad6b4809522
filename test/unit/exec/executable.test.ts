import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sha256Hex } from "../../../src/domain/canonical-json.ts";
import { FlameoxError } from "../../../src/domain/errors.ts";
import { executableDigest, resolveExecutable } from "../../../src/exec/executable.ts";
import { scratchDirectory } from "./helpers.ts";

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
