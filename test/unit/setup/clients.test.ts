import { describe, expect, test } from "bun:test";
import { clientDefinition, clientIds, type ClientId } from "../../../src/setup/clients.ts";
import { dataRoot, type SetupEnvironment } from "../../../src/setup/environment.ts";

const linux: SetupEnvironment = { env: {}, home: "/home/u", platform: "linux" };
const mac: SetupEnvironment = { env: {}, home: "/Users/u", platform: "darwin" };
const windows: SetupEnvironment = {
  env: { APPDATA: "C:\\Users\\u\\AppData\\Roaming", LOCALAPPDATA: "C:\\Users\\u\\AppData\\Local" },
  home: "C:\\Users\\u",
  platform: "win32",
};

const path = (id: ClientId, environment: SetupEnvironment): string => clientDefinition(id).configPath(environment);

describe("client config paths", () => {
  test("Linux defaults", () => {
    expect(clientIds.map((id) => path(id, linux))).toEqual([
      "/home/u/.claude.json",
      "/home/u/.cursor/mcp.json",
      "/home/u/.codeium/windsurf/mcp_config.json",
      "/home/u/.config/opencode/opencode.json",
      "/home/u/.codex/config.toml",
      "/home/u/.gemini/settings.json",
      "/home/u/.gemini/config/mcp_config.json",
      "/home/u/.config/Code/User/mcp.json",
      "/home/u/.config/Claude/claude_desktop_config.json",
    ]);
  });

  test("environment overrides", () => {
    const environment: SetupEnvironment = {
      env: { CODEX_HOME: "/x/codex", CLAUDE_CONFIG_DIR: "/x/claude", XDG_CONFIG_HOME: "/x/cfg", XDG_DATA_HOME: "/x/data" },
      home: "/home/u",
      platform: "linux",
    };
    expect(path("codex", environment)).toBe("/x/codex/config.toml");
    expect(path("claude", environment)).toBe("/x/claude/.claude.json");
    expect(path("opencode", environment)).toBe("/x/cfg/opencode/opencode.json");
    expect(path("vscode", environment)).toBe("/x/cfg/Code/User/mcp.json");
    expect(dataRoot(environment)).toBe("/x/data/flameox");
    expect(dataRoot({ ...environment, env: { FLAMEOX_SETUP_DATA_ROOT: "/override" } })).toBe("/override");
  });

  test("macOS", () => {
    expect(path("vscode", mac)).toBe("/Users/u/Library/Application Support/Code/User/mcp.json");
    expect(path("claude-desktop", mac)).toBe("/Users/u/Library/Application Support/Claude/claude_desktop_config.json");
    expect(path("opencode", mac)).toBe("/Users/u/.config/opencode/opencode.json");
    expect(dataRoot(mac)).toBe("/Users/u/Library/Application Support/flameox");
  });

  test("Windows", () => {
    expect(path("claude", windows)).toBe("C:\\Users\\u\\.claude.json");
    expect(path("codex", windows)).toBe("C:\\Users\\u\\.codex\\config.toml");
    expect(path("vscode", windows)).toBe("C:\\Users\\u\\AppData\\Roaming\\Code\\User\\mcp.json");
    expect(path("claude-desktop", windows)).toBe("C:\\Users\\u\\AppData\\Roaming\\Claude\\claude_desktop_config.json");
    expect(dataRoot(windows)).toBe("C:\\Users\\u\\AppData\\Local\\flameox");
  });

  test("entry shapes", () => {
    const launcher = "/d/runtimes/0.2.0/flameox";
    const args = ["mcp", "serve", "--project-root", "."];
    expect(clientDefinition("claude").entry(launcher, null)).toEqual({ command: launcher, args });
    expect(clientDefinition("opencode").entry(launcher, null)).toEqual({ type: "local", command: [launcher, ...args], enabled: true });
    expect(clientDefinition("vscode").entry(launcher, null)).toEqual({ type: "stdio", command: launcher, args });
    expect(clientDefinition("cursor").entry(launcher, ["capture", "runs"])).toEqual({
      command: launcher,
      args: [...args, "--tools", "capture,runs"],
    });
    expect(clientDefinition("cursor").toolsOf({ command: launcher, args: [...args, "--tools", "capture,runs"] })).toEqual([
      "capture",
      "runs",
    ]);
    expect(clientDefinition("opencode").toolsOf({ command: [launcher, ...args, "--tools", "runs"] })).toEqual(["runs"]);
    expect(clientDefinition("claude").toolsOf({ command: launcher, args })).toBeNull();
    expect(clientDefinition("codex").section).toEqual(["mcp_servers"]);
    expect(clientDefinition("vscode").section).toEqual(["servers"]);
  });
});
