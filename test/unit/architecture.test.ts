import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { scanSource, typeScriptFiles } from "../support/source-scan.ts";

const repository = resolve(import.meta.dir, "../..");
const source = join(repository, "src");

/** The rules live in docs/layers.json, so the design names them once and this test only checks them. */
type LayerRules = {
  layers: Record<string, { may_import: string[] }>;
  transport_packages: { packages: string[]; forbidden_in: string[] };
  sql: { allowed_in: string[]; evidence_query_text_in: Record<string, string>; foreign_artifact_files: Record<string, string> };
  services: { composition_root: string; acyclic: boolean };
  resource_uris: { builder: string };
  request_schemas: { home: string; not_in: string[] };
};
const rules = JSON.parse(readFileSync(join(repository, "docs", "layers.json"), "utf8")) as LayerRules;

const files = typeScriptFiles;

const sources = files(source).map((path) => ({
  path,
  name: relative(repository, path),
  layer: relative(source, path).split("/")[0]!,
  text: readFileSync(path, "utf8"),
}));

function imports(text: string): string[] {
  return [...text.matchAll(/(?:from|import)\s*\(?\s*["']([^"']+)["']/g)].map((match) => match[1]!);
}

const scan = scanSource;

test("layer rules come from docs/layers.json and are at least as strict as the founding design", () => {
  const allowed = Object.fromEntries(Object.entries(rules.layers).map(([layer, rule]) => [layer, rule.may_import]));
  // The founding layer rules: domain is pure; config, store, exec rest on domain; adapters never touch the store;
  // analysis is pure; services never reach a transport; transports reach services.
  expect(allowed.domain).toEqual(["domain"]);
  expect(allowed.config).toEqual(["domain", "config"]);
  expect(allowed.exec).toEqual(["domain", "exec"]);
  for (const inner of ["domain", "config", "store", "exec", "adapters", "analysis"])
    for (const outer of ["services", "cli", "mcp", "setup"])
      expect({ inner, imports: allowed[inner]!.includes(outer) }).toEqual({ inner, imports: false });
  expect(allowed.adapters).not.toContain("store");
  expect(allowed.analysis).toEqual(["domain", "analysis"]);
  expect(allowed.services).not.toContain("mcp");
  expect(allowed.services).not.toContain("cli");
  expect(allowed.mcp).not.toContain("store");
  expect(allowed.cli).not.toContain("store");
  expect(new Set(Object.keys(allowed))).toEqual(
    new Set(["domain", "config", "store", "exec", "adapters", "analysis", "services", "setup", "mcp", "cli"]),
  );
});

test("imports point inward and inner layers never import transport libraries", () => {
  const violations: string[] = [];
  for (const file of sources) {
    const allowed = rules.layers[file.layer]?.may_import;
    if (!allowed) continue;
    for (const specifier of imports(file.text)) {
      if (specifier.startsWith(".")) {
        const target = relative(source, resolve(dirname(file.path), specifier)).split("/")[0]!;
        if (target in rules.layers && !allowed.includes(target)) violations.push(`${file.name} → ${specifier}`);
      } else if (rules.transport_packages.forbidden_in.includes(file.layer)) {
        if (rules.transport_packages.packages.some((name) => specifier === name || specifier.startsWith(`${name}/`)))
          violations.push(`${file.name} → ${specifier}`);
      }
    }
  }
  expect(violations).toEqual([]);
});

/** Statement shapes, not single words: "Select a client" or `Array.from` are not SQL. */
const sqlStatement =
  /\bselect\b[\s\S]*\bfrom\s+[\w"(]|\binsert\s+(?:or\s+\w+\s+)?into\b|\bupdate\s+\w+\s+set\b|\bdelete\s+from\b|\bcreate\s+(?:table|index|view)\b|\bpragma\s+\w|\bwith\s+\w+\s+as\s*\(/i;
const sqliteCall = /\b\w*(?:[dD]atabase|\bdb)\s*\)?\s*\.\s*(?:query|prepare|run|exec)\s*[<(]/;

test("SQL lives in src/store: no database calls and no SQL statements anywhere else", () => {
  const violations: string[] = [];
  for (const file of sources) {
    if (rules.sql.allowed_in.includes(file.layer) || file.name in rules.sql.foreign_artifact_files) continue;
    const { code, strings } = scan(file.text);
    if (sqliteCall.test(code)) violations.push(`${file.name}: calls a database`);
    if (file.layer in rules.sql.evidence_query_text_in) continue;
    const statement = strings.find((text) => sqlStatement.test(text));
    if (statement) violations.push(`${file.name}: SQL text "${statement.slice(0, 60)}"`);
  }
  expect(violations).toEqual([]);
  // The allowances are real: each exempt file exists and still needs its exemption.
  for (const name of Object.keys(rules.sql.foreign_artifact_files)) {
    const file = sources.find((entry) => entry.name === name);
    expect({ name, exists: file !== undefined }).toEqual({ name, exists: true });
    const { code, strings } = scan(file!.text);
    expect({ name, usesSql: sqliteCall.test(code) || strings.some((text) => sqlStatement.test(text)) }).toEqual({ name, usesSql: true });
  }
});

test("services form an explicit graph: none imports the container and no import cycle joins service modules", () => {
  const root = join(repository, rules.services.composition_root);
  const services = sources.filter((file) => file.layer === "services");
  const edges = new Map<string, string[]>();
  const containerUsers: string[] = [];
  for (const file of services) {
    const targets = imports(file.text)
      .filter((specifier) => specifier.startsWith("."))
      .map((specifier) => resolve(dirname(file.path), specifier))
      .filter((target) => relative(source, target).startsWith("services/"));
    if (file.path !== root && targets.includes(root)) containerUsers.push(file.name);
    edges.set(
      file.path,
      targets.filter((target) => target !== root),
    );
  }
  expect(containerUsers).toEqual([]);
  const cycles: string[] = [];
  const state = new Map<string, "visiting" | "done">();
  const visit = (node: string, path: string[]) => {
    if (state.get(node) === "done") return;
    if (state.get(node) === "visiting") {
      cycles.push([...path.slice(path.indexOf(node)), node].map((entry) => relative(source, entry)).join(" → "));
      return;
    }
    state.set(node, "visiting");
    for (const next of edges.get(node) ?? []) visit(next, [...path, node]);
    state.set(node, "done");
  };
  for (const node of edges.keys()) visit(node, []);
  expect(rules.services.acyclic).toBe(true);
  expect(cycles).toEqual([]);
});

test("every flameox:// URI with an id in it is built by the one resource-URI module", () => {
  const builder = join(repository, rules.resource_uris.builder);
  const violations = sources.filter((file) => file.path !== builder && /`flameox:\/\/[^`]*\$\{/.test(file.text)).map((file) => file.name);
  expect(violations).toEqual([]);
});

test("request schemas are declared once, in domain/requests: the transports declare no object schema of their own", () => {
  expect(sources.some((file) => file.name.startsWith(rules.request_schemas.home))).toBe(true);
  const violations = sources
    .filter((file) => rules.request_schemas.not_in.includes(file.layer))
    .filter((file) => /\bv\.(?:strictObject|object|looseObject)\s*\(/.test(scan(file.text).code))
    .map((file) => file.name);
  expect(violations).toEqual([]);
});
