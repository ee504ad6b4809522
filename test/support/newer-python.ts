/**
 * A CPython >= 3.12 on this host, which the shrinkray provider needs: pyenv's versions folder first, then
 * python3.12/python3.13 on PATH. Null where the host has none; tests that need one are skipped then and
 * say why, because no project file can install an interpreter (the registries carry packages, not Pythons).
 */
import { existsSync } from "node:fs";
import { delimiter, join } from "node:path";
import { pyenvInterpreters } from "../../src/adapters/providers/provider-installer.ts";

export function newerPython(): string | null {
  // The installer's own pyenv lookup (numeric version order), so tests find what the provider would.
  const fromPyenv = pyenvInterpreters(process.env, [3, 12])[0];
  if (fromPyenv) return fromPyenv;
  for (const folder of (process.env.PATH ?? "").split(delimiter)) {
    for (const name of ["python3.12", "python3.13", "python3.14"]) {
      if (folder && existsSync(join(folder, name))) return join(folder, name);
    }
  }
  return null;
}

/** Why a test needing it was skipped, printed once so the skip is never silent. */
export function reportMissingNewerPython(what: string): boolean {
  const found = newerPython();
  if (!found) console.warn(`skipped: ${what} needs a Python >= 3.12 (pyenv's versions folder or python3.12 on PATH); this host has none.`);
  return found === null;
}
