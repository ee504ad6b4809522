/**
 * `flameox setup --verify`: read-only. The active runtime is intact, answers `--version` exactly and a
 * real MCP handshake (also with each client's own `--tools`), and every connected client launches
 * exactly it. Every problem comes with the command that repairs it.
 */
import { existsSync } from "node:fs";
import { clientDefinition, clientIds, type ClientId } from "./clients.ts";
import type { ClientStatus, VerifyReport } from "./plan-types.ts";
import type { ActivePointer, RuntimeRecord, RuntimeStore } from "./runtime-store.ts";
import { checkMcpHandshake, checkRuntimeVersion } from "./runtime-verify.ts";

/** Read-only: the active runtime works and every configured client launches exactly it. */
export async function verifySetup(
  store: RuntimeStore,
  statusOf: (id: ClientId, active: ActivePointer | null) => ClientStatus,
): Promise<VerifyReport> {
  const problems: string[] = [];
  if (existsSync(store.journalPath)) {
    problems.push(`An interrupted setup left ${store.journalPath}; the next \`flameox setup\` run rolls it back.`);
  }
  let active: ActivePointer | null = null;
  try {
    active = store.readActive();
  } catch (error) {
    problems.push((error as Error).message);
  }
  const runtime = { version_ok: false, handshake_ok: false, tools: null as number | null, sha256_ok: false };
  const clientsReport: VerifyReport["clients"] = [];
  const drifted: ClientId[] = [];
  const toolSelections = new Set<string>();
  for (const id of clientIds) {
    const status = statusOf(id, active);
    if (status.state === "absent") continue;
    clientsReport.push({ client: id, display_name: status.display_name, path: status.path, state: status.state });
    if (status.state === "malformed") problems.push(`${status.problem}`);
    if (status.state === "drift") drifted.push(id);
    if (status.tools) toolSelections.add(status.tools.join(","));
  }
  if (drifted.length > 0) {
    problems.push(
      `Not launching the active runtime exactly: ${drifted.map((id) => clientDefinition(id).displayName).join(", ")}. Run \`flameox setup --refresh --yes\` to re-point them.`,
    );
  }
  if (!active) problems.push("No active flameox runtime is configured; run flameox setup.");
  else await verifyRuntime(store, active, runtime, [...toolSelections], problems);
  return {
    schema_version: 1,
    operation: "verify",
    ok: problems.length === 0,
    version: active?.version ?? null,
    executable: active?.executable ?? null,
    runtime,
    clients: clientsReport,
    drifted_clients: drifted,
    problems,
  };
}

async function verifyRuntime(
  store: RuntimeStore,
  active: ActivePointer,
  runtime: VerifyReport["runtime"],
  toolSelections: string[],
  problems: string[],
): Promise<void> {
  const health = store.health(active.version);
  const repair = `Rerun \`flameox setup --refresh --yes\` with the flameox ${active.version} binary to repair it.`;
  if (health.state === "absent") {
    problems.push(`The active runtime ${active.version} is not installed at ${active.executable}. ${repair}`);
    return;
  }
  runtime.sha256_ok = health.state === "intact" && health.record.sha256 === active.sha256;
  if (health.state === "damaged") problems.push(`The active runtime ${active.version} is damaged: ${health.reason}. ${repair}`);
  else if (!runtime.sha256_ok)
    problems.push(`The active runtime ${active.executable} does not match the active pointer's sha256. ${repair}`);
  const record: RuntimeRecord | null = health.state === "intact" ? health.record : null;
  if (!record) return;
  try {
    await checkRuntimeVersion(record.executable, active.version);
    runtime.version_ok = true;
    runtime.tools = await checkMcpHandshake(record.executable);
    // Each client's own --tools selection must be accepted by this runtime, too.
    for (const tools of toolSelections) await checkMcpHandshake(record.executable, ["--tools", tools]);
    runtime.handshake_ok = true;
  } catch (error) {
    problems.push((error as Error).message);
  }
}
