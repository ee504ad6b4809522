import { existsSync, lstatSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { executionRefused, invalidArguments, invalidInput } from "../domain/errors.ts";

/** Refuses to replace anything but a regular file, and a folder that does not exist. */
export function checkOutputPath(path: string, subject: string): string {
  const absolute = resolve(path);
  if (absolute.includes("\u0000"))
    throw invalidArguments(subject, [{ field: "output", message: "contains a NUL byte", type: "value_error" }]);
  if (!existsSync(dirname(absolute)) || !lstatSync(dirname(absolute)).isDirectory()) {
    throw invalidInput(
      `The folder of the output file does not exist: ${dirname(absolute)}.`,
      [{ field: "output", message: "folder does not exist", type: "value_error" }],
      { remediation: ["Create the folder first, or name an output file in an existing folder."] },
    );
  }
  if (existsSync(absolute) || isDanglingLink(absolute)) {
    const stat = lstatSync(absolute);
    if (!stat.isFile()) {
      throw executionRefused(
        `${absolute} exists and is not a regular file (${stat.isDirectory() ? "a folder" : stat.isSymbolicLink() ? "a symbolic link" : "a special file"}); it is not overwritten.`,
        { details: { output: absolute }, remediation: ["Name a new file, or an existing regular file to replace."] },
      );
    }
  }
  return absolute;
}

function isDanglingLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}
