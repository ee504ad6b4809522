import { expect, setDefaultTimeout, test } from "bun:test";
import { createHash } from "node:crypto";
import { appendFileSync, chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { crashVariable } from "../../src/store/crash-points.ts";
import { binaryPath, runCli, temporaryFolder, testEnvironment } from "../support/binary.ts";

// Every step starts the compiled binary.
setDefaultTimeout(120_000);

function cli(project: string, argv: string[]) {
  return runCli(["--project-root", project, ...argv], { cwd: project });
}

function crashImport(project: string, file: string, boundary: string): void {
  const result = Bun.spawnSync([binaryPath(), "--project-root", project, "import", file, "--json"], {
    cwd: project,
    env: testEnvironment({ [crashVariable]: boundary }),
    stdout: "pipe",
    stderr: "pipe",
  });
  expect(result.signalCode).toBe("SIGKILL");
}

/** Every file below `.diagnostics/<path>` (or the file itself) by path, with its sha256. */
function snapshot(root: string, paths: string[]): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (relative: string) => {
    const absolute = join(root, relative);
    if (lstatSync(absolute).isDirectory()) for (const name of readdirSync(absolute)) walk(`${relative}/${name}`);
    else files[relative] = createHash("sha256").update(readFileSync(absolute)).digest("hex");
  };
  for (const path of paths) walk(path);
  return files;
}

/** Makes a tree look untouched for two days, as old leftovers are. */
function age(absolute: string): void {
  const then = new Date(Date.now() - 48 * 3600 * 1000);
  if (lstatSync(absolute).isDirectory()) for (const name of readdirSync(absolute)) age(join(absolute, name));
  utimesSync(absolute, then, then);
}

test("gc: the dry run lists exactly what apply moves; restore brings it back byte-identical; purge refuses an unexpired manifest", () => {
  const project = temporaryFolder("gc");
  const diagnostics = join(project, ".diagnostics");
  expect(runCli(["init", project, "--json"]).exitCode).toBe(0);
  writeFileSync(join(project, "stacks.collapsed"), "main;work 30\nmain;idle 10\n");
  const profile = cli(project, ["import", "stacks.collapsed", "--json"]).json;
  writeFileSync(
    join(project, "samples.json"),
    '{"schema": "flameox.benchmark-samples.v1", "benchmarks": [{"name": "parse", "unit": "ms", "values": [1, 2, 3]}]}',
  );
  const samples = cli(project, ["import", "samples.json", "--kind", "benchmark_samples", "--json"]).json;
  const first = cli(project, ["extract", "benchmark-samples", samples.run_id, "--json"]).json;
  const second = cli(project, ["extract", "benchmark-samples", samples.run_id, "--json"]).json;
  expect(second.superseded_bundle_ids).toEqual(first.bundle_ids);
  // Leftovers of dead imports, and the collector files of an older flameox version.
  writeFileSync(join(project, "placed.collapsed"), "main;placed 1\n");
  crashImport(project, "placed.collapsed", "bundle_placed");
  mkdirSync(join(diagnostics, "tools", "collectors", "0.0.1-older"), { recursive: true });
  writeFileSync(join(diagnostics, "tools", "collectors", "0.0.1-older", "collector.py"), "# an older collector\n");
  for (const name of readdirSync(diagnostics)) age(join(diagnostics, name));
  // A leftover from a minute ago is younger than the minimum age: listed by validate, never collected yet.
  writeFileSync(join(project, "young.collapsed"), "main;young 1\n");
  crashImport(project, "young.collapsed", "artifact_staged");

  const dryRun = cli(project, ["gc", "--json"]);
  expect(dryRun.exitCode).toBe(0);
  const planned = dryRun.json;
  expect(planned.mode).toBe("dry_run");
  const byCategory = (entries: { category: string; path: string }[]) =>
    entries.map((entry) => `${entry.category} ${entry.path.replace(/[0-9a-f]{8}-[0-9a-f-]{27}|[0-9a-f]{64}/g, "<id>")}`).sort();
  expect(byCategory(planned.entries)).toEqual(
    [
      "orphaned_staging staging/proc-<id>",
      "stale_collector_cache tools/collectors/0.0.1-older",
      "superseded_bundle evidence/bundle-<id>",
      "unregistered_artifact artifacts/sha256/b4/<id>/payload.collapsed",
      "unregistered_bundle evidence/bundle-<id>",
    ]
      .map((line) => line.replace("b4", createHash("sha256").update("main;placed 1\n").digest("hex").slice(0, 2)))
      .sort(),
  );
  expect(planned.entries.find((entry: { category: string }) => entry.category === "superseded_bundle").path).toBe(
    `evidence/${first.bundle_ids[0]}`,
  );
  expect(planned.retention_roots[0].kind).toBe("corpus_head");
  const paths: string[] = planned.entries.map((entry: { path: string }) => entry.path);
  const before = snapshot(diagnostics, paths);

  const applied = cli(project, ["gc", "--apply", "--json"]).json;
  expect(applied.mode).toBe("apply");
  expect(applied.plan_id).toBe(planned.plan_id);
  expect(applied.entries.map((entry: { path: string }) => entry.path)).toEqual(paths);
  for (const path of paths) expect({ path, exists: existsSync(join(diagnostics, path)) }).toEqual({ path, exists: false });
  const manifestPath = join(project, applied.manifest_path);
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
  expect(manifest.entries.map((entry: { path: string }) => entry.path)).toEqual(paths);
  expect(manifest.state).toBe("recoverable");
  expect(manifest.retention_roots).toEqual(planned.retention_roots);
  // What stays is whole: the current evidence answers, and nothing the corpus names went to the trash.
  expect(cli(project, ["analyze", "hotspots", profile.run_id, "--json"]).json.hotspots[0].function).toBe("work");
  const validated = cli(project, ["validate", "--json"]).json;
  expect(validated.issues.map((issue: { code: string }) => issue.code)).toEqual(["orphaned_staging"]);
  expect(cli(project, ["gc", "--json"]).json.entries).toEqual([]);

  const purgeEarly = cli(project, ["gc", "--purge", manifestPath, "--json"]);
  expect(purgeEarly.exitCode).toBe(9);
  expect(purgeEarly.json.error.code).toBe("EXECUTION_REFUSED");
  expect(purgeEarly.json.error.details.expires_at).toBe(applied.expires_at);
  expect(existsSync(manifestPath)).toBe(true);

  const restored = cli(project, ["gc", "--restore", manifestPath, "--json"]).json;
  expect(restored.restored).toEqual(paths);
  expect(snapshot(diagnostics, paths)).toEqual(before);
  expect(existsSync(join(diagnostics, "trash", applied.trash_id))).toBe(false);

  // Once expired (the manifest's expiry moved into the past, as time would), purge deletes exactly that trash.
  const again = cli(project, ["gc", "--apply", "--json"]).json;
  expect(again.entries.map((entry: { path: string }) => entry.path)).toEqual(paths);
  const againManifest = join(project, again.manifest_path);
  const expired = JSON.parse(readFileSync(againManifest, "utf8"));
  writeFileSync(againManifest, JSON.stringify({ ...expired, expires_at: new Date(Date.now() - 1000).toISOString() }));
  const purged = cli(project, ["gc", "--purge", again.trash_id, "--json"]);
  expect(purged.exitCode).toBe(0);
  expect(purged.json.purged_paths).toBe(paths.length);
  expect(existsSync(join(diagnostics, "trash", again.trash_id))).toBe(false);
  expect(cli(project, ["analyze", "hotspots", profile.run_id, "--json"]).exitCode).toBe(0);
});

