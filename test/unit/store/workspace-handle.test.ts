import { expect, test } from "bun:test";
import { join } from "node:path";
import { FlameoxError } from "../../../src/domain/errors.ts";
import { initializeWorkspace } from "../../../src/store/workspace.ts";
import { WorkspaceHandle } from "../../../src/store/workspace-handle.ts";
import { temporaryFolder } from "../../support/temporary-folders.ts";

test("the workspace opens on first use: before initialization every use is WORKSPACE_NOT_FOUND, after it the same handle works", () => {
  const project = temporaryFolder("handle");
  const handle = new WorkspaceHandle({ projectRoot: project });
  expect(handle.workspaceRoot).toBe(join(project, ".diagnostics"));
  expect(handle.exists()).toBe(false);
  const missing = (() => {
    try {
      handle.state();
    } catch (error) {
      return error as FlameoxError;
    }
  })();
  expect(missing).toBeInstanceOf(FlameoxError);
  expect(missing?.code).toBe("WORKSPACE_NOT_FOUND");
  expect(missing?.recovery.next_tool).toBe("initialize_workspace");
  const { workspace } = initializeWorkspace(handle.location, "schema_version = 1\n");
  handle.adopt(workspace);
  expect(handle.exists()).toBe(true);
  expect(handle.open()).toBe(workspace);
  expect(handle.state().database.query<{ n: number }, []>("SELECT count(*) AS n FROM corpus_commits").get()!.n).toBe(1);
  handle.close();
  const reopened = handle.open();
  expect(reopened).not.toBe(workspace);
  expect(reopened.id).toBe(workspace.id);
  handle.close();
});
