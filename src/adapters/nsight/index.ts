export * from "./nsight-systems-import.ts";