test("repair: validate proposes a plan, repair applies exactly that plan; an applied or edited plan is refused", () => {
  const project = temporaryFolder("repair");
  const diagnostics = join(project, ".diagnostics");
  expect(runCli(["init", project, "--json"]).exitCode).toBe(0);
  writeFileSync(join(project, "stacks.collapsed"), "main;work 30\nmain;idle 10\n");
  const imported = cli(project, ["import", "stacks.collapsed", "--json"]).json;
  writeFileSync(join(project, "left.collapsed"), "main;left 1\n");
  crashImport(project, "left.collapsed", "artifact_placed");
  // An artifact whose stored bytes changed size: standard validate catches it now (not only --full).
  const hex = imported.artifact_id.slice("sha256:".length);
  const payload = join(diagnostics, "artifacts", "sha256", hex.slice(0, 2), hex, "payload.collapsed");
  chmodSync(payload, 0o644);
  appendFileSync(payload, "tampered 1\n");

  const validated = cli(project, ["validate", "--json"]);
  expect(validated.exitCode).toBe(1);
  expect(validated.json.issues.map((issue: { code: string }) => issue.code).sort()).toEqual(
    ["artifact_size_mismatch", "orphaned_staging", "unregistered_artifact"].sort(),
  );
  const preview = cli(project, ["repair", "--json"]);
  expect(preview.json.plan_id).toBe(validated.json.repair_plan_id);
  expect(preview.json.actions.map((action: { action: string }) => action.action).sort()).toEqual(
    ["quarantine_damaged_artifact", "remove_leftover", "remove_leftover"].sort(),
  );
  const planFile = join(project, "plan.json");
  writeFileSync(planFile, preview.stdout);
  const edited = join(project, "edited.json");
  writeFileSync(edited, JSON.stringify({ ...preview.json, actions: preview.json.actions.slice(1) }));
  expect(cli(project, ["repair", edited, "--json"]).json.error.code).toBe("INVALID_ARGUMENTS");

  const applied = cli(project, ["repair", planFile, "--json"]);
  expect(applied.exitCode).toBe(0);
  expect(applied.json.outcomes.map((outcome: { outcome: string }) => outcome.outcome)).toEqual(["applied", "applied", "applied"]);
  // The damaged bytes are quarantined (never served again); importing the original file restores the object.
  const after = cli(project, ["validate", "--json"]).json;
  expect(after.issues.map((issue: { code: string }) => issue.code)).toEqual(["artifact_missing"]);
  expect(cli(project, ["repair", planFile, "--json"]).json.error.code).toBe("REVISION_CONFLICT");
  expect(cli(project, ["import", "stacks.collapsed", "--json"]).exitCode).toBe(0);
  expect(readFileSync(payload, "utf8")).toBe("main;work 30\nmain;idle 10\n");
  const healed = cli(project, ["validate", "--full", "--json"]);
  expect({ exit: healed.exitCode, issues: healed.json.issues }).toEqual({ exit: 0, issues: [] });
});
