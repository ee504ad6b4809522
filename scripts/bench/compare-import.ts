/**
 * Whether two flameox binaries import the same files into the same evidence: for each file, each binary
 * imports it into a fresh project, and every Parquet table of the bundle is digested (its rows in
 * order of all columns, run and artifact ids left out) along with the receipt's tables and
 * limitations. Prints one line per file and binary, and exits 1 when any digest differs.
 *
 *   bun scripts/bench/compare-import.ts BASELINE_BINARY CANDIDATE_BINARY FILE... [-- IMPORT_ARGS...]
 *
 * IMPORT_ARGS default to `--kind execution_trace`; the file's own name (gzip or not) is kept.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { linkSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";

type Digest = { tables: Record<string, string>; receipt: string };

function run(binary: string, args: string[], cwd: string): string {
  const result = spawnSync(binary, args, { cwd, encoding: "utf8", maxBuffer: 64 << 20 });
  if (result.status !== 0) throw new Error(`${binary} ${args.join(" ")} exited ${result.status}: ${result.stderr.slice(0, 2000)}`);
  return result.stdout;
}

async function tableDigest(path: string): Promise<string> {
  const instance = await DuckDBInstance.create(":memory:");
  const connection = await instance.connect();
  try {
    const source = `read_parquet('${path.replaceAll("'", "''")}')`;
    const columns = (await connection.runAndReadAll(`DESCRIBE SELECT * FROM ${source}`))
      .getRowObjectsJS()
      .map((row) => String(row.column_name));
    const kept = columns.filter((column) => column !== "run_id" && column !== "artifact_id").map((column) => `"${column}"`);
    const rows = await connection.runAndReadAll(
      `SELECT count(*) AS n, md5(coalesce(string_agg(CAST(t AS VARCHAR), chr(10) ORDER BY ${kept.map((column) => `t.${column}`).join(", ")}), '')) AS digest
       FROM (SELECT ${kept.join(", ")} FROM ${source}) t`,
    );
    const [row] = rows.getRowObjectsJS();
    return `${row?.n} rows ${row?.digest}`;
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

async function importDigest(binary: string, file: string, importArgs: string[]): Promise<Digest> {
  const project = mkdtempSync(join(tmpdir(), "flameox-compare-"));
  try {
    run(binary, ["init"], project);
    const name = basename(file);
    try {
      linkSync(file, join(project, name));
    } catch {
      symlinkSync(resolve(file), join(project, name));
    }
    const receipt = JSON.parse(run(binary, ["import", name, ...importArgs, "--json"], project)) as {
      evidence?: { tables?: unknown; limitations?: unknown };
    };
    const evidence = join(project, ".diagnostics", "evidence");
    const tables: Record<string, string> = {};
    for (const bundle of readdirSync(evidence).sort()) {
      for (const table of readdirSync(join(evidence, bundle)).sort()) {
        if (table.endsWith(".parquet")) tables[table] = await tableDigest(join(evidence, bundle, table));
      }
    }
    const receiptText = JSON.stringify({ tables: receipt.evidence?.tables, limitations: receipt.evidence?.limitations });
    return { tables, receipt: createHash("sha256").update(receiptText).digest("hex").slice(0, 16) };
  } finally {
    rmSync(project, { recursive: true, force: true });
  }
}

const argv = process.argv.slice(2);
const split = argv.indexOf("--");
const positional = split < 0 ? argv : argv.slice(0, split);
const importArgs = split < 0 ? ["--kind", "execution_trace"] : argv.slice(split + 1);
const [baseline, candidate, ...files] = positional;
if (!baseline || !candidate || files.length === 0) {
  console.error("usage: bun scripts/bench/compare-import.ts BASELINE CANDIDATE FILE... [-- IMPORT_ARGS...]");
  process.exit(2);
}
let differing = 0;
for (const file of files) {
  const before = await importDigest(baseline, file, importArgs);
  const after = await importDigest(candidate, file, importArgs);
  const same = JSON.stringify(before) === JSON.stringify(after);
  if (!same) differing += 1;
  console.log(`${same ? "same" : "DIFFERENT"} ${file}`);
  for (const [label, digest] of [
    ["baseline", before],
    ["candidate", after],
  ] as const) {
    if (same && label === "candidate") continue;
    console.log(
      `  ${label}: receipt ${digest.receipt} ${Object.entries(digest.tables)
        .map(([table, text]) => `${table}: ${text}`)
        .join("; ")}`,
    );
  }
}
process.exit(differing > 0 ? 1 : 0);
