/**
 * An MCP client that counts what an agent pays for each job: tool calls, calls that came back as errors
 * (isError), and the characters of the results' text content (what a client hands the model), with the
 * characters of structuredContent beside them. Drives any stdio MCP server with the SDK's own client;
 * used by agent-jobs.bench.ts for flameox and for the Python original. Not a benchmark module itself.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

export type ServerCommand = { command: string; args: string[]; cwd: string; env: Record<string, string> };

export type CallRecord = { tool: string; is_error: boolean; text_chars: number; structured_chars: number };

export type ToolAnswer = {
  tool: string;
  isError: boolean;
  text: string;
  /** The text parsed as JSON when it is JSON, else structuredContent (what a structured client reads). */
  json: any;
};

/** A long capture reports progress; each progress notification restarts the SDK's request clock. */
const callOptions = { timeout: 600_000, resetTimeoutOnProgress: true, maxTotalTimeout: 1_800_000 };

export class CountingAgent {
  private client: Client | null = null;
  private stderr = "";
  /** Calls of the job being counted (see `startJob`). */
  private current: CallRecord[] = [];
  private texts: string[] = [];
  private structured: unknown[] = [];
  /** Reconnections the server asked for (not tool calls, but an agent has to do them). */
  reconnects = 0;

  private constructor(private server: ServerCommand) {}

  static async connect(server: ServerCommand): Promise<CountingAgent> {
    const agent = new CountingAgent(server);
    await agent.open();
    return agent;
  }

  private async open(): Promise<void> {
    const transport = new StdioClientTransport({ ...this.server, stderr: "pipe" });
    transport.stderr?.on("data", (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString()).slice(-4_000);
    });
    const client = new Client({ name: "flameox-agent-jobs-bench", version: "1.0.0" });
    await client.connect(transport);
    this.client = client;
  }

  /** Closes this server and starts the one `server` names (a server that asks to be relaunched). */
  async reconnect(server: ServerCommand): Promise<void> {
    await this.client?.close();
    this.server = server;
    this.reconnects += 1;
    await this.open();
  }

  stderrTail(): string {
    return this.stderr;
  }

  async toolNames(): Promise<string[]> {
    const listed = await this.client!.listTools();
    return listed.tools.map((tool) => tool.name);
  }

  /** Starts counting a new job; returns the calls and texts of the one before. */
  startJob(): { calls: CallRecord[]; texts: string[]; structured: unknown[] } {
    const finished = { calls: this.current, texts: this.texts, structured: this.structured };
    this.current = [];
    this.texts = [];
    this.structured = [];
    return finished;
  }

  async call(tool: string, args: Record<string, unknown> = {}): Promise<ToolAnswer> {
    const raw = await this.client!.callTool({ name: tool, arguments: args }, undefined, callOptions);
    const text = (raw.content as { type: string; text?: string }[])
      .filter((item) => item.type === "text")
      .map((item) => item.text ?? "")
      .join("\n");
    const structured = raw.structuredContent;
    this.current.push({
      tool,
      is_error: Boolean(raw.isError),
      text_chars: text.length,
      structured_chars: structured === undefined ? 0 : JSON.stringify(structured).length,
    });
    this.texts.push(text);
    this.structured.push(structured ?? null);
    return { tool, isError: Boolean(raw.isError), text, json: parseAnswer(text, structured) };
  }

  async close(): Promise<void> {
    await this.client?.close();
    this.client = null;
  }
}

function parseAnswer(text: string, structured: unknown): any {
  const trimmed = text.trim();
  if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
    try {
      return JSON.parse(trimmed);
    } catch {
      // Not JSON after all: fall through to the structured content.
    }
  }
  return structured ?? null;
}
