// Tracebacks printed by the pinned CPython itself (.tools/venv), read back by the parser.
import { expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parsePythonTraceback } from "../../../../src/adapters/failures/python-traceback.ts";
import { temporaryFolder } from "../../../support/temporary-folders.ts";

setDefaultTimeout(60_000);

const python = resolve(import.meta.dir, "../../../../.tools/venv/bin/python");
const folder = temporaryFolder("traceback");

/** Runs a script with the real interpreter and returns what it printed on stderr. */
function stderrOf(name: string, source: string): string {
  const path = join(folder, name);
  writeFileSync(path, source);
  const child = Bun.spawnSync([python, path], { cwd: folder, stdout: "pipe", stderr: "pipe" });
  expect(child.exitCode).not.toBe(0);
  return child.stderr.toString();
}

test("an uncaught exception: type, message and frames innermost last, with file and line", () => {
  const stderr = stderrOf(
    "crash.py",
    ["def inner(x):", '    raise ValueError(f"bad value {x}")', "def outer():", "    inner(42)", "outer()", ""].join("\n"),
  );
  const parsed = parsePythonTraceback(`some output before\n${stderr}`)!;
  expect(parsed.exception_type).toBe("ValueError");
  expect(parsed.message).toBe("bad value 42");
  expect(parsed.frames.map((frame) => frame.function)).toEqual(["<module>", "outer", "inner"]);
  expect(parsed.frames[2]).toEqual({ file: join(folder, "crash.py"), line: 2, function: "inner" });
  expect(parsed.frames_omitted).toBe(0);
  expect(parsed.chained).toBeUndefined();
});

test("raise … from … and an exception during handling are chained with their relation", () => {
  const cause = parsePythonTraceback(
    stderrOf(
      "cause.py",
      [
        "import json",
        "def load():",
        "    try:",
        "        json.loads('{')",
        "    except ValueError as error:",
        "        raise RuntimeError('config unreadable') from error",
        "load()",
        "",
      ].join("\n"),
    ),
  )!;
  expect(cause.exception_type).toBe("RuntimeError");
  expect(cause.message).toBe("config unreadable");
  expect(cause.chained?.relation).toBe("cause");
  expect(cause.chained?.exception_type).toBe("json.decoder.JSONDecodeError");
  expect(cause.chained?.frames.at(-1)?.file).toEndWith("decoder.py");

  const context = parsePythonTraceback(
    stderrOf("context.py", ["try:", "    {}['missing']", "except KeyError:", "    1 / 0", ""].join("\n")),
  )!;
  expect(context.exception_type).toBe("ZeroDivisionError");
  expect(context.message).toBe("division by zero");
  expect(context.chained?.relation).toBe("context");
  expect(context.chained?.exception_type).toBe("KeyError");
  expect(context.chained?.message).toBe("'missing'");
});

test("a deep call chain keeps only the innermost frames and counts the rest, folded recursion included", () => {
  const chain = Array.from(
    { length: 8 },
    (_, index) => `def level${index}():\n    ${index === 7 ? "raise MemoryError('deep')" : `level${index + 1}()`}`,
  );
  const parsed = parsePythonTraceback(stderrOf("chain.py", `${chain.join("\n")}\nlevel0()\n`))!;
  expect(parsed.exception_type).toBe("MemoryError");
  expect(parsed.frames.map((frame) => frame.function)).toEqual(["level3", "level4", "level5", "level6", "level7"]);
  // <module> and level0..level2 are left out.
  expect(parsed.frames_omitted).toBe(4);

  const recursion = parsePythonTraceback(stderrOf("deep.py", ["def down(n):", "    return down(n + 1)", "down(0)", ""].join("\n")))!;
  expect(recursion.exception_type).toBe("RecursionError");
  expect(recursion.frames.at(-1)?.function).toBe("down");
  // CPython prints three frames of `down` and folds the rest of the ~1000 into "[Previous line repeated N more times]".
  expect(recursion.frames_omitted).toBeGreaterThan(900);
});

test("a syntax error has no header and no function; a bare exception has an empty message", () => {
  const syntax = parsePythonTraceback(stderrOf("syntax.py", "def broken(:\n    pass\n"))!;
  expect(syntax.exception_type).toBe("SyntaxError");
  expect(syntax.message.length).toBeGreaterThan(0);
  expect(syntax.frames[0]?.line).toBe(1);
  const bare = parsePythonTraceback(stderrOf("bare.py", "class Stop(Exception):\n    pass\nraise Stop\n"))!;
  expect(bare.exception_type).toBe("Stop");
  expect(bare.message).toBe("");
});

test("an exception group reports the group", () => {
  const parsed = parsePythonTraceback(stderrOf("group.py", "raise ExceptionGroup('several', [ValueError('one'), TypeError('two')])\n"))!;
  expect(parsed.exception_type).toBe("ExceptionGroup");
  expect(parsed.message).toStartWith("several");
});

test("a tail that begins inside the traceback still parses from its first frame line", () => {
  const stderr = stderrOf("cut.py", ["def a():", "    b()", "def b():", "    raise OSError('disk gone')", "a()", ""].join("\n"));
  const cut = stderr.slice(stderr.indexOf('  File "') + 1);
  const parsed = parsePythonTraceback(cut)!;
  expect(parsed.exception_type).toBe("OSError");
  expect(parsed.message).toBe("disk gone");
  expect(parsed.frames.at(-1)?.function).toBe("b");
});

test("text without a complete traceback is null", () => {
  expect(parsePythonTraceback("")).toBeNull();
  expect(parsePythonTraceback("error: something failed\nexit status 3\n")).toBeNull();
  // A traceback cut before its exception line is not a crash we can name.
  const stderr = stderrOf("incomplete.py", "raise LookupError('x')\n");
  expect(parsePythonTraceback(stderr.slice(0, stderr.lastIndexOf("LookupError")))).toBeNull();
});
