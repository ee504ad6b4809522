import { afterEach, describe, expect, test } from "bun:test";
import { join, resolve } from "node:path";
import { PlanTokenStore, publicPlanId } from "../../../src/store/plan-tokens.ts";
import type { StateDatabase } from "../../../src/store/sqlite.ts";
import { freshState } from "./state.ts";

const opened: StateDatabase[] = [];
afterEach(() => {
  for (const state of opened.splice(0)) state.close();
});

function store(prefix: string) {
  const fresh = freshState(prefix);
  opened.push(fresh.state);
  return { ...fresh, capture: new PlanTokenStore<"capture", { run_id: string }>(fresh.source, "capture") };
}

const issued = (token: string, expiresAtMs: number) => ({
  token,
  intent: { run_id: "r-1" },
  labels: { run_id: "r-1", request_digest: "sha256:aa" },
  createdAt: new Date(0),
  expiresAtMs,
});

describe("plan tokens", () => {
  test("a token is spent once: the intent comes back once, then the plan is consumed", () => {
    const { capture } = store("once");
    capture.issue(issued("token-a", Date.now() + 60_000));
    expect(capture.consume("token-a", Date.now())).toEqual({ intent: { run_id: "r-1" } });
    expect(capture.consume("token-a", Date.now())).toEqual({ refused: "was already consumed", spent: { run_id: "r-1" } });
  });

  test("an unknown or expired token is refused, and only the token's digest is stored", () => {
    const { capture, state } = store("refusals");
    expect(capture.consume("never-issued", Date.now())).toEqual({ refused: "does not exist", spent: null });
    capture.issue(issued("token-b", 1_000));
    expect(capture.consume("token-b", 1_000)).toEqual({ refused: "has expired", spent: { run_id: "r-1" } });
    const row = state.database.query<{ token_hash: string; plan_id: string }, []>("SELECT token_hash, plan_id FROM capture_plans").get()!;
    expect(row.token_hash).toBe(capture.digest("token-b"));
    expect(row.plan_id).toBe(publicPlanId("token-b"));
    expect(JSON.stringify(row)).not.toContain("token-b");
  });

  test("capture and experiment plans are separate: a token of one kind is not a plan of the other", () => {
    const fresh = freshState("kinds");
    opened.push(fresh.state);
    const capture = new PlanTokenStore<"capture", { run_id: string }>(fresh.source, "capture");
    const experiment = new PlanTokenStore<"experiment", { experiment_name: string }>(fresh.source, "experiment");
    capture.issue(issued("shared-token", Date.now() + 60_000));
    expect(experiment.digest("shared-token")).not.toBe(capture.digest("shared-token"));
    expect(experiment.consume("shared-token", Date.now())).toEqual({ refused: "does not exist", spent: null });
    experiment.issue({
      token: "experiment-token",
      intent: { experiment_name: "sweep" },
      labels: { experiment_name: "sweep" },
      createdAt: new Date(),
      expiresAtMs: Date.now() + 60_000,
    });
    expect(experiment.consume("experiment-token", Date.now())).toEqual({ intent: { experiment_name: "sweep" } });
    expect(experiment.consume("experiment-token", Date.now())).toEqual({
      refused: "was already consumed",
      spent: { experiment_name: "sweep" },
    });
  });

  test("of several processes racing for one token, exactly one gets the intent", async () => {
    const { capture, path, state } = store("race");
    capture.issue(issued("raced", Date.now() + 600_000));
    state.close();
    opened.splice(opened.indexOf(state), 1);
    const module = resolve(import.meta.dir, "../../../src/store/plan-tokens.ts");
    const sqlite = resolve(import.meta.dir, "../../../src/store/sqlite.ts");
    const script = `
      const { PlanTokenStore } = await import(${JSON.stringify(module)});
      const { StateDatabase } = await import(${JSON.stringify(sqlite)});
      const state = StateDatabase.open(${JSON.stringify(path)}, { create: false, busyTimeoutMs: 60000 });
      const outcome = new PlanTokenStore(() => state, "capture").consume("raced", Date.now());
      process.stdout.write(JSON.stringify(outcome));
      state.close();`;
    const racers = Array.from({ length: 4 }, () =>
      Bun.spawn([process.execPath, "-e", script], { cwd: join(import.meta.dir, "..", "..", ".."), stdout: "pipe", stderr: "pipe" }),
    );
    const outcomes = await Promise.all(
      racers.map(async (racer) => {
        const [text, stderr, code] = await Promise.all([
          new Response(racer.stdout).text(),
          new Response(racer.stderr).text(),
          racer.exited,
        ]);
        expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
        return JSON.parse(text) as { intent?: unknown; refused?: string };
      }),
    );
    expect(outcomes.filter((outcome) => outcome.intent !== undefined)).toEqual([{ intent: { run_id: "r-1" } }]);
    expect(outcomes.filter((outcome) => outcome.refused === "was already consumed")).toHaveLength(3);
  }, 60_000);
});
