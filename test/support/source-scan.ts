import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** Every .ts file under a folder, recursively. */
export function typeScriptFiles(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    return statSync(path).isDirectory() ? typeScriptFiles(path) : path.endsWith(".ts") ? [path] : [];
  });
}

/** Code without comments, and the contents of its string and template literals, read by a small scanner. */
export function scanSource(text: string): { code: string; strings: string[] } {
  let code = "";
  const strings: string[] = [];
  let index = 0;
  while (index < text.length) {
    const char = text[index]!;
    const next = text[index + 1];
    if (char === "/" && next === "/") {
      while (index < text.length && text[index] !== "\n") index += 1;
    } else if (char === "/" && next === "*") {
      index = text.indexOf("*/", index + 2) + 2;
      if (index < 2) index = text.length;
    } else if (char === '"' || char === "'" || char === "`") {
      let value = "";
      index += 1;
      while (index < text.length && text[index] !== char) {
        if (text[index] === "\\") index += 1;
        value += text[index] ?? "";
        index += 1;
      }
      strings.push(value);
      code += `${char}${char}`;
      index += 1;
    } else {
      code += char;
      index += 1;
    }
  }
  return { code, strings };
}
