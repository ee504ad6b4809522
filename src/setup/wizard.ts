/**
 * The interactive lifecycle (a TTY only): connect or update clients, disconnect, update to this
 * version, roll back, verify. Every mutation shows the full preview and asks with default "no".
 * Esc / Ctrl-C at any prompt cancels (PROCESS_CANCELLED, exit 8).
 */
import { type FlameoxError, processCancelled } from "../domain/errors.ts";
import { clientDefinition, clientIds, type ClientId } from "./clients.ts";
import { renderPlan, renderReport, renderState, renderVerify } from "./render.ts";
import { compareVersions } from "./runtime-store.ts";
import type { SetupRequest, SetupService } from "./service.ts";

type Action = "update" | "configure" | "remove" | "verify" | "rollback" | "exit";

function cancelled(): FlameoxError {
  return processCancelled("Setup cancelled.", { remediation: ["Nothing was changed."] });
}

export type WizardOptions = {
  remove?: boolean;
  /** The tool families this flameox serves and how many tools each holds (for clients with tool limits). */
  families?: Array<{ name: string; tools: number }>;
};

/** Families preselected for a client taking at most `limit` tools: all when they fit, else in order until full. */
export function familiesWithin(families: Array<{ name: string; tools: number }>, limit: number): string[] {
  const chosen: string[] = [];
  let total = 0;
  for (const family of families) {
    if (total + family.tools > limit) continue;
    chosen.push(family.name);
    total += family.tools;
  }
  return chosen;
}

type Prompts = typeof import("@clack/prompts");
type SetupState = ReturnType<SetupService["inspect"]>;
type Family = { name: string; tools: number };

/** The prompt library plus `answer`, which turns Esc / Ctrl-C at any prompt into PROCESS_CANCELLED. */
type Prompter = { prompts: Prompts; answer: <T>(value: T | symbol) => T };

export async function runSetupWizard(service: SetupService, options: WizardOptions = {}): Promise<number> {
  const prompts = await import("@clack/prompts");
  const answer = <T>(value: T | symbol): T => {
    if (prompts.isCancel(value)) {
      prompts.cancel("Setup cancelled.");
      throw cancelled();
    }
    return value as T;
  };
  const prompter: Prompter = { prompts, answer };
  const state = await greet(service, prompts);
  const configured = service.configuredClients(state);
  const action = options.remove ? "remove" : await chooseAction(prompter, state, configured);
  if (action === "exit") {
    prompts.outro("Nothing changed.");
    return 0;
  }
  if (action === "verify") return verifyStep(service, prompts);
  const request = await chooseRequest(prompter, state, configured, action, options.families ?? []);
  await confirmAndApply(service, prompter, request);
  return 0;
}

/** Rolls back an interrupted run, then shows where things stand. */
async function greet(service: SetupService, prompts: Prompts): Promise<SetupState> {
  prompts.intro("flameox setup");
  const recovery = await service.recover();
  if (recovery.restored.length > 0) prompts.log.warn(`Rolled back an interrupted setup: ${recovery.restored.join(", ")}`);
  for (const warning of recovery.warnings) prompts.log.warn(warning);
  const state = service.inspect();
  prompts.note(renderState(state), "Status");
  if (state.active && state.source && compareVersions(state.active.version, state.source.version) > 0) {
    prompts.log.warn(
      `This flameox (${state.source.version}) is older than the active runtime ${state.active.version}. Run \`npx flameox@latest setup\` for the newest.`,
    );
  }
  return state;
}

async function chooseAction({ prompts, answer }: Prompter, state: SetupState, configured: ClientId[]): Promise<Action> {
  if (!state.active) return "configure";
  const choices: Array<{ value: Action; label: string }> = [];
  if (state.source && compareVersions(state.source.version, state.active.version) > 0 && configured.length > 0) {
    choices.push({ value: "update", label: `Update flameox to ${state.source.version}` });
  }
  choices.push({ value: "configure", label: "Connect or update MCP clients" });
  choices.push({ value: "remove", label: "Disconnect MCP clients" });
  choices.push({ value: "verify", label: "Verify connected clients and the active runtime" });
  if (state.installed_versions.length > 1 && configured.length > 0)
    choices.push({ value: "rollback", label: "Roll back to an installed version" });
  choices.push({ value: "exit", label: "Exit" });
  return answer<Action>(await prompts.select<Action>({ message: "What would you like to do?", options: choices }));
}

