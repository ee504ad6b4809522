export * from "./coverage-adapter.ts";
export * from "./coverage-statements.ts";
