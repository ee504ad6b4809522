/**
 * The one typed error hierarchy and the factories that build it. Services throw; each transport
 * translates once (MCP into the envelope, CLI into JSON or text plus an exit code).
 */
export * from "./errors/flameox-error.ts";
export * from "./errors/recovery.ts";
export * from "./errors/factories.ts";
export * from "./errors/retelling.ts";
