import type { CaptureAdapter } from "./capture-adapter.ts";
import { commandAdapter } from "./command/command-capture.ts";
import { pySpyAdapter } from "./py-spy/py-spy-capture.ts";

/** Every adapter that plan_capture can run, by name. Adding an adapter is one line here. */
export const captureAdapters: ReadonlyMap<string, CaptureAdapter> = new Map([
  [commandAdapter.descriptor.name, commandAdapter],
  [pySpyAdapter.descriptor.name, pySpyAdapter],
]);
