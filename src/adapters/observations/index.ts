export * from "./observations-adapter.ts";
