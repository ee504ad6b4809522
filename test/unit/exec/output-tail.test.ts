// The tail of each stream that the broker keeps beside the output files, and its redaction.
import { afterAll, describe, expect, test } from "bun:test";
import { outputTailBytes } from "../../../src/exec/output-pump.ts";
import { redactionMarker, redactSecrets, secretValues } from "../../../src/exec/output-redaction.ts";
import { run, scratchDirectory } from "./helpers.ts";

const scratch = scratchDirectory();
afterAll(() => scratch.remove());

describe("runProcess: output tails", () => {
  test("a short stream's tail is the whole stream", async () => {
    const { result } = await run(scratch.path, ["bash", "-c", "echo first; echo oops >&2; exit 2"]);
    expect(result.stdout.tail).toBe("first\n");
    expect(result.stdout.tail_complete).toBe(true);
    expect(result.stderr.tail).toBe("oops\n");
  });

  test("a stream longer than the ring keeps its last bytes, even past the output budget", async () => {
    // 200,000 numbered lines, far beyond both the 1 KiB budget and the ring.
    const { result } = await run(
      scratch.path,
      ["python3", "-c", "import sys\nfor i in range(200000): sys.stdout.write(f'line {i}\\n')\nprint('the end', file=sys.stderr)"],
      { outputBudgetBytes: 1024 },
    );
    expect(result.stdout.bytes_written + result.stderr.bytes_written).toBe(1024);
    expect(result.stdout.tail_complete).toBe(false);
    expect(result.stdout.tail.length).toBeLessThanOrEqual(outputTailBytes);
    expect(result.stdout.tail.length).toBeGreaterThan(outputTailBytes - 20);
    expect(result.stdout.tail).toEndWith("line 199998\nline 199999\n");
    // The budget was spent on stdout, yet the last thing the process said is still known.
    expect(result.stderr.tail).toBe("the end\n");
  });

  test("a multi-byte character cut by the ring's start is dropped, not shown as a replacement mark", async () => {
    const { result } = await run(scratch.path, ["python3", "-c", `import sys; sys.stdout.write("é" * ${outputTailBytes})`]);
    expect(result.stdout.tail_complete).toBe(false);
    expect(result.stdout.tail).not.toContain("\uFFFD");
    expect(result.stdout.tail).toMatch(/^é+$/);
  });

  test("secrets in the environment and credential-like assignments never reach the tail", async () => {
    const { result } = await run(
      scratch.path,
      [
        "bash",
        "-c",
        // The child sees SERVICE_TOKEN (flameox's own variable); the parent's key it only reads from "a file" (argv here).
        'echo "using $SERVICE_TOKEN and parent-key-456789"; echo "password=hunter2 user=alice" >&2; echo "Authorization: Bearer abc.def"',
      ],
      { trustedEnvironment: { SERVICE_TOKEN: "s3cr3t-value-123" } },
      { parentEnvironment: { PATH: process.env.PATH, DEPLOY_API_KEY: "parent-key-456789" } },
    );
    expect(result.stdout.tail.split("\n")[0]).toBe(`using ${redactionMarker} and ${redactionMarker}`);
    expect(result.stderr.tail).toBe(`password=${redactionMarker} user=alice\n`);
    expect(result.stdout.tail).toContain(`Authorization: Bearer ${redactionMarker}`);
  });
});

describe("redactSecrets", () => {
  test("known values are replaced wherever they occur; names decide for assignments", () => {
    const secrets = secretValues({ GITHUB_TOKEN: "ghp_abcdef123456", HOME: "/home/alice", SHORT_KEY: "abc" }, { DB_PASSWORD: "pa55word!" });
    expect(secrets).toEqual(["ghp_abcdef123456", "pa55word!"]);
    const text = [
      "cloning with ghp_abcdef123456 …",
      "connect db (pa55word!)",
      'config {"api_key": "zzz999", "keyboard": "qwerty"}',
      "MY_SECRET: swordfish",
      "-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----",
      "monkey=banana tokens_used=12",
    ].join("\n");
    expect(redactSecrets(text, secrets)).toBe(
      [
        `cloning with ${redactionMarker} …`,
        `connect db (${redactionMarker})`,
        `config {"api_key": "${redactionMarker}", "keyboard": "qwerty"}`,
        `MY_SECRET: ${redactionMarker}`,
        redactionMarker,
        // KEY and TOKENS count only as whole words: monkey passes, tokens_used does not.
        `monkey=banana tokens_used=${redactionMarker}`,
      ].join("\n"),
    );
  });
});
