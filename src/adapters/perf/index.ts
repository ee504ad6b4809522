export * from "./perf-adapter.ts";
