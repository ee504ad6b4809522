import { expect, test } from "bun:test";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathScrubber } from "../../../src/mcp/agent-paths.ts";

test("the project root becomes project-relative, other roots become labels, look-alike paths stay", () => {
  const projectRoot = "/srv/projects/app";
  const scrub = pathScrubber({ projectRoot, workspaceRoot: "/srv/state/ws" });
  expect(
    scrub({
      message: "Read /srv/projects/app.",
      cwd: "/srv/projects/app/sub/dir",
      list: ["/srv/projects/app", "/srv/projects/app2/x", "/srv/state/ws/staging/a"],
      temporary: join(tmpdir(), "trace.json"),
      count: 3,
    }),
  ).toEqual({
    message: "Read ..",
    cwd: "sub/dir",
    list: [".", "/srv/projects/app2/x", "<workspace>/staging/a"],
    temporary: "<temp>/trace.json",
    count: 3,
  });
});

test("a project inside the temporary folder is relative, not <temp>", () => {
  const projectRoot = join(tmpdir(), "flameox-project");
  const scrub = pathScrubber({ projectRoot, workspaceRoot: join(projectRoot, ".diagnostics") });
  expect(scrub(`${projectRoot}/.diagnostics/staging and ${tmpdir()}/other`)).toBe(".diagnostics/staging and <temp>/other");
});
