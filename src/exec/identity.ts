/**
 * Identity of what a run ran as and on: process leases, the source tree, and the environment.
 * Each lives in its own module; this one gathers them for callers.
 */
export { bootId, isProcessAlive, type ProcessLiveness, processLiveness, processStartTime } from "./process-identity.ts";
export {
  type SourceIdentity,
  type SourceIdentityOptions,
  sourceIdentity,
  type SourceQuality,
  type UntrackedFile,
} from "./source-identity.ts";
export {
  type EnvironmentIdentity,
  environmentIdentity,
  type InterpreterIdentity,
  type InterpreterIdentityOptions,
  interpreterIdentity,
  type MachineIdentity,
  machineIdentity,
  type PythonIdentity,
} from "./environment-identity.ts";
