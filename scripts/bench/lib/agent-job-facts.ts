/**
 * What each of the eleven jobs must answer, and how an answer's fact is checked against it.
 * Not a benchmark module itself.
 */
import { expectedFacts } from "./agent-job-workloads.ts";
import type { JobId } from "./agent-jobs-ours.ts";

export const jobIds: JobId[] = [
  "cpu_hotspots",
  "callers",
  "allocations",
  "leak",
  "pytest",
  "coverage",
  "benchmark_compare",
  "scaling",
  "torch_trace",
  "crash",
  "asan_log",
];

export const jobQuestions: Record<JobId, string> = {
  cpu_hotspots: "CPU hotspots (fresh project)",
  callers: "callers of the top hotspot",
  allocations: "allocations",
  leak: "a leak (retained at exit)",
  pytest: "pytest: which test fails",
  coverage: "coverage: which lines never ran",
  benchmark_compare: "two pyperf benchmarks compared",
  scaling: "scaling sweep",
  torch_trace: "torch.profiler CPU trace",
  crash: "a crashing script",
  asan_log: "an ASan log",
};

export function expectedFactOf(id: JobId): string | number {
  switch (id) {
    case "cpu_hotspots":
      return expectedFacts.hot_function;
    case "callers":
      return expectedFacts.hot_caller;
    case "allocations":
      return expectedFacts.top_allocator;
    case "leak":
      return expectedFacts.leaking_function;
    case "pytest":
      return expectedFacts.failing_test;
    case "coverage":
      return expectedFacts.missed_line;
    case "benchmark_compare":
      return expectedFacts.verdict;
    case "scaling":
      return expectedFacts.scaling_model;
    case "torch_trace":
      return expectedFacts.top_operator;
    case "crash":
      return expectedFacts.exception_type;
    case "asan_log":
      return expectedFacts.sanitizer_error;
  }
}

export function matchesFact(id: JobId, fact: string | number | null): boolean {
  return fact !== null && String(fact) === String(expectedFactOf(id));
}
