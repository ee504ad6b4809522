import { expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { binaryPath, runCli, temporaryFolder, testEnvironment } from "../support/binary.ts";
import { type MutantCase, type MutantFormat, mutantFormats } from "../support/format-mutants.ts";

/**
 * The mutant corpus through the real binary, one `flameox import` (and, for formats extracted after
 * import, one `flameox extract`) per case, each in the format's own workspace. Every case must end on
 * its own within 30 s and 1 GiB of peak RSS (the kernel's own account of the child, from wait4) with a
 * typed result — evidence, a receipt, or an error envelope other than INTERNAL_ERROR — and a refused
 * case must leave artifacts/, evidence/ and staging/ exactly as they were. The ceilings are generous
 * bounds against runaways (the worst case here takes a few seconds and a few hundred MB), not timings.
 */
const caseSeconds = 30;
const caseBytes = 1 << 30;

// About 120 cases, two formats at a time; the whole file takes one to two minutes on two cores.
setDefaultTimeout(400_000);

type Outcome = {
  label: string;
  code: string | null;
  seconds: number;
  peak_rss_bytes: number;
  ended_by_itself: boolean;
  exit: number | null;
};

async function runBounded(project: string, argv: string[]): Promise<{ outcome: Omit<Outcome, "label" | "code">; stdout: string }> {
  const started = performance.now();
  const child = Bun.spawn([binaryPath(), "--project-root", project, ...argv, "--json"], {
    cwd: project,
    env: testEnvironment(),
    stdout: "pipe",
    stderr: "ignore",
    stdin: "ignore",
  });
  let killed = false;
  const timer = setTimeout(() => {
    killed = true;
    child.kill("SIGKILL");
  }, caseSeconds * 1000);
  const stdout = await new Response(child.stdout).text();
  const exit = await child.exited;
  clearTimeout(timer);
  return {
    outcome: {
      seconds: (performance.now() - started) / 1000,
      peak_rss_bytes: child.resourceUsage()?.maxRSS ?? Number.POSITIVE_INFINITY,
      ended_by_itself: !killed,
      exit,
    },
    stdout,
  };
}

/**
 * The result's error code; "ok" for a success; `kept:<code>` for an import that kept the file without
 * evidence under a typed limitation (a damaged file no longer detected as its format); "untyped" for
 * anything that is not one of flameox's documents.
 */
function typedCode(stdout: string): string {
  try {
    const document = JSON.parse(stdout);
    if (document.ok === false && typeof document.error?.code === "string") return document.error.code;
    const limitation = document.evidence?.status === "not_extracted" ? document.evidence.limitation_details?.[0]?.code : undefined;
    if (document.schema_version === 1 && typeof document.run_id === "string")
      return typeof limitation === "string" ? `kept:${limitation}` : "ok";
  } catch {
    // Not JSON: untyped.
  }
  return "untyped";
}

function tree(project: string): string[] {
  const root = join(project, ".diagnostics");
  const found: string[] = [];
  const walk = (folder: string) => {
    if (!existsSync(folder)) return;
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      found.push(relative(root, path));
      if (entry.isDirectory()) walk(path);
    }
  };
  for (const name of ["artifacts", "evidence", "staging"]) walk(join(root, name));
  return found.sort();
}

async function runCase(project: string, format: MutantFormat, mutant: MutantCase): Promise<Outcome> {
  writeFileSync(join(project, mutant.fileName), mutant.bytes);
  let argv = ["import", mutant.fileName];
  if (format.extract) {
    // Kept as it is first (no extraction at import), then extracted: the extraction is the case.
    const imported = runCli(["--project-root", project, "import", mutant.fileName, "--kind", format.extract.kind, "--json"], {
      cwd: project,
    });
    expect({ case: mutant.label, exit: imported.exitCode }).toEqual({ case: mutant.label, exit: 0 });
    argv = ["extract", format.extract.tool, imported.json.run_id];
  }
  const before = tree(project);
  const { outcome, stdout } = await runBounded(project, argv);
  const code = typedCode(stdout);
  if (code !== "ok" && !code.startsWith("kept:"))
    expect({ case: mutant.label, tree: tree(project) }).toEqual({ case: mutant.label, tree: before });
  return { label: mutant.label, code, ...outcome };
}

async function runFormat(format: MutantFormat, seed: number): Promise<Outcome[]> {
  const project = temporaryFolder(`mutants-${format.name}`);
  expect(runCli(["init", project, "--json"]).exitCode).toBe(0);
  const outcomes: Outcome[] = [];
  for (const mutant of format.cases(seed)) outcomes.push(await runCase(project, format, mutant));
  // Nothing any case did, accepted or refused, left anything behind.
  const validated = runCli(["--project-root", project, "validate", "--json"], { cwd: project });
  expect({ format: format.name, issues: validated.json.issues }).toEqual({ format: format.name, issues: [] });
  return outcomes;
}

test("every mutant of every format ends within 30 s and 1 GiB with a typed result, and a refusal leaves nothing", async () => {
  const scratch = temporaryFolder("mutant-scratch");
  const formats = mutantFormats(scratch);
  const results = new Map<string, Outcome[]>();
  const queue = formats.map((format, index) => ({ format, seed: 1000 + index }));
  const worker = async () => {
    for (let item = queue.shift(); item; item = queue.shift()) results.set(item.format.name, await runFormat(item.format, item.seed));
  };
  await Promise.all([worker(), worker()]);

  const failures: (Outcome & { format: string })[] = [];
  for (const [format, outcomes] of results) {
    for (const outcome of outcomes) {
      const bounded = outcome.ended_by_itself && outcome.seconds < caseSeconds && outcome.peak_rss_bytes < caseBytes;
      if (!bounded || outcome.code === "untyped" || outcome.code === "INTERNAL_ERROR") failures.push({ format, ...outcome });
    }
    // The truncations alone guarantee refusals (or, for text read line by line, a file kept under a typed
    // limitation); a corpus that only ever succeeded would prove nothing.
    expect({ format, refused: outcomes.some((outcome) => outcome.code !== "ok") }).toEqual({ format, refused: true });
  }
  expect(failures).toEqual([]);
  expect([...results.keys()].sort()).toEqual(formats.map((format) => format.name).sort());
  const all = [...results.values()].flat();
  const worst = all.reduce((top, outcome) => (outcome.peak_rss_bytes > top.peak_rss_bytes ? outcome : top));
  const slowest = all.reduce((top, outcome) => (outcome.seconds > top.seconds ? outcome : top));
  if (process.env.FLAMEOX_MUTANT_REPORT)
    for (const [format, outcomes] of results)
      for (const outcome of outcomes)
        console.log(
          `${format}\t${outcome.label}\t${outcome.code}\t${outcome.seconds.toFixed(2)} s\t${(outcome.peak_rss_bytes / 2 ** 20).toFixed(0)} MiB`,
        );
  console.log(
    `${all.length} mutants; slowest ${slowest.label} ${slowest.seconds.toFixed(1)} s; highest peak RSS ${worst.label} ${(worst.peak_rss_bytes / 2 ** 20).toFixed(0)} MiB`,
  );
});
