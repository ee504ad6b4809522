/**
 * Nsight columns read as bigint keep every digit in the args JSON: graph ids, addresses and byte counts
 * past 2^53 would otherwise be rounded by Number().
 */
import { expect, test } from "bun:test";
import { boundedNsightArgs, kernelSpec } from "../../../../src/adapters/nsight/nsight-tables.ts";

const beyondDoubles = 2n ** 60n + 1n; // 1152921504606846977; Number() gives …976

test("a bigint past 2^53 is written with all its digits, at the top level, in arrays and nested", () => {
  const text = boundedNsightArgs({ graph_id: beyondDoubles, grid: [beyondDoubles, 2n], nested: { address: beyondDoubles } });
  expect(text).toBe('{"graph_id":1152921504606846977,"grid":[1152921504606846977,2],"nested":{"address":1152921504606846977}}');
  expect(text).not.toContain("1152921504606846976");
});

test("safe bigints and plain values are written as ordinary JSON", () => {
  expect(boundedNsightArgs({ bytes: 4096n, copy_kind: 1, name: "x", none: null })).toBe(
    '{"bytes":4096,"copy_kind":1,"name":"x","none":null}',
  );
});

test("a kernel row's graph id keeps its digits in the event args", () => {
  const available = new Set(["demangledName", "graphId", "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ"]);
  const built = kernelSpec.build(
    { demangledName: "k", graphId: beyondDoubles, gridX: 1n, gridY: 1n, gridZ: 1n, blockX: 128n, blockY: 1n, blockZ: 1n },
    available,
    new Map(),
  );
  expect(JSON.parse((built.args as string).replace(/(\d{16,})/g, '"$1"')).graph_id).toBe("1152921504606846977");
});
