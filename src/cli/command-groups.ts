import type { CommandDef } from "citty";

/** Command groups added by later layers (capture, runs, analyze, …), one file each. */
export const cliCommandGroups: Record<string, CommandDef> = {};
