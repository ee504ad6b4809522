/**
 * What the server answers to lines it cannot use, over raw stdio against the compiled binary: every such
 * line gets a JSON-RPC error, and the server goes on serving the next request.
 */
import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { binaryPath, temporaryFolder, testEnvironment } from "../support/binary.ts";

// Each test starts the compiled binary and streams up to 12 MB into it.
setDefaultTimeout(60_000);

type RawServer = {
  send(line: string): Promise<void>;
  /** The next message on stdout (a JSON object, or an array for a batch reply). */
  next(): Promise<any>;
  close(): Promise<number>;
};

let server: RawServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function startServer(): RawServer {
  const child = Bun.spawn([binaryPath(), "mcp", "serve", "--project-root", temporaryFolder("json-rpc")], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "ignore",
    env: testEnvironment(),
  });
  const reader = child.stdout.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  const next = async (): Promise<any> => {
    for (;;) {
      const newline = buffer.indexOf("\n");
      if (newline !== -1) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        return JSON.parse(line);
      }
      const { value, done } = await reader.read();
      if (done) throw new Error("the server closed stdout");
      buffer += decoder.decode(value, { stream: true });
    }
  };
  return {
    async send(line) {
      child.stdin.write(`${line}\n`);
      await child.stdin.flush();
    },
    next,
    async close() {
      child.stdin.end();
      return child.exited;
    },
  };
}

async function initialized(): Promise<RawServer> {
  const raw = startServer();
  await raw.send(
    JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    }),
  );
  expect((await raw.next()).result.serverInfo.name).toBe("flameox");
  await raw.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
  return raw;
}

async function stillServing(raw: RawServer, id: number): Promise<void> {
  await raw.send(JSON.stringify({ jsonrpc: "2.0", id, method: "ping" }));
  expect(await raw.next()).toEqual({ jsonrpc: "2.0", id, result: {} });
}

test("invalid JSON is -32700 with id null, and the server keeps serving", async () => {
  server = await initialized();
  await server.send("{not json");
  const reply = await server.next();
  expect(reply.id).toBeNull();
  expect(reply.error.code).toBe(-32700);
  await stillServing(server, 1);
});

test("a batch is refused with -32600 for each request in it; an empty batch gets one error", async () => {
  server = await initialized();
  await server.send(
    JSON.stringify([
      { jsonrpc: "2.0", id: 11, method: "ping" },
      { jsonrpc: "2.0", id: 12, method: "ping" },
    ]),
  );
  const replies = await server.next();
  expect(replies.map((reply: any) => [reply.id, reply.error.code])).toEqual([
    [11, -32600],
    [12, -32600],
  ]);
  await server.send("[]");
  const empty = await server.next();
  expect([empty.id, empty.error.code]).toEqual([null, -32600]);
  await stillServing(server, 13);
});

test("tools/call without a name is -32602 naming the field, with no schema library dump", async () => {
  server = await initialized();
  await server.send(JSON.stringify({ jsonrpc: "2.0", id: 21, method: "tools/call", params: { arguments: {} } }));
  const reply = await server.next();
  expect(reply.id).toBe(21);
  expect(reply.error.code).toBe(-32602);
  expect(reply.error.message).toBe("Invalid params for tools/call: params.name: expected string.");
  expect(reply.error.data.fields).toEqual([{ field: "params.name", message: "expected string" }]);
  await stillServing(server, 22);
});

test("a 12 MB line is answered with -32600 for its id and the server keeps serving", async () => {
  server = await initialized();
  // The SDK's clients write the id last; the server reads it from the line's tail without buffering the line.
  const huge = `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"import_artifact","arguments":{"path":"${"a".repeat(12 * 1024 * 1024)}"}},"id":31}`;
  await server.send(huge);
  const reply = await server.next();
  expect(reply.id).toBe(31);
  expect(reply.error.code).toBe(-32600);
  expect(reply.error.data.received_bytes).toBe(huge.length);
  await stillServing(server, 32);
});
