/**
 * Bundles the report's browser code (./client, typed against the DOM by its own tsconfig) into one
 * script. Imported `with { type: "macro" }`, so it runs when the importing module is transpiled:
 * at `bun build --compile` time for the binary (the result is inlined and this file never ships),
 * and at load time when the sources run directly (tests, development). The bundler cannot be
 * re-entered from inside a macro, so the bundle is made by a child `bun build`.
 */
import { join } from "node:path";

export function bundleReportClient(): string {
  const entry = join(import.meta.dir, "client", "main.ts");
  const built = Bun.spawnSync([process.execPath, "build", entry, "--target=browser", "--format=iife", "--minify"], {
    stdout: "pipe",
    stderr: "pipe",
    env: { PATH: process.env.PATH ?? "", NO_COLOR: "1" },
  });
  const script = built.stdout.toString();
  if (built.exitCode !== 0 || script.trim() === "") {
    throw new Error(`Bundling the report client failed (exit ${built.exitCode}): ${built.stderr.toString().slice(0, 2000)}`);
  }
  // The script is inlined into a <script> element, where this sequence would end it early.
  if (/<\/script/i.test(script)) throw new Error("The report client bundle contains </script; it cannot be inlined.");
  return script;
}
