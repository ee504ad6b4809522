import { expect, test } from "bun:test";
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { archiveDirectory } from "../../../src/store/directory-archive.ts";
import { FlameoxError } from "../../../src/domain/errors.ts";
import { repositoryRoot, temporaryFolder } from "../../support/binary.ts";

const fixture = join(repositoryRoot, "test", "fixtures", "xctrace", "sample.trace");
const limits = { maxBytes: 1 << 20, maxEntries: 1000 };

function archive(folder: string, target: string): Buffer {
  archiveDirectory(folder, "sample.trace", target, limits);
  return readFileSync(target);
}

test("the same tree gives the same bytes whatever its times and place; system tar reads it back identical", () => {
  const scratch = temporaryFolder("archive");
  const copy = join(scratch, "copy.trace");
  cpSync(fixture, copy, { recursive: true });
  utimesSync(join(copy, "open.creq"), new Date(0), new Date(1_000_000_000_000));
  const first = archive(fixture, join(scratch, "a.tar"));
  const second = archive(copy, join(scratch, "b.tar"));
  expect(second.equals(first)).toBe(true);
  const listing = Bun.spawnSync(["tar", "-tvf", join(scratch, "a.tar")])
    .stdout.toString()
    .trim()
    .split("\n");
  expect(listing.map((line) => line.split(/\s+/).slice(-1)[0])).toEqual([
    "sample.trace/",
    "sample.trace/Trace1.run/",
    "sample.trace/Trace1.run/RunIssues.storedata",
    "sample.trace/corespace/",
    "sample.trace/corespace/currentRun/",
    "sample.trace/corespace/currentRun/core/",
    "sample.trace/corespace/currentRun/core/stores/",
    "sample.trace/corespace/currentRun/core/stores/indexed-store-0",
    "sample.trace/form.template",
    "sample.trace/open.creq",
  ]);
  for (const line of listing) expect(line).toContain("0/0");
  const out = join(scratch, "out");
  mkdirSync(out);
  expect(Bun.spawnSync(["tar", "-xf", join(scratch, "a.tar"), "-C", out]).exitCode).toBe(0);
  expect(Bun.spawnSync(["diff", "-r", fixture, join(out, "sample.trace")]).exitCode).toBe(0);
});

test("long paths travel in a PAX header, links are kept as links, and a changed file changes the bytes", () => {
  const scratch = temporaryFolder("archive-long");
  const folder = join(scratch, "long.trace");
  const deep = join(folder, "d".repeat(120));
  mkdirSync(deep, { recursive: true });
  writeFileSync(join(deep, "n".repeat(110)), "deep\n");
  symlinkSync("../outside", join(folder, "link"));
  const before = archive(folder, join(scratch, "a.tar"));
  const out = join(scratch, "out");
  mkdirSync(out);
  expect(Bun.spawnSync(["tar", "-xf", join(scratch, "a.tar"), "-C", out]).exitCode).toBe(0);
  expect(readFileSync(join(out, "sample.trace", "d".repeat(120), "n".repeat(110)), "utf8")).toBe("deep\n");
  expect(
    Bun.spawnSync(["readlink", join(out, "sample.trace", "link")])
      .stdout.toString()
      .trim(),
  ).toBe("../outside");
  writeFileSync(join(deep, "n".repeat(110)), "Deep\n");
  expect(archive(folder, join(scratch, "b.tar")).equals(before)).toBe(false);
});

test("over the byte or entry bound nothing is half-written: a typed refusal before the archive is opened", () => {
  const scratch = temporaryFolder("archive-bounds");
  for (const bound of [
    { maxBytes: 10, maxEntries: 1000 },
    { maxBytes: 1 << 20, maxEntries: 3 },
  ]) {
    let error: unknown;
    try {
      archiveDirectory(fixture, "sample.trace", join(scratch, `${bound.maxBytes}.tar`), bound);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(FlameoxError);
    expect(["ARTIFACT_TOO_LARGE", "EXECUTION_REFUSED"]).toContain((error as FlameoxError).code);
    expect(existsSync(join(scratch, `${bound.maxBytes}.tar`))).toBe(false);
  }
});
