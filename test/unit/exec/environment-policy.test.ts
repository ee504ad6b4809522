import { describe, expect, test } from "bun:test";
import { buildChildEnvironment, refusedEnvironmentReason } from "../../../src/exec/environment-policy.ts";

describe("environment policy", () => {
  test("credential words must stand alone between underscores", () => {
    expect(refusedEnvironmentReason("API_KEY")).not.toBeNull();
    expect(refusedEnvironmentReason("HF_TOKEN")).not.toBeNull();
    expect(refusedEnvironmentReason("SESSION_COOKIE")).not.toBeNull();
    expect(refusedEnvironmentReason("keyboard")).toBeNull();
    expect(refusedEnvironmentReason("MONKEY_COUNT")).toBeNull();
    expect(refusedEnvironmentReason("OMP_NUM_THREADS")).toBeNull();
    expect(refusedEnvironmentReason("CUDA_VISIBLE_DEVICES")).toBeNull();
  });

  test("an inherit list cannot smuggle refused names in", () => {
    const built = buildChildEnvironment({
      parentEnvironment: { LD_PRELOAD: "/x.so", PATH: "/usr/bin", AWS_SECRET_ACCESS_KEY: "s" },
      inherit: ["LD_*", "PATH", "AWS_*"],
    });
    expect(built.environment).toEqual({ PATH: "/usr/bin" });
  });

  test("credential-like names are never recorded, even when asked", () => {
    const built = buildChildEnvironment({
      parentEnvironment: {},
      environment: { OMP_NUM_THREADS: "4" },
      trustedEnvironment: { FLAMEOX_RUN_TOKEN: "t" },
      record: ["OMP_NUM_THREADS", "FLAMEOX_*"],
    });
    expect(built.environment.FLAMEOX_RUN_TOKEN).toBe("t");
    expect(built.recorded.values).toEqual({ OMP_NUM_THREADS: "4" });
    expect(built.recorded.names).toEqual(["FLAMEOX_RUN_TOKEN", "OMP_NUM_THREADS"]);
  });
});
