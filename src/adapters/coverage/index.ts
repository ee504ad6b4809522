export * from "./coverage-adapter.ts";
