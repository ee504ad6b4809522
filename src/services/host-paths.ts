import { basename, isAbsolute, relative, sep } from "node:path";

/**
 * Paths as agents see them. Results never carry absolute host paths: a path inside the project is shown
 * project-relative, and an executable or interpreter elsewhere on the host by its file name alone (what
 * a person would type when it is on PATH). The records themselves keep the full paths.
 */
export function displayPath(path: string, projectRoot: string): string {
  if (!isAbsolute(path)) return path;
  const inside = relative(projectRoot, path);
  if (inside === "") return ".";
  if (!inside.startsWith("..") && !isAbsolute(inside) && !inside.split(sep).includes("..")) return inside;
  return basename(path);
}

/** An argv with each absolute argument shown as displayPath shows it; other arguments unchanged. */
export function displayArgv(argv: readonly string[], projectRoot: string): string[] {
  return argv.map((argument) => displayPath(argument, projectRoot));
}
