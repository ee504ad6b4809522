import { expect, test } from "bun:test";
import { PassThrough } from "node:stream";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { idOfTruncatedLine, LineDelimitedTransport } from "../../../src/mcp/stdio-transport.ts";

/** A transport over in-memory streams; what it delivers and what it writes back are collected. */
async function harness(maxLineBytes = 64) {
  const input = new PassThrough();
  const output = new PassThrough();
  const written: unknown[] = [];
  output.on("data", (chunk: Buffer) => {
    for (const line of chunk.toString().split("\n")) if (line !== "") written.push(JSON.parse(line));
  });
  const transport = new LineDelimitedTransport(input, output, maxLineBytes);
  const delivered: JSONRPCMessage[] = [];
  transport.onmessage = (message) => delivered.push(message);
  await transport.start();
  const feed = async (...chunks: string[]) => {
    for (const chunk of chunks) input.write(chunk);
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { feed, written, delivered, transport };
}

test("messages split across chunks and several per chunk are delivered in order", async () => {
  const { feed, delivered, written } = await harness();
  await feed('{"jsonrpc":"2.0","id":1,"me', 'thod":"ping"}\n{"jsonrpc":"2.0","method":"notifications/initialized"}\r\n\n');
  expect(delivered).toEqual([
    { jsonrpc: "2.0", id: 1, method: "ping" },
    { jsonrpc: "2.0", method: "notifications/initialized" },
  ]);
  expect(written).toEqual([]);
});

test("a line over the limit is discarded as it streams and answered for its id; the next line is delivered", async () => {
  const { feed, delivered, written } = await harness(64);
  await feed('{"jsonrpc":"2.0","method":"ping","params":{"x":"', "y".repeat(100), "y".repeat(100), '"},"id":"big"}\n');
  await feed('{"jsonrpc":"2.0","id":2,"method":"ping"}\n');
  expect(written).toHaveLength(1);
  expect(written[0]).toMatchObject({ id: "big", error: { code: -32600, data: { max_message_bytes: 64 } } });
  expect(delivered).toEqual([{ jsonrpc: "2.0", id: 2, method: "ping" }]);
});

test("not JSON, not JSON-RPC, and a batch are each answered; none is delivered", async () => {
  const { feed, delivered, written } = await harness(1000);
  await feed("{oops\n", '{"id":4,"hello":true}\n', '[{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","method":"x"}]\n');
  expect(delivered).toEqual([]);
  expect(written).toMatchObject([
    { id: null, error: { code: -32700 } },
    { id: 4, error: { code: -32600 } },
    [{ id: 5, error: { code: -32600 } }],
  ]);
});

test("a request whose params do not fit its method is -32602 naming the fields", async () => {
  const { feed, delivered, written } = await harness(1000);
  await feed('{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{"uri":5}}\n');
  expect(delivered).toEqual([]);
  expect(written).toEqual([
    {
      jsonrpc: "2.0",
      id: 6,
      error: {
        code: -32602,
        message: "Invalid params for resources/read: params.uri: expected string.",
        data: { fields: [{ field: "params.uri", message: "expected string" }] },
      },
    },
  ]);
});

test("the id of an over-long line is read only where clients put it, first or last", () => {
  expect(idOfTruncatedLine('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"x":"aaa', 'aaa"}}')).toBe(7);
  expect(idOfTruncatedLine('{"method":"tools/call","params":{"x":"aaa', 'aaa"}},"jsonrpc":"2.0","id":"r-8"}')).toBe("r-8");
  // An "id" nested in the params is not the request's id.
  expect(idOfTruncatedLine('{"method":"tools/call","params":{"id":9,"x":"aaa', 'aaa"}}}')).toBeNull();
});
