import type { CaptureAdapter } from "./capture-adapter.ts";
import { commandAdapter } from "./command/command-capture.ts";
import { pySpyAdapter } from "./py-spy/py-spy-capture.ts";
import { perfAdapter } from "./perf/perf-capture.ts";
import { pyperfAdapter } from "./pyperf/pyperf-capture.ts";
import { pytestAdapter } from "./pytest/pytest-adapter.ts";
import { coverageAdapter } from "./coverage/coverage-capture.ts";
import { memrayAdapter } from "./memray/memray-capture.ts";
import { torchProfilerAdapter } from "./torch-profiler/torch-profiler-capture.ts";
import { pythonStartupAdapter } from "./python-startup/python-startup-capture.ts";
import { v8Adapter } from "./v8/v8-capture.ts";

/** Every adapter that plan_capture can run, by name. Adding an adapter is one line here. */
export const captureAdapters: ReadonlyMap<string, CaptureAdapter> = new Map([
  [commandAdapter.descriptor.name, commandAdapter],
  [pySpyAdapter.descriptor.name, pySpyAdapter],
  [perfAdapter.descriptor.name, perfAdapter],
  [pyperfAdapter.descriptor.name, pyperfAdapter],
  [pytestAdapter.descriptor.name, pytestAdapter],
  [coverageAdapter.descriptor.name, coverageAdapter],
  [memrayAdapter.descriptor.name, memrayAdapter],
  [torchProfilerAdapter.descriptor.name, torchProfilerAdapter],
  [pythonStartupAdapter.descriptor.name, pythonStartupAdapter],
  [v8Adapter.descriptor.name, v8Adapter],
]);
