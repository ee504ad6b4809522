import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { processStagingOwner, processStagingPath, removeOrphanedProcessStaging } from "../../../src/store/process-staging.ts";
import { initializeWorkspace } from "../../../src/store/workspace.ts";
import { waitFor } from "../../support/wait.ts";

function workspace() {
  const root = mkdtempSync(join(tmpdir(), "flameox-process-staging-"));
  const { workspace } = initializeWorkspace({ projectRoot: root, workspaceRoot: join(root, ".diagnostics") }, "");
  return { root, workspace, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

describe("process staging", () => {
  test("a folder belongs to its process while it lives, to nobody once it is killed, and is then removed", async () => {
    const { root, workspace: space, cleanup } = workspace();
    try {
      const mine = processStagingPath(space, "scratch");
      expect(processStagingOwner(space.root, mine.split("/").at(-2)!)).toBe("this_process");
      const script = join(root, "holder.ts");
      writeFileSync(
        script,
        `import { initializeWorkspace } from ${JSON.stringify(join(import.meta.dir, "../../../src/store/workspace.ts"))};
import { processStagingPath } from ${JSON.stringify(join(import.meta.dir, "../../../src/store/process-staging.ts"))};
const { workspace } = initializeWorkspace({ projectRoot: ${JSON.stringify(root)}, workspaceRoot: ${JSON.stringify(join(root, ".diagnostics"))} }, "");
console.log(processStagingPath(workspace, "work"));
setInterval(() => {}, 1000);
`,
      );
      const holder = Bun.spawn([process.execPath, script], { stdout: "pipe", stderr: "inherit" });
      const reader = holder.stdout.getReader();
      const line = new TextDecoder().decode((await reader.read()).value);
      const theirs = line.trim().split("/").at(-2)!;
      expect(processStagingOwner(space.root, theirs)).toBe("live");
      expect(removeOrphanedProcessStaging(space.root, theirs)).toBe(false);
      holder.kill("SIGKILL");
      await holder.exited;
      await waitFor("the killed holder's lock to be released", () => processStagingOwner(space.root, theirs) === "none");
      expect(removeOrphanedProcessStaging(space.root, theirs)).toBe(true);
      expect(existsSync(join(space.root, "staging", theirs))).toBe(false);
      // This process's own folder is never reclaimed from under it.
      expect(removeOrphanedProcessStaging(space.root, mine.split("/").at(-2)!)).toBe(false);
      expect(readdirSync(join(space.root, "staging"))).toEqual([mine.split("/").at(-2)!]);
    } finally {
      cleanup();
    }
  });
});
