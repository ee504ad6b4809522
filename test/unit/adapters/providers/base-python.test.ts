/**
 * How a provider environment's interpreter is found, with real interpreters: a pyenv-style versions
 * folder whose entries link to the tools venv's Python and to a newer one found on this host.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { basePythonCandidates, findBasePython, type InstallerContext } from "../../../../src/adapters/providers/provider-installer.ts";
import type { FlameoxError } from "../../../../src/domain/errors.ts";
import { newerPython, reportMissingNewerPython } from "../../../support/newer-python.ts";
import { python } from "../../../support/project.ts";
import { temporaryFolder } from "../../../support/temporary-folders.ts";

setDefaultTimeout(60_000);

const missingNewerPython = reportMissingNewerPython("the pyenv discovery tests");

/** The interpreter found above; only called by tests skipped when there is none. */
function newer(): string {
  return newerPython() as string;
}

function fakePyenv(versions: Record<string, string>): string {
  const root = temporaryFolder("pyenv");
  for (const [version, target] of Object.entries(versions)) {
    mkdirSync(join(root, "versions", version, "bin"), { recursive: true });
    symlinkSync(target, join(root, "versions", version, "bin", "python3"));
  }
  mkdirSync(join(root, "versions", "system-not-a-version"), { recursive: true });
  return root;
}

function context(environment: Record<string, string>): InstallerContext {
  const scratch = temporaryFolder("base");
  return { signal: new AbortController().signal, deadline: Date.now() + 50_000, scratch, marker: "test", parentEnvironment: environment };
}

/** PATH holding only the tools venv (Python 3.11) and the system folders. */
const oldPath = `${join(python(), "..")}:/usr/bin:/bin`;

test.skipIf(missingNewerPython)(
  "candidates: PATH's python3 and python first, then python3.N names, then pyenv versions at or above the minimum, oldest first",
  () => {
    const root = fakePyenv({ "3.11.7": python(), "3.13.0": newer(), "3.12.1": newer() });
    const candidates = basePythonCandidates(oldPath, { PYENV_ROOT: root }, [3, 12]);
    expect(candidates[0]).toBe(join(python(), "..", "python3"));
    expect(candidates.slice(-2)).toEqual([
      join(root, "versions", "3.12.1", "bin", "python3"),
      join(root, "versions", "3.13.0", "bin", "python3"),
    ]);
    // Without a minimum only PATH is asked: every other provider is made from python3 as before.
    expect(basePythonCandidates(oldPath, { PYENV_ROOT: root }, null).some((path) => path.startsWith(root))).toBe(false);
  },
);

test.skipIf(missingNewerPython)(
  "a provider that needs Python >= 3.12 skips an older python3 and takes pyenv's oldest acceptable version",
  async () => {
    const root = fakePyenv({ "3.11.7": python(), "3.12.1": newer() });
    const base = await findBasePython(oldPath, context({ PYENV_ROOT: root }), [3, 12]);
    expect(base.executable).toBe(join(root, "versions", "3.12.1", "bin", "python3"));
    expect(Number(base.version.split(".")[1])).toBeGreaterThanOrEqual(12);
  },
);

test("no acceptable interpreter: CAPABILITY_UNAVAILABLE naming the Python needed and the versions found", async () => {
  const root = fakePyenv({ "3.11.7": python() });
  const refused = await findBasePython(oldPath, context({ PYENV_ROOT: root }), [3, 12], "The shrinkray provider").catch(
    (error: FlameoxError) => error,
  );
  expect((refused as FlameoxError).code).toBe("CAPABILITY_UNAVAILABLE");
  expect((refused as FlameoxError).message).toContain("The shrinkray provider needs Python >= 3.12");
  expect((refused as FlameoxError).message).toContain("found only 3.11");
  expect((refused as FlameoxError).details.failure_category).toBe("unsupported_platform");
});
