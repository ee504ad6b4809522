/** Human text for previews and reports; the same words in the wizard and in `--dry-run`. */
import type { ClientPlan, SetupPlan, SetupReport, SetupState, VerifyReport } from "./service.ts";

const actionWords: Record<ClientPlan["action"], string> = {
  create: "create",
  update: "update",
  already_current: "already current",
  remove: "remove entry",
  not_configured: "not configured",
};

export function renderPlan(plan: SetupPlan, options: { diffs?: boolean } = {}): string {
  const lines: string[] = ["Planned changes"];
  if (plan.operation !== "remove" && plan.version) {
    lines.push(`  Runtime: ${plan.runtime.action} ${plan.version}${plan.runtime.source ? ` from ${plan.runtime.source}` : ""}`);
    if (plan.runtime.problem)
      lines.push(`  Repair: the installed ${plan.version} ${plan.runtime.problem.replace(/^its /, "has: ")}; it moves to quarantine`);
    lines.push(`  Launcher: ${plan.runtime.executable}`);
    if (plan.runtime.sha256) lines.push(`  sha256: ${plan.runtime.sha256}`);
    if (plan.active.from !== plan.active.to) lines.push(`  Active runtime: ${plan.active.from ?? "none"} → ${plan.active.to}`);
  }
  for (const client of plan.clients) {
    const symlink = client.resolved_path !== client.path ? ` (→ ${client.resolved_path})` : "";
    const notes = [client.detected ? "" : "not detected", client.reason === "connected" ? "connected" : ""].filter(Boolean).join(", ");
    lines.push(`  ${client.display_name}: ${actionWords[client.action]} ${client.path}${symlink}${notes ? ` (${notes})` : ""}`);
    if (options.diffs !== false) for (const line of client.diff) lines.push(`      ${line}`);
  }
  for (const warning of plan.warnings) lines.push(`  Warning: ${warning}`);
  return lines.join("\n");
}

export function renderReport(report: SetupReport, displayNames: (id: string) => string): string {
  const names = (ids: string[]): string => ids.map(displayNames).join(", ");
  const lines: string[] = [];
  if (report.runtime_repaired)
    lines.push(`Repaired flameox ${report.version} at ${report.executable} (the damaged copy is in ${report.quarantined}).`);
  else if (report.runtime_installed) lines.push(`Installed flameox ${report.version} at ${report.executable}.`);
  else if (report.runtime_verified) lines.push(`Verified flameox ${report.version} at ${report.executable}.`);
  if (report.changed_clients.length === 0) lines.push("Everything is already current.");
  else {
    lines.push(`${report.operation === "remove" ? "Disconnected" : "Updated"}: ${names(report.changed_clients)}.`);
    lines.push("Restart those clients to pick up the change.");
  }
  for (const warning of report.warnings) lines.push(`Warning: ${warning}`);
  if (report.operation !== "remove" && report.changed_clients.length + report.unchanged_clients.length > 0) {
    lines.push("Each project still needs `flameox init` (or the initialize_workspace tool) once.");
  }
  return lines.join("\n");
}

export function renderVerify(report: VerifyReport): string {
  const lines: string[] = [];
  if (report.ok) {
    lines.push(`flameox ${report.version} runtime verified (${report.runtime.tools} tools over MCP).`);
    lines.push(
      report.clients.length === 0
        ? "No MCP clients are currently connected."
        : `Configured launchers verified: ${report.clients.map((client) => client.display_name).join(", ")}.`,
    );
  } else {
    lines.push("Verification failed:");
    for (const problem of report.problems) lines.push(`  - ${problem}`);
  }
  return lines.join("\n");
}

export function renderState(state: SetupState): string {
  const connected = state.clients.filter((client) => client.state === "current" || client.state === "drift");
  const lines = [
    `Active runtime: ${state.active ? `${state.active.version} (${state.active.executable})` : "none"}`,
    `Connected: ${connected.length ? connected.map((client) => `${client.display_name}${client.state === "drift" ? " (differs)" : ""}`).join(", ") : "none"}`,
  ];
  if (state.source) lines.push(`This flameox: ${state.source.version}`);
  for (const client of state.clients) if (client.state === "malformed") lines.push(`Warning: ${client.display_name}: ${client.problem}`);
  return lines.join("\n");
}
