export * from "./memray-adapter.ts";
