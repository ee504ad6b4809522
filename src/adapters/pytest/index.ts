export * from "./pytest-capture.ts";
export * from "./pytest-probe.ts";
export * from "./pytest-events-extractor.ts";
