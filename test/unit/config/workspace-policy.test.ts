import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FlameoxError } from "../../../src/domain/errors.ts";
import {
  defaultWorkspacePolicy,
  parseWorkspacePolicy,
  readWorkspacePolicy,
  renderDefaultPolicy,
  type WorkspacePolicy,
} from "../../../src/config/workspace-policy.ts";

function refusal(action: () => unknown): FlameoxError {
  try {
    action();
  } catch (error) {
    if (error instanceof FlameoxError) return error;
    throw error;
  }
  throw new Error("expected a FlameoxError");
}

const defaults: WorkspacePolicy = {
  schema_version: 1,
  limits: {
    max_artifact_bytes: 2 * 1024 ** 3,
    max_output_bytes: 64 * 1024 ** 2,
    max_row_limit: 1000,
    default_row_limit: 100,
    plan_ttl_seconds: 300,
    max_parallel_captures: 2,
    cleanup_grace_seconds: 5,
  },
  sampling: { resource_sample_interval_ms: 100 },
  environment: { allowlist_additions: [] },
};

describe("workspace policy", () => {
  test("the rendered default parses to the defaults and is commented", () => {
    const text = renderDefaultPolicy();
    expect(parseWorkspacePolicy(text)).toEqual(defaults);
    expect(structuredClone(defaultWorkspacePolicy) as unknown).toEqual(defaults);
    expect(text.split("\n").filter((line) => line.startsWith("#")).length).toBeGreaterThan(5);
  });

  test("an empty file means the defaults; partial tables keep the other defaults", () => {
    expect(parseWorkspacePolicy("")).toEqual(defaults);
    const policy = parseWorkspacePolicy(
      '[limits]\nmax_row_limit = 50\ndefault_row_limit = 10\n[environment]\nallowlist_additions = ["OMP_NUM_THREADS"]\n',
    );
    expect(policy.limits).toEqual({ ...defaults.limits, max_row_limit: 50, default_row_limit: 10 });
    expect(policy.environment.allowlist_additions).toEqual(["OMP_NUM_THREADS"]);
  });

  test("unknown keys are WORKSPACE_INVALID naming the key", () => {
    const nested = refusal(() => parseWorkspacePolicy("[limits]\nmax_artefact_bytes = 1\n"));
    expect(nested.code).toBe("WORKSPACE_INVALID");
    expect(nested.message).toContain("limits.max_artefact_bytes");
    expect(nested.details.key).toBe("limits.max_artefact_bytes");
    const top = refusal(() => parseWorkspacePolicy("[capture]\nx = 1\n"));
    expect(top.message).toContain("unknown key capture");
  });

  test("bounds and cross-field rules", () => {
    expect(refusal(() => parseWorkspacePolicy("[limits]\nmax_parallel_captures = 0\n")).message).toContain("limits.max_parallel_captures");
    expect(refusal(() => parseWorkspacePolicy("[limits]\ndefault_row_limit = 2000\n")).message).toContain(
      "default_row_limit must be <= limits.max_row_limit",
    );
    expect(refusal(() => parseWorkspacePolicy('[environment]\nallowlist_additions = ["A-B"]\n')).message).toContain(
      "environment.allowlist_additions.0",
    );
    expect(refusal(() => parseWorkspacePolicy("[sampling]\nresource_sample_interval_ms = 1.5\n")).code).toBe("WORKSPACE_INVALID");
    expect(refusal(() => parseWorkspacePolicy("[limits]\nmax_row_limit = 1\nmax_row_limit = 2\n")).message).toContain(
      "TOML syntax error at line 3",
    );
  });

  describe("readWorkspacePolicy", () => {
    let root: string;
    beforeEach(async () => {
      root = await mkdtemp(join(tmpdir(), "flameox-policy-"));
    });
    afterEach(async () => {
      await rm(root, { recursive: true, force: true });
    });

    test("missing file → defaults; written default → defaults; non-UTF-8 refused", async () => {
      const path = join(root, "config.toml");
      expect(await readWorkspacePolicy(path)).toEqual(defaults);
      await writeFile(path, renderDefaultPolicy());
      expect(await readWorkspacePolicy(path)).toEqual(defaults);
      await writeFile(path, new Uint8Array([0x23, 0xc3, 0x28, 0x0a]));
      const error = await readWorkspacePolicy(path).then(
        () => null,
        (caught: unknown) => caught as FlameoxError,
      );
      expect(error?.code).toBe("WORKSPACE_INVALID");
      expect(error?.message).toContain("UTF-8");
    });
  });
});
