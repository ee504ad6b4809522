import { describe, expect, test } from "bun:test";
import { parse as parseToml } from "smol-toml";
import { decodeConfig, encodeConfig } from "../../../src/setup/formats/document.ts";
import { openJsonDocument } from "../../../src/setup/formats/json.ts";
import { openTomlDocument } from "../../../src/setup/formats/toml.ts";

const entry = { command: "/data/flameox/runtimes/0.2.0/flameox", args: ["mcp", "serve", "--project-root", "."] };

describe("JSON and JSONC editor", () => {
  test("keeps comments, trailing commas, unrelated servers, tabs and CRLF in JSONC", () => {
    const text =
      '{\r\n\t// my servers\r\n\t"mcp": {\r\n\t\t"other": { "type": "local", "command": ["x"] }, // keep\r\n\t},\r\n\t"theme": "dark",\r\n}\r\n';
    const document = openJsonDocument(text, "jsonc", "/cfg.jsonc", ["mcp"]);
    expect(document.entry).toBeUndefined();
    const updated = document.withEntry(entry);
    expect(updated).toContain("// my servers");
    expect(updated).toContain("// keep");
    expect(updated).toContain('"theme": "dark",\r\n}');
    expect(updated).toContain('\t\t"flameox": {');
    expect(updated.replace(/\r\n/g, "")).not.toContain("\n");
    const again = openJsonDocument(updated, "jsonc", "/cfg.jsonc", ["mcp"]);
    expect(again.entry).toEqual(entry);
    const removed = again.withoutEntry(null);
    expect(openJsonDocument(removed, "jsonc", "/cfg.jsonc", ["mcp"]).entry).toBeUndefined();
    expect(removed).toContain('"other": { "type": "local", "command": ["x"] }');
  });

  test("strict JSON keeps every byte outside the entry, including 4-space indentation", () => {
    const text = '{\n    "numStartups": 12,\n    "mcpServers": {\n        "other": {"command": "o"}\n    },\n    "zzz": [1,2,3]\n}\n';
    const updated = openJsonDocument(text, "json", "/c.json", ["mcpServers"]).withEntry(entry);
    expect(updated.startsWith('{\n    "numStartups": 12,\n    "mcpServers": {\n        "other": {"command": "o"}')).toBe(true);
    expect(updated.endsWith('    },\n    "zzz": [1,2,3]\n}\n')).toBe(true);
    expect(JSON.parse(updated).mcpServers.flameox).toEqual(entry);
  });

  test("empty file becomes an object with our entry", () => {
    expect(JSON.parse(openJsonDocument("  \n", "json", "/c.json", ["mcpServers"]).withEntry(entry))).toEqual({
      mcpServers: { flameox: entry },
    });
  });

  test("refuses comments in strict JSON, duplicate keys, non-object roots and null sections", () => {
    expect(() => openJsonDocument('{ // c\n "a": 1 }', "json", "/c.json", ["mcpServers"])).toThrow(/malformed/);
    expect(() => openJsonDocument('{"a": 1,}', "json", "/c.json", ["mcpServers"])).toThrow(/malformed/);
    expect(() => openJsonDocument('{"mcpServers": {}, "mcpServers": {}}', "json", "/c.json", ["mcpServers"])).toThrow(/duplicate key/);
    expect(() => openJsonDocument('{"mcpServers": {"flameox": {}, "flameox": {}}}', "jsonc", "/c.json", ["mcpServers"])).toThrow(
      /duplicate key/,
    );
    expect(() => openJsonDocument("[]", "json", "/c.json", ["mcpServers"])).toThrow(/top level/);
    expect(() => openJsonDocument('{"mcpServers": null}', "json", "/c.json", ["mcpServers"])).toThrow(/not an object/);
    expect(() => openJsonDocument('{"mcpServers": {"flameox": "x"}}', "json", "/c.json", ["mcpServers"])).toThrow(/not an object/);
    expect(() => openJsonDocument("{broken", "json", "/c.json", ["mcpServers"])).toThrow(/malformed/);
  });

  test("user keys in our entry (env, type) are kept; only managed keys change", () => {
    const text =
      '{\n  "mcpServers": {\n    "flameox": {\n      "type": "stdio",\n      "command": "old",\n      "env": { "A": "1" },\n      "args": []\n    }\n  }\n}\n';
    const document = openJsonDocument(text, "json", "/c.json", ["mcpServers"]);
    const updated = document.withEntry(entry);
    expect(JSON.parse(updated).mcpServers.flameox).toEqual({ type: "stdio", ...entry, env: { A: "1" } });
    expect(updated).toContain('"env": { "A": "1" },');
    expect(openJsonDocument(updated, "json", "/c.json", ["mcpServers"]).withEntry(entry)).toBe(updated);
  });

  test("connect then disconnect gives back the exact bytes when the section was {} or absent", () => {
    const cases = [
      '{\n  "a": 1\n}\n',
      '{\n  "a": 1,\n  "mcpServers": {}\n}\n',
      '{"mcpServers": {}}',
      "{}",
      "",
      '{\n  "mcpServers": { }\n}',
      '{"a":1}',
      '{"mcpServers": {"other": {}}}\n',
    ];
    for (const text of cases) {
      const document = openJsonDocument(text, "json", "/c.json", ["mcpServers"]);
      const added = document.withEntry(entry);
      const updated = openJsonDocument(added, "json", "/c.json", ["mcpServers"]).withEntry({ ...entry, command: "/new/flameox" });
      expect({ text, removed: openJsonDocument(updated, "json", "/c.json", ["mcpServers"]).withoutEntry(document.origin) }).toEqual({
        text,
        removed: text,
      });
    }
    // Without a record of how the section looked, an emptied section becomes `{}`.
    const connected = '{"mcpServers": {\n    "flameox": {"command": "x"}\n  }}';
    expect(openJsonDocument(connected, "json", "/c.json", ["mcpServers"]).withoutEntry(null)).toBe('{"mcpServers": {}}');
  });

  test("Gemini's settings.json: comments are fine, trailing commas are refused (Gemini cannot parse them)", () => {
    const commented = '{\n  // mine\n  "theme": "Default"\n}\n';
    expect(openJsonDocument(commented, "json-comments", "/s.json", ["mcpServers"]).withEntry(entry)).toContain("// mine");
    expect(() => openJsonDocument('{\n  "theme": "Default",\n}\n', "json-comments", "/s.json", ["mcpServers"])).toThrow(
      /trailing commas are not/,
    );
  });

  test("refuses non-UTF-8 bytes; keeps a BOM", () => {
    expect(() => decodeConfig(new Uint8Array([0x7b, 0xff, 0x7d]), "/c.json")).toThrow(/not UTF-8/);
    const decoded = decodeConfig(new TextEncoder().encode("\uFEFF{}"), "/c.json");
    expect(decoded).toEqual({ text: "{}", bom: true });
    expect(Array.from(encodeConfig("{}", true).slice(0, 3))).toEqual([0xef, 0xbb, 0xbf]);
  });
});

