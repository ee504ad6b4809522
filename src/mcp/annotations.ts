/** The interface contract's annotation presets. Every tool takes exactly one; a registry test checks the rules. */
export type ToolAnnotationHints = {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
};

/** Queries, status, analyses and plans: no durable change. */
export const readOnly: ToolAnnotationHints = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
/** Imports, records, revisions: additive, not idempotent. */
export const additive: ToolAnnotationHints = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };
/** Configuration and initialization: mutating, idempotent for an identical request, never executing. */
export const configure: ToolAnnotationHints = { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false };
/** Runs a workload: an uncontained process may modify files or use the network. */
export const execute: ToolAnnotationHints = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true };
/** Detached start/cancel: reconnect with the same idempotency key. */
export const idempotentExecute: ToolAnnotationHints = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: true,
  openWorldHint: true,
};
