export * from "./pyperf-adapter.ts";