async function verifyStep(service: SetupService, prompts: Prompts): Promise<number> {
  const spin = prompts.spinner();
  spin.start("Verifying the runtime and client launchers");
  const report = await service.verify();
  spin.stop(report.ok ? "Verified" : "Verification failed");
  prompts.note(renderVerify(report), "Verify");
  prompts.outro(report.ok ? "All good." : "Run flameox setup to reconnect the named clients.");
  return report.ok ? 0 : 1;
}

async function chooseRequest(
  prompter: Prompter,
  state: SetupState,
  configured: ClientId[],
  action: Exclude<Action, "exit" | "verify">,
  families: Family[],
): Promise<SetupRequest> {
  if (action === "update") return { operation: "configure", clients: configured };
  if (action === "rollback") {
    const versions = state.installed_versions.filter((version) => version !== state.active?.version);
    const version = prompter.answer<string>(
      await prompter.prompts.select<string>({
        message: "Select an installed runtime:",
        options: versions.map((value) => ({ value, label: value })),
      }),
    );
    return { operation: "rollback", clients: configured, version };
  }
  const selected = await chooseClients(prompter, state, configured, action === "remove");
  const request: SetupRequest = { operation: action === "remove" ? "remove" : "configure", clients: selected };
  if (action !== "remove") {
    const tools = await chooseFamilies(prompter, selected, families);
    if (tools !== undefined) request.tools = tools;
  }
  return request;
}

async function chooseClients(
  { prompts, answer }: Prompter,
  state: SetupState,
  configured: ClientId[],
  remove: boolean,
): Promise<ClientId[]> {
  const detected = new Set(state.clients.filter((client) => client.detected).map((client) => client.client));
  const connected = new Set(configured);
  // A client whose config cannot be read is shown but cannot be chosen: picking it would abort the run.
  const malformed = new Map(
    state.clients.filter((client) => client.state === "malformed").map((client) => [client.client, client.problem]),
  );
  const selected = answer<ClientId[]>(
    await prompts.multiselect<ClientId>({
      message: remove ? "Select MCP clients to disconnect:" : "Select MCP clients to connect:",
      options: clientIds.map((id) => ({
        value: id,
        label: clientDefinition(id).displayName,
        hint: malformed.has(id)
          ? "config unreadable; repair it first"
          : [detected.has(id) ? "detected" : "", connected.has(id) ? "connected" : ""].filter(Boolean).join(", ") || undefined,
        disabled: malformed.has(id),
      })),
      initialValues: clientIds.filter((id) => !malformed.has(id) && (remove ? connected.has(id) : detected.has(id))),
      required: true,
    }),
  );
  for (const [id, problem] of malformed) prompts.log.warn(`${clientDefinition(id).displayName} was left out: ${problem}`);
  if (!remove) prompts.log.info("Client detection is informational; only selected clients will change.");
  return selected;
}

/** For clients that cap their tool count: the families to expose (null = all), or undefined when none caps. */
async function chooseFamilies(
  { prompts, answer }: Prompter,
  selected: ClientId[],
  families: Family[],
): Promise<string[] | null | undefined> {
  const limited = selected.map(clientDefinition).filter((definition) => definition.toolLimit !== undefined);
  if (limited.length === 0 || families.length === 0) return undefined;
  const limit = Math.min(...limited.map((definition) => definition.toolLimit!));
  const total = families.reduce((sum, family) => sum + family.tools, 0);
  const chosen = answer<string[]>(
    await prompts.multiselect<string>({
      message: `${limited.map((definition) => definition.displayName).join(" and ")} take at most ${limit} tools (flameox has ${total}). Tool families to expose:`,
      options: families.map((family) => ({ value: family.name, label: family.name, hint: `${family.tools} tools` })),
      initialValues: familiesWithin(families, limit),
      required: true,
    }),
  );
  return chosen.length === families.length ? null : chosen;
}

async function confirmAndApply(service: SetupService, { prompts, answer }: Prompter, request: SetupRequest): Promise<void> {
  const prepared = await service.plan(request);
  prompts.note(renderPlan(prepared.plan), "Preview");
  const confirmed = answer<boolean>(await prompts.confirm({ message: "Apply these changes?", initialValue: false }));
  if (!confirmed) {
    prompts.cancel("Setup cancelled.");
    throw cancelled();
  }
  const spin = prompts.spinner();
  spin.start(prepared.plan.runtime.action === "install" ? "Installing and verifying the runtime" : "Applying");
  let report;
  try {
    report = await service.apply(prepared);
  } catch (error) {
    spin.stop("Setup failed; nothing was left half-done.");
    throw error;
  }
  spin.stop("Done");
  prompts.outro(renderReport(report, (id) => clientDefinition(id as ClientId).displayName));
}
