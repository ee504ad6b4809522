import { expect, test } from "bun:test";
import { join } from "node:path";
import { userCacheFolderOn } from "../../../src/domain/user-cache.ts";

const linux = { platform: "linux" as const, environment: {}, homeDirectory: "/home/someone", temporaryDirectory: "/tmp" };

test("FLAMEOX_CACHE_DIR wins on every platform", () => {
  for (const platform of ["linux", "darwin", "win32"] as const)
    expect(userCacheFolderOn({ ...linux, platform, environment: { FLAMEOX_CACHE_DIR: "/c", XDG_CACHE_HOME: "/x" } }, "duckdb")).toBe(
      join("/c", "duckdb"),
    );
});

test("each platform's own cache folder otherwise", () => {
  expect(userCacheFolderOn(linux, "duckdb")).toBe(join("/home/someone", ".cache", "flameox", "duckdb"));
  expect(userCacheFolderOn({ ...linux, environment: { XDG_CACHE_HOME: "/x" } }, "d")).toBe(join("/x", "flameox", "d"));
  expect(userCacheFolderOn({ ...linux, homeDirectory: "" }, "d")).toBe(join("/tmp", "flameox-cache", "flameox", "d"));
  expect(userCacheFolderOn({ ...linux, platform: "darwin" }, "d")).toBe(join("/home/someone", "Library", "Caches", "flameox", "d"));
  expect(userCacheFolderOn({ ...linux, platform: "win32", environment: { LOCALAPPDATA: "/l" } }, "d")).toBe(
    join("/l", "flameox", "cache", "d"),
  );
});
