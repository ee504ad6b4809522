import type { Readable, Writable } from "node:stream";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, JSONRPCMessageSchema, type JSONRPCMessage, type RequestId } from "@modelcontextprotocol/sdk/types.js";
import { requestParameterProblem } from "./request-parameters.ts";

/**
 * Newline-delimited JSON-RPC over stdio that answers every line it cannot use instead of dropping it or
 * closing: invalid JSON is -32700, a batch or a non-message is -32600, a request whose parameters do not
 * fit its method is -32602 with a short field list, and a line longer than `maxLineBytes` is discarded as
 * it streams in (never buffered whole) and answered with -32600. The SDK's own stdio transport closes the
 * connection on an over-long line, which ends the server without a word.
 */
export const defaultMaxLineBytes = 4 * 1024 * 1024;

/** Bytes of an over-long line kept at each end, to find the request id it carried. */
const edgeBytes = 512;

type ErrorReply = { id: RequestId | null; code: number; message: string; data?: Record<string, unknown> };

export class LineDelimitedTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private chunks: Buffer[] = [];
  private bufferedBytes = 0;
  /** Set while an over-long line streams past: its length so far and its two ends. */
  private overflow: { bytes: number; head: Buffer; tail: Buffer } | null = null;
  private closed = false;

  constructor(
    private readonly input: Readable = process.stdin,
    private readonly output: Writable = process.stdout,
    private readonly maxLineBytes = defaultMaxLineBytes,
  ) {}

  async start(): Promise<void> {
    this.input.on("data", this.onData);
    this.input.on("error", this.onInputError);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.off("data", this.onData);
    this.input.off("error", this.onInputError);
    if (this.input.listenerCount("data") === 0) this.input.pause();
    this.chunks = [];
    this.onclose?.();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.output.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.output.once("drain", () => resolve());
    });
  }

  private readonly onInputError = (error: Error) => this.onerror?.(error);

  private readonly onData = (chunk: Buffer | string) => {
    let data = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    for (let newline = data.indexOf(10); newline !== -1; newline = data.indexOf(10)) {
      this.take(data.subarray(0, newline));
      this.endLine();
      data = data.subarray(newline + 1);
    }
    if (data.length > 0) this.take(data);
  };

  /** Adds part of the current line, switching to discarding once it passes the limit. */
  private take(part: Buffer): void {
    if (part.length === 0) return;
    if (!this.overflow && this.bufferedBytes + part.length <= this.maxLineBytes) {
      this.chunks.push(part);
      this.bufferedBytes += part.length;
      return;
    }
    if (!this.overflow) {
      const start = Buffer.concat([...this.chunks, part]);
      this.overflow = { bytes: 0, head: Buffer.from(start.subarray(0, edgeBytes)), tail: Buffer.alloc(0) };
      this.chunks = [];
      this.bufferedBytes = 0;
      part = start;
    }
    this.overflow.bytes += part.length;
    this.overflow.tail = Buffer.from(Buffer.concat([this.overflow.tail, part.subarray(-edgeBytes)]).subarray(-edgeBytes));
  }

  private endLine(): void {
    if (this.overflow) {
      const { bytes, head, tail } = this.overflow;
      this.overflow = null;
      void this.reply({
        id: idOfTruncatedLine(head.toString("utf8"), tail.toString("utf8")),
        code: ErrorCode.InvalidRequest,
        message: `Invalid Request: the message is ${bytes} bytes, over the ${this.maxLineBytes}-byte limit of one line; it was discarded.`,
        data: { max_message_bytes: this.maxLineBytes, received_bytes: bytes },
      });
      return;
    }
    const line = Buffer.concat(this.chunks).toString("utf8").replace(/\r$/, "");
    this.chunks = [];
    this.bufferedBytes = 0;
    if (line.trim() === "") return;
    this.handleLine(line);
  }

  private handleLine(line: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      void this.reply({ id: null, code: ErrorCode.ParseError, message: "Parse error: the line is not valid JSON." });
      return;
    }
    if (Array.isArray(parsed)) {
      this.refuseBatch(parsed);
      return;
    }
    const message = JSONRPCMessageSchema.safeParse(parsed);
    if (!message.success) {
      void this.reply({
        id: requestIdOf(parsed),
        code: ErrorCode.InvalidRequest,
        message: "Invalid Request: not a JSON-RPC 2.0 request, notification or response.",
      });
      return;
    }
    const problem = requestParameterProblem(message.data);
    if (problem) {
      void this.reply({
        id: requestIdOf(parsed),
        code: ErrorCode.InvalidParams,
        message: problem.message,
        data: { fields: problem.fields },
      });
      return;
    }
    this.onmessage?.(message.data);
  }

  /**
   * Batches are not part of MCP since 2025-06-18. Each request in one gets its own error (so a client
   * waiting on an id is answered); an empty batch or one of only notifications gets a single error.
   */
  private refuseBatch(batch: unknown[]): void {
    const message = "Invalid Request: JSON-RPC batches are not supported; send each message on its own line.";
    const ids = batch.map(requestIdOf).filter((id): id is RequestId => id !== null);
    if (ids.length === 0) {
      void this.reply({ id: null, code: ErrorCode.InvalidRequest, message });
      return;
    }
    const replies = ids.map((id) => ({ jsonrpc: "2.0" as const, id, error: { code: ErrorCode.InvalidRequest, message } }));
    void new Promise<void>((resolve) => {
      if (this.output.write(`${JSON.stringify(replies)}\n`)) resolve();
      else this.output.once("drain", () => resolve());
    });
  }

  private reply(error: ErrorReply): Promise<void> {
    return this.send({
      jsonrpc: "2.0",
      id: error.id as RequestId,
      error: { code: error.code, message: error.message, ...(error.data ? { data: error.data } : {}) },
    } as JSONRPCMessage);
  }
}

function requestIdOf(value: unknown): RequestId | null {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return null;
  const id = (value as { id?: unknown }).id;
  return typeof id === "string" || (typeof id === "number" && Number.isFinite(id)) ? id : null;
}

/**
 * The id of a line too long to parse, when it sits where clients put it: first after "jsonrpc" (or first
 * of all), or last before the closing brace (the SDK writes it last). Anything else is id null.
 */
export function idOfTruncatedLine(head: string, tail: string): RequestId | null {
  const value = String.raw`(-?\d{1,15}|"(?:[^"\\]|\\.){0,200}")`;
  const leading = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*${value}\s*[,}]`).exec(head);
  const trailing = new RegExp(String.raw`[,{]\s*"id"\s*:\s*${value}\s*\}\s*$`).exec(tail);
  const found = leading?.[1] ?? trailing?.[1];
  if (found === undefined) return null;
  return JSON.parse(found) as RequestId;
}
