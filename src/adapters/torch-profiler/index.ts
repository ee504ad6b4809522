export * from "./torch-profiler-adapter.ts";
