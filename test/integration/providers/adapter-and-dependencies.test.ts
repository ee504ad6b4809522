/**
 * prepare_adapter and prepare_workload_dependencies through the services, against real interpreters: a
 * fresh venv holding hand-made distributions (one declares a `flameox.adapters` entry point), and the
 * pinned tools venv. Nothing is mocked: discovery and inspection run the interpreters through the broker.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { ConfigureWorkloadInputSchema } from "../../../src/services/workload-service.ts";
import { FlameoxError } from "../../../src/domain/errors.ts";
import { Services } from "../../../src/services/services.ts";
import { temporaryFolder } from "../../support/binary.ts";
import { python as toolsPython } from "../../support/project.ts";

setDefaultTimeout(60_000);

let project: string;
let venv: string;
let sitePackages: string;
let services: Services;
const originalPath = process.env.PATH;
const originalDataHome = process.env.XDG_DATA_HOME;

/** A distribution as pip would leave it: its files, METADATA, entry points and a RECORD listing them all. */
function installDistribution(name: string, version: string, files: Record<string, string>, entryPoints = ""): void {
  const info = `${name}-${version}.dist-info`;
  const written: Record<string, string> = {
    ...files,
    [`${info}/METADATA`]: `Metadata-Version: 2.1\nName: ${name}\nVersion: ${version}\n`,
    ...(entryPoints ? { [`${info}/entry_points.txt`]: entryPoints } : {}),
  };
  const record: string[] = [];
  for (const [path, text] of Object.entries(written)) {
    mkdirSync(join(sitePackages, path, ".."), { recursive: true });
    writeFileSync(join(sitePackages, path), text);
    const hash = createHash("sha256").update(text).digest("base64url");
    record.push(`${path},sha256=${hash},${Buffer.byteLength(text)}`);
  }
  record.push(`${info}/RECORD,,`);
  writeFileSync(join(sitePackages, info, "RECORD"), `${record.join("\n")}\n`);
}

function snapshot(folder: string): string[] {
  return readdirSync(folder, { recursive: true })
    .map(String)
    .sort()
    .map((path) => `${path}:${statSync(join(folder, path)).mtimeMs}`);
}

beforeAll(async () => {
  project = temporaryFolder("providers-approval");
  venv = join(project, ".venv");
  // A venv without pip: no `packaging` either, so the inspection's own fallback is exercised too.
  const made = Bun.spawnSync(["python3", "-m", "venv", "--without-pip", venv], { stdout: "pipe", stderr: "pipe" });
  expect(made.exitCode).toBe(0);
  const lib = readdirSync(join(venv, "lib")).find((entry) => entry.startsWith("python"))!;
  sitePackages = join(venv, "lib", lib, "site-packages");
  installDistribution(
    "fakeadapter",
    "1.0",
    { "fakeadapter/__init__.py": "def adapter():\n    return None\n" },
    "[flameox.adapters]\nfake = fakeadapter:adapter\n",
  );
  installDistribution("olddist", "0.1", { "olddist.py": "VALUE = 1\n" });
  // Discovery asks python3 on PATH: this venv's.
  process.env.PATH = `${join(venv, "bin")}:${originalPath}`;
  process.env.XDG_DATA_HOME = join(project, "data");
  services = new Services({ projectRoot: project });
  await services.workspaces.initialize();
});

afterAll(() => {
  process.env.PATH = originalPath;
  if (originalDataHome === undefined) delete process.env.XDG_DATA_HOME;
  else process.env.XDG_DATA_HOME = originalDataHome;
  services.close();
  rmSync(project, { recursive: true, force: true });
});

