import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CapabilitySetupStore } from "../../../src/store/capability-setup-store.ts";
import { ProviderEnvironments, type ProviderReceipt, userDataRoot } from "../../../src/store/provider-environments.ts";
import type { StateDatabase } from "../../../src/store/sqlite.ts";
import { initialStatus, operationIdentity, revise } from "../../../src/services/operation-status.ts";
import { freshState } from "./state.ts";
import { temporaryFolder } from "../../support/temporary-folders.ts";

const owner = { pid: 4242, start_time: "17", boot_id: "boot", operation_id: "op-abc" };

function environments(): ProviderEnvironments {
  return new ProviderEnvironments(temporaryFolder("providers"));
}

function receipt(verified: boolean): ProviderReceipt {
  return {
    schema_version: 1,
    provider: "py-spy",
    version: "0.4.3",
    requirements: ["py-spy==0.4.3"],
    distributions: { "py-spy": "0.4.3" },
    usage: "executable",
    base_python: { executable: "/usr/bin/python3", version: "3.11.2" },
    installed_at: "2026-01-01T00:00:00.000Z",
    operation_id: "op-abc",
    flameox_version: "test",
    verification: verified
      ? { verified_at: "2026-01-01T00:00:01.000Z", version_output: "py-spy 0.4.3", probe: "ok", permission_status: "granted" }
      : null,
  };
}

describe("provider environments", () => {
  test("the data folder is XDG_DATA_HOME/flameox when set, else the platform's per-user place", () => {
    expect(userDataRoot({ XDG_DATA_HOME: "/x/data", HOME: "/home/u" })).toBe("/x/data/flameox");
    if (process.platform === "linux") expect(userDataRoot({ HOME: "/home/u" })).toBe("/home/u/.local/share/flameox");
  });

  test("an environment appears at its version-addressed path by one rename; a second promotion finds it there", () => {
    const store = environments();
    const first = store.createStaging("py-spy", "0.4.3", owner);
    mkdirSync(join(first.environment, "bin"), { recursive: true });
    writeFileSync(join(first.environment, "bin", "py-spy"), "binary");
    store.writeReceipt(first.environment, receipt(false));
    expect(existsSync(store.environmentPath("py-spy", "0.4.3"))).toBe(false);
    expect(store.promote(first, "py-spy", "0.4.3")).toBe("promoted");
    expect(existsSync(join(store.environmentPath("py-spy", "0.4.3"), "bin", "py-spy"))).toBe(true);
    expect(store.receipt("py-spy", "0.4.3")?.verification).toBeNull();

    const second = store.createStaging("py-spy", "0.4.3", owner);
    mkdirSync(second.environment, { recursive: true });
    writeFileSync(join(second.environment, "marker"), "second");
    expect(store.promote(second, "py-spy", "0.4.3")).toBe("exists");
    expect(existsSync(join(store.environmentPath("py-spy", "0.4.3"), "marker"))).toBe(false);
    expect(store.discard(second)).toBe(true);
    expect(store.discard(first)).toBe(true);
    expect(store.stagingAreas()).toEqual([]);
  });

  test("a receipt is read only for its own provider and version; withdraw removes the environment at once", () => {
    const store = environments();
    const area = store.createStaging("py-spy", "0.4.3", owner);
    mkdirSync(area.environment, { recursive: true });
    store.writeReceipt(area.environment, receipt(true));
    store.promote(area, "py-spy", "0.4.3");
    expect(store.receipt("py-spy", "0.4.3")?.verification?.permission_status).toBe("granted");
    expect(store.receipt("py-spy", "0.4.4")).toBeNull();
    expect(store.withdraw("py-spy", "0.4.3")).toBe(true);
    expect(existsSync(store.environmentPath("py-spy", "0.4.3"))).toBe(false);
    expect(store.receipt("py-spy", "0.4.3")).toBeNull();
    store.discard(area);
    expect(readdirSync(join(store.root, ".staging"))).toEqual([]);
  });

  test("a sweep removes exactly the staging areas it is told are leftovers, reading each area's owner", () => {
    const store = environments();
    const mine = store.createStaging("pyperf", "2.11.0", { ...owner, operation_id: "op-live" });
    const dead = store.createStaging("pyperf", "2.11.0", { ...owner, operation_id: "op-dead" });
    expect(store.sweep((area) => area.owner?.operation_id === "op-dead")).toBe(true);
    expect(existsSync(dead.root)).toBe(false);
    expect(existsSync(mine.root)).toBe(true);
    expect(store.stagingAreas().map((area) => area.owner?.operation_id)).toEqual(["op-live"]);
  });
});

describe("capability setup operations", () => {
  const opened: StateDatabase[] = [];
  afterEach(() => {
    for (const state of opened.splice(0)) state.close();
  });

  test("the same key names the same operation; a revision moves on only from the revision it read", () => {
    const fresh = freshState("setup-ops");
    opened.push(fresh.state);
    const store = new CapabilitySetupStore(fresh.source);
    const identity = operationIdentity("workspace-1", "key-1");
    expect(identity).toEqual(operationIdentity("workspace-1", "key-1"));
    expect(operationIdentity("workspace-2", "key-1").operationId).not.toBe(identity.operationId);
    const status = initialStatus({
      ...identity,
      workspaceId: "workspace-1",
      adapters: ["pyperf", "py-spy", "pyperf"],
      now: "2026-01-01T00:00:00.000Z",
    });
    expect(status.request.adapters).toEqual(["py-spy", "pyperf"]);
    const processOwner = { pid: 1, start_time: "5", boot_id: "b" };
    expect(store.insert(status, processOwner).status.revision).toBe(1);
    // A second insert under the same id returns the stored one instead of replacing it.
    const other = { ...status, state: "failed" as const };
    expect(store.insert(other, { pid: 2, start_time: "6", boot_id: "b" }).owner.pid).toBe(1);
    const next = revise(status, "2026-01-01T00:00:01.000Z", (draft) => {
      draft.state = "running";
    });
    expect(next.revision).toBe(2);
    expect(store.update(next, 1)).toBe(true);
    // A writer that read revision 1 cannot overwrite revision 2.
    expect(store.update({ ...next, state: "failed", revision: 2 }, 1)).toBe(false);
    expect(store.find(identity.operationId)?.status.state).toBe("running");
    expect(store.latest()?.status.operation_id).toBe(identity.operationId);
    expect(store.count()).toBe(1);
    expect(store.find("op-missing")).toBeNull();
  });
});
