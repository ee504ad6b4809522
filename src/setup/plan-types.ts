/** The documents setup plans, reports and verifies, and the options its service takes. */
import type { ClientId, ConfigFormat } from "./clients.ts";
import type { ClientState, FileIntent } from "./client-config.ts";
import type { SetupEnvironment } from "./environment.ts";
import type { FileSnapshot } from "./files.ts";
import type { ActivePointer, IntegrityExpectation, RuntimeRecord, RuntimeSource } from "./runtime-store.ts";
import type { RuntimeCheck } from "./runtime-verify.ts";

export type SetupOperation = "configure" | "remove" | "rollback";
export type ClientAction = "create" | "update" | "already_current" | "remove" | "not_configured";

export type ClientStatus = {
  client: ClientId;
  display_name: string;
  path: string;
  detected: boolean;
  state: ClientState;
  problem: string | null;
  /** The tool families its launcher exposes (null: all). */
  tools: string[] | null;
};

export type SetupState = {
  schema_version: 1;
  data_root: string;
  active: ActivePointer | null;
  installed_versions: string[];
  source: { version: string; kind: "self" | "file"; path: string } | null;
  journal_pending: boolean;
  clients: ClientStatus[];
};

export type ClientPlan = {
  client: ClientId;
  display_name: string;
  path: string;
  resolved_path: string;
  format: ConfigFormat;
  action: ClientAction;
  detected: boolean;
  /** selected: named by the request; connected: already connected, so it follows the active runtime. */
  reason: "selected" | "connected";
  before_sha256: string | null;
  after_sha256: string | null;
  diff: string[];
};

export type RuntimeAction = "install" | "reuse" | "repair" | "not_required";

export type SetupPlan = {
  schema_version: 1;
  operation: SetupOperation;
  version: string | null;
  runtime: {
    action: RuntimeAction;
    executable: string | null;
    sha256: string | null;
    source: string | null;
    /** Why a repair is needed (the damage found); null otherwise. */
    problem: string | null;
  };
  active: { from: string | null; to: string | null };
  clients: ClientPlan[];
  warnings: string[];
};

/** `tools`: the families the launchers of the selected clients expose (undefined: keep what each has). */
export type SetupRequest = { operation: SetupOperation; clients: ClientId[]; version?: string | undefined; tools?: string[] | null };

export type PlannedFile = { client: ClientId; path: string; intent: FileIntent; snapshot: FileSnapshot };

export type PreparedSetup = {
  plan: SetupPlan;
  files: PlannedFile[];
  activeSnapshot: FileSnapshot;
  activeAfter: Uint8Array | null;
  /** Install, reuse or repair from this source (same version); null when reusing another version. */
  install: RuntimeSource | null;
  reuse: RuntimeRecord | null;
};

export type SetupReport = {
  schema_version: 1;
  operation: SetupOperation;
  version: string | null;
  executable: string | null;
  runtime_installed: boolean;
  runtime_repaired: boolean;
  /** Where a damaged runtime was moved; null when none was. */
  quarantined: string | null;
  runtime_verified: boolean;
  changed_clients: ClientId[];
  unchanged_clients: ClientId[];
  recovered_files: string[];
  warnings: string[];
};

export type VerifyReport = {
  schema_version: 1;
  operation: "verify";
  ok: boolean;
  version: string | null;
  executable: string | null;
  runtime: { version_ok: boolean; handshake_ok: boolean; tools: number | null; sha256_ok: boolean };
  clients: Array<{ client: ClientId; display_name: string; path: string; state: ClientState }>;
  drifted_clients: ClientId[];
  problems: string[];
};

export type SetupServiceOptions = {
  environment: SetupEnvironment;
  /** What configure installs; null when running from sources without FLAMEOX_SETUP_RUNTIME_SOURCE. */
  source: RuntimeSource | null;
  integrity?: IntegrityExpectation;
  lockTimeoutMs?: number;
  /** Test hook: throw after this many writes (a partial failure, rolled back in-process). */
  failAfterWrites?: number;
  /** Test hook: runs between the read and the write of a client config (a concurrent writer's moment). */
  beforeConfigWrite?: (client: ClientId, path: string, attempt: number) => void;
  checkRuntime?: (executable: string, version: string) => Promise<RuntimeCheck>;
};