test("a third-party adapter is offered for approval, approved bound to its identity, and the approval lapses when a file changes", async () => {
  const before = await services.capabilities.list({ mode: "active_refresh", adapter: "fake" });
  expect(before.capabilities[0]).toMatchObject({ adapter: "fake", provisioning: "third_party_approval", setup_verification: "pending" });
  expect(before.capabilities[0]!.setup).toMatchObject({
    method: "prepare_adapter",
    arguments: { adapter: "fake", distribution: "fakeadapter" },
  });
  expect(before.setup_third_party_adapters).toEqual([{ adapter: "fake", distribution: "fakeadapter" }]);
  expect(before.next_tool).toBe("prepare_adapter");

  const approved = await services.adapterApprovals.prepare({ adapter: "fake", distribution: "fakeadapter" });
  expect(approved).toMatchObject({ action: "approved", version: "1.0", workload_executed: false, next_tool: "list_capabilities" });
  expect(approved.package_identity).toMatch(/^sha256:[0-9a-f]{64}$/);
  const stored = JSON.parse(readFileSync(join(project, ".diagnostics", "adapter-approvals.json"), "utf8"));
  expect(stored.approvals.fakeadapter).toMatchObject({
    package_identity: approved.package_identity,
    adapters: ["fake"],
    provenance: "agent",
  });
  expect((await services.adapterApprovals.prepare({ adapter: "fake", distribution: "FakeAdapter" })).action).toBe("unchanged");

  const approvedView = await services.capabilities.list({ mode: "active_refresh", adapter: "fake" });
  expect(approvedView.capabilities[0]).toMatchObject({ setup: null, setup_verification: "active" });
  expect(approvedView.next_tool).toBeNull();

  // An edit of the installed package's code changes its identity: the approval no longer holds.
  writeFileSync(join(sitePackages, "fakeadapter", "__init__.py"), "def adapter():\n    return 'changed'\n");
  const lapsed = await services.capabilities.list({ mode: "active_refresh", adapter: "fake" });
  expect(lapsed.capabilities[0]!.setup).toMatchObject({ method: "prepare_adapter" });
  expect(lapsed.capabilities[0]!.remediation[0]).toContain("lapsed");
  const again = await services.adapterApprovals.prepare({ adapter: "fake", distribution: "fakeadapter" });
  expect(again.action).toBe("replaced");
  expect(again.package_identity).not.toBe(approved.package_identity);

  const wrong = await services.adapterApprovals.prepare({ adapter: "fake", distribution: "olddist" }).catch((error: unknown) => error);
  expect(wrong).toBeInstanceOf(FlameoxError);
  expect((wrong as FlameoxError).code).toBe("CAPABILITY_UNAVAILABLE");
  expect((wrong as FlameoxError).recovery.next_tool).toBe("list_capabilities");
});

async function declare(name: string, argv: string[], requirements: Record<string, unknown>): Promise<void> {
  await services.workloads.configure(v.parse(ConfigureWorkloadInputSchema, { name, operation: "create", argv, requirements }));
}

test("the workload's own interpreter is asked what it has of its declared distributions; nothing in it changes", async () => {
  writeFileSync(join(project, "job.py"), "print('job')\n");
  await declare("fallback", [join(venv, "bin", "python"), "job.py"], {
    python_distributions: ["fakeadapter>=0.5,<2", "olddist>=1", "absentdist==1.0", "maybedist"],
    optional: ["maybedist"],
  });
  const untouched = snapshot(venv);
  const result = await services.workloadDependencies.inspect("fallback");
  expect(result.requirements).toEqual([
    { requirement: "fakeadapter>=0.5,<2", distribution: "fakeadapter", status: "installed", installed_version: "1.0", optional: false },
    { requirement: "olddist>=1", distribution: "olddist", status: "version_mismatch", installed_version: "0.1", optional: false },
    { requirement: "absentdist==1.0", distribution: "absentdist", status: "missing", installed_version: null, optional: false },
    { requirement: "maybedist", distribution: "maybedist", status: "missing", installed_version: null, optional: true },
  ]);
  expect(result).toMatchObject({ ready: false, missing: ["olddist>=1", "absentdist==1.0"], environment_changed: false, next_tool: null });
  expect(result.remediation[0]).toContain("-m pip install 'olddist>=1' 'absentdist==1.0'");
  expect(result.remediation.join(" ")).toContain("no `packaging`");
  expect(snapshot(venv)).toEqual(untouched);

  // The pinned tools' interpreter has packaging (pip's vendored copy at least): exact specifier semantics.
  await declare("tools", [toolsPython(), "job.py"], { python_distributions: ["pytest==9.2.0", "coverage>=99"] });
  const tools = await services.workloadDependencies.inspect("tools");
  expect(tools.requirements.map((entry) => entry.status)).toEqual(["installed", "version_mismatch"]);
  expect(tools.remediation.join(" ")).not.toContain("no `packaging`");

  await declare("ready", [toolsPython(), "job.py"], { python_distributions: ["pytest>=9"] });
  const ready = await services.workloadDependencies.inspect("ready");
  expect(ready).toMatchObject({ ready: true, next_tool: "plan_capture", next_arguments: { workload_name: "ready" }, remediation: [] });
  const unknown = await services.workloadDependencies.inspect("nope").catch((error: unknown) => error);
  expect((unknown as FlameoxError).recovery.next_tool).toBe("list_declared_workflows");
  expect(existsSync(join(project, ".diagnostics", "adapter-approvals.json"))).toBe(true);
});