describe("Codex TOML splice", () => {
  test("appends our table and keeps comments and other tables", () => {
    const text =
      '# my codex config\nmodel = "o3" # inline comment\n\n[mcp_servers.other]\ncommand = "other"\nargs = [\n  "a", # [not a header]\n]\n';
    const updated = openTomlDocument(text, "/config.toml", ["mcp_servers"]).withEntry(entry);
    expect(updated.startsWith(text)).toBe(true);
    expect(updated.slice(text.length)).toBe(
      `\n[mcp_servers.flameox]\ncommand = "${entry.command}"\nargs = ["mcp", "serve", "--project-root", "."]\n`,
    );
    const parsed = parseToml(updated) as { mcp_servers: Record<string, unknown> };
    expect(parsed.mcp_servers.flameox).toEqual(entry);
  });

  test("updates only the keys we manage: the user's keys, comments and sub-tables keep their bytes", () => {
    const text =
      '[mcp_servers.flameox]\ncommand = "old" # mine\nstartup_timeout_sec = 30\nargs = [\n  "x",\n]\n\n[mcp_servers.flameox.env]\nA = "1"\n\n# about other\n[mcp_servers.other]\ncommand = "o"\n';
    const document = openTomlDocument(text, "/config.toml", ["mcp_servers"]);
    expect(document.entry).toEqual({ command: "old", startup_timeout_sec: 30, args: ["x"], env: { A: "1" } });
    const updated = document.withEntry(entry);
    expect(updated).toBe(
      `[mcp_servers.flameox]\ncommand = "${entry.command}" # mine\nstartup_timeout_sec = 30\nargs = ["mcp", "serve", "--project-root", "."]\n\n[mcp_servers.flameox.env]\nA = "1"\n\n# about other\n[mcp_servers.other]\ncommand = "o"\n`,
    );
    expect((parseToml(updated) as { mcp_servers: Record<string, unknown> }).mcp_servers.flameox).toEqual({
      ...entry,
      startup_timeout_sec: 30,
      env: { A: "1" },
    });
    expect(openTomlDocument(updated, "/config.toml", ["mcp_servers"]).withEntry(entry)).toBe(updated);
    const removed = openTomlDocument(updated, "/config.toml", ["mcp_servers"]).withoutEntry(null);
    expect(parseToml(removed)).toEqual({ mcp_servers: { other: { command: "o" } } });
  });

  test("a missing managed key is added under our header", () => {
    const text = '[mcp_servers.flameox]\ncommand = "old"\nenv = { A = "1" }\n';
    const updated = openTomlDocument(text, "/config.toml", ["mcp_servers"]).withEntry(entry);
    expect(updated).toBe(
      `[mcp_servers.flameox]\nargs = ["mcp", "serve", "--project-root", "."]\ncommand = "${entry.command}"\nenv = { A = "1" }\n`,
    );
  });

  test("connect then disconnect gives back the exact bytes (no section, an empty one, no final newline)", () => {
    for (const text of ['model = "o3"\n', "[mcp_servers]\n", "", "x = 1", '[mcp_servers.other]\ncommand = "o"\n']) {
      const document = openTomlDocument(text, "/c.toml", ["mcp_servers"]);
      const added = document.withEntry(entry);
      expect(openTomlDocument(added, "/c.toml", ["mcp_servers"]).withoutEntry(document.origin)).toBe(text);
    }
  });

  test("ignores header-looking lines inside multi-line strings", () => {
    const text = 'notes = """\n[mcp_servers.flameox]\n"""\n';
    const updated = openTomlDocument(text, "/config.toml", ["mcp_servers"]).withEntry(entry);
    expect(updated.startsWith(text)).toBe(true);
    expect((parseToml(updated) as Record<string, unknown>).notes).toBe("[mcp_servers.flameox]\n");
  });

  test("fails closed on inline tables and dotted keys, refuses malformed TOML", () => {
    expect(() => openTomlDocument('mcp_servers = { flameox = { command = "x" } }\n', "/c.toml", ["mcp_servers"]).withEntry(entry)).toThrow(
      /malformed/,
    );
    expect(() => openTomlDocument('[mcp_servers]\nflameox.command = "x"\n', "/c.toml", ["mcp_servers"]).withEntry(entry)).toThrow(
      /malformed/,
    );
    expect(() => openTomlDocument('mcp_servers = { other = { command = "x" } }\n', "/c.toml", ["mcp_servers"]).withEntry(entry)).toThrow(
      /malformed/,
    );
    expect(() => openTomlDocument("a = 1\na = 2\n", "/c.toml", ["mcp_servers"])).toThrow(/invalid TOML/);
    expect(() => openTomlDocument("[[mcp_servers]]\nx = 1\n", "/c.toml", ["mcp_servers"])).toThrow(/not a table/);
  });

  test("keeps CRLF line endings", () => {
    const updated = openTomlDocument('model = "o3"\r\n', "/c.toml", ["mcp_servers"]).withEntry(entry);
    expect(updated.replace(/\r\n/g, "")).not.toContain("\n");
  });
});
