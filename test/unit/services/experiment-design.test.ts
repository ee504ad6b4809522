import { expect, test } from "bun:test";
import * as v from "valibot";
import { ExperimentConfigSchema } from "../../../src/config/experiment-config-schema.ts";
import { realizeOrder } from "../../../src/analysis/experiment-design.ts";
import { parseOracleReceipt } from "../../../src/analysis/oracle-receipt.ts";

const experiment = (fields: Record<string, unknown>) => v.parse(ExperimentConfigSchema, { workload: "w", ...fields });

test("randomized complete blocks: every block holds each treatment once per coordinate, seeded", () => {
  const config = experiment({ factors: { size: [1, 2, 3], mode: ["a", "b"] }, treatment_factor: "size", blocks: 4, random_seed: 9 });
  const order = realizeOrder(config, config.factors!, "size", 9);
  expect(order).toHaveLength(24);
  expect(order.map((trial) => trial.ordinal)).toEqual([...Array(24).keys()].map((index) => index + 1));
  const blocks = new Map<string, string[]>();
  for (const trial of order) blocks.set(trial.block_id, [...(blocks.get(trial.block_id) ?? []), trial.treatment]);
  expect(blocks.size).toBe(8);
  for (const treatments of blocks.values()) expect([...treatments].sort()).toEqual(["1", "2", "3"]);
  expect(realizeOrder(config, config.factors!, "size", 9)).toEqual(order);
  expect(realizeOrder(config, config.factors!, "size", 10).map((trial) => trial.treatment)).not.toEqual(
    order.map((trial) => trial.treatment),
  );
  const fixed = experiment({ factors: { size: [1, 2, 3] }, treatment_factor: "size", blocks: 2, design: "fixed_order" });
  expect(realizeOrder(fixed, fixed.factors!, "size", 0).map((trial) => trial.treatment)).toEqual(["1", "2", "3", "1", "2", "3"]);
});

test("exclude rules and explicit combinations shape the design", () => {
  const config = experiment({
    factors: { size: [1, 2], mode: ["a", "b"] },
    treatment_factor: "size",
    blocks: 1,
    exclude: [{ mode: "b", size: 2 }],
  });
  expect(
    realizeOrder(config, config.factors!, "size", 0)
      .map((trial) => `${trial.factors.mode}${trial.factors.size}`)
      .sort(),
  ).toEqual(["a1", "a2", "b1"]);
});

test("warm-up rounds come first, shaped like blocks; one factor is the treatment; blocks default to 10", () => {
  const plain = experiment({ factors: { variant: ["a", "b"] }, blocks: 3, random_seed: 4 });
  const warmed = experiment({ factors: { variant: ["a", "b"] }, blocks: 3, warmups: 2, random_seed: 4 });
  const order = realizeOrder(warmed, warmed.factors!, "variant", 4);
  expect(order.map((trial) => `${trial.block_id}${trial.warmup ? "*" : ""}`)).toEqual([
    "w1*",
    "w1*",
    "w2*",
    "w2*",
    "b1",
    "b1",
    "b2",
    "b2",
    "b3",
    "b3",
  ]);
  expect(order.map((trial) => trial.ordinal)).toEqual([...Array(10).keys()].map((index) => index + 1));
  for (const round of ["w1", "w2"])
    expect(
      order
        .filter((trial) => trial.block_id === round)
        .map((trial) => trial.treatment)
        .sort(),
    ).toEqual(["a", "b"]);
  expect(realizeOrder(plain, plain.factors!, "variant", 4).every((trial) => !trial.warmup)).toBe(true);
  expect(warmed.treatment_factor).toBe("variant");
  expect(warmed.blocks).toBe(3);
  expect(experiment({ factors: { variant: ["a", "b"] } }).blocks).toBe(10);
});

test("oracle receipts are parsed strictly", () => {
  const encode = (value: unknown) => new TextEncoder().encode(typeof value === "string" ? value : JSON.stringify(value));
  expect(parseOracleReceipt(encode({ status: "pass", case_id: "c", observed: 3 }))).toEqual({
    receipt: { status: "pass", case_id: "c", reason: null, expected: null, observed: 3 },
  });
  expect("error" in parseOracleReceipt(encode({ status: "ok" }))).toBe(true);
  expect("error" in parseOracleReceipt(encode("[1]"))).toBe(true);
  expect("error" in parseOracleReceipt(encode("{not json"))).toBe(true);
  expect("error" in parseOracleReceipt(new Uint8Array(70 * 1024).fill(32))).toBe(true);
});
