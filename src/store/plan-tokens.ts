import { canonicalJson } from "../domain/canonical-json.ts";
import type { StateSource } from "./sqlite.ts";

/**
 * Issued plans: single-use tokens bound to an intent, for captures (plan_capture), experiments
 * (plan_experiment) and reductions (plan_reduction). Only the token's digest is stored; the caller
 * holds the token itself.
 */
export type PlanKind = "capture" | "experiment" | "reduction";

/** Why a token cannot be spent. */
export type PlanRefusal = "does not exist" | "was already consumed" | "has expired";

const planTables = {
  capture: { table: "capture_plans", hashDomain: "flameox-plan", labels: ["run_id", "request_digest"] },
  experiment: { table: "experiment_plans", hashDomain: "flameox-experiment-plan", labels: ["experiment_name"] },
  reduction: { table: "reduction_plans", hashDomain: "flameox-reduction-plan", labels: ["reduction_id", "original_artifact_id"] },
} as const;

/** The columns a kind of plan records beside its intent, for listing and audit. */
export type PlanLabels<Kind extends PlanKind> = Record<(typeof planTables)[Kind]["labels"][number], string>;

export type IssuedPlan<Kind extends PlanKind, Intent> = {
  token: string;
  intent: Intent;
  labels: PlanLabels<Kind>;
  createdAt: Date;
  expiresAtMs: number;
};

/** The plan's public id is a digest of the token, so logs and receipts never hold the token itself. */
export function publicPlanId(token: string): string {
  return `sha256:${new Bun.CryptoHasher("sha256").update(token).digest("hex")}`;
}

export class PlanTokenStore<Kind extends PlanKind, Intent> {
  constructor(
    private readonly state: StateSource,
    private readonly kind: Kind,
  ) {}

  /** The token's digest: what idempotency records and logs may hold instead of the token. */
  digest(token: string): string {
    return new Bun.CryptoHasher("sha256").update(`${planTables[this.kind].hashDomain}\u0000${token}`).digest("hex");
  }

  issue(plan: IssuedPlan<Kind, Intent>): void {
    const { table, labels } = planTables[this.kind];
    const columns = ["token_hash", "plan_id", ...labels, "bound_intent", "created_at", "expires_at_ms"];
    const values = [
      this.digest(plan.token),
      publicPlanId(plan.token),
      ...labels.map((label) => (plan.labels as Record<string, string>)[label]!),
      canonicalJson(plan.intent),
      plan.createdAt.toISOString(),
      plan.expiresAtMs,
    ];
    const state = this.state();
    state.write(() => {
      state.database.query(`INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`).run(...values);
    });
  }

  /**
   * Spends the token and returns its intent, or says why it cannot be spent. Atomic: the read and the
   * conditional update are one transaction, and the update only succeeds while consumed_at is still
   * empty, so of two racing consumers exactly one gets the intent.
   */
  consume(token: string, nowMs: number): { intent: Intent } | { refused: PlanRefusal; spent: Intent | null } {
    const { table } = planTables[this.kind];
    const hash = this.digest(token);
    const state = this.state();
    return state.write(() => {
      const row = state.database
        .query<{ bound_intent: string; expires_at_ms: number; consumed_at: string | null }, [string]>(
          `SELECT bound_intent, expires_at_ms, consumed_at FROM ${table} WHERE token_hash = ?`,
        )
        .get(hash);
      // A spent or expired plan still says what it was for, so the refusal can offer to plan it again.
      if (!row) return { refused: "does not exist" as const, spent: null };
      const spent = JSON.parse(row.bound_intent) as Intent;
      if (row.consumed_at) return { refused: "was already consumed" as const, spent };
      if (row.expires_at_ms <= nowMs) return { refused: "has expired" as const, spent };
      const changed = state.database
        .query(`UPDATE ${table} SET consumed_at = ? WHERE token_hash = ? AND consumed_at IS NULL`)
        .run(new Date(nowMs).toISOString(), hash).changes;
      if (changed !== 1) return { refused: "was already consumed" as const, spent };
      return { intent: spent };
    });
  }
}
