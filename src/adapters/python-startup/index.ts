export * from "./python-startup-adapter.ts";
