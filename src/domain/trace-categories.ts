/**
 * Trace event categories flameox knows by name: those kineto (torch.profiler) writes, which name the
 * producer and which analyze_pytorch reads, and those that mark an accelerator's own track (device
 * work on the accelerator's clock, as opposed to host threads). One list, read by the Chrome trace
 * extractor and by the analyses.
 */
export const torchTraceCategories: readonly string[] = [
  "cpu_op",
  "python_function",
  "user_annotation",
  "cpu_instant_event",
  "kernel",
  "cuda_runtime",
  "gpu_memcpy",
  "gpu_memset",
  "ac2g",
  "cuda_driver",
];

/**
 * Slices that run on an accelerator's track (kineto's GPU/MTIA pids, Nsight's device rows): kernels,
 * copies and sets, annotations and synchronization drawn on the device timeline. A track holding
 * one of them is an accelerator track, so its time is counted apart from host (CPU) time.
 */
export const acceleratorTrackCategories: readonly string[] = [
  "kernel",
  "gpu_memcpy",
  "gpu_memset",
  "gpu_user_annotation",
  "cuda_sync",
  "cuda_profiler_range",
  "cuda_memcpy",
  "cuda_memset",
  "mtia_ccp_events",
];

/** Device work proper (what the accelerator executes), the part of accelerator time analyze_pytorch sums. */
export const acceleratorWorkCategories: readonly string[] = ["kernel", "gpu_memcpy", "gpu_memset", "cuda_memcpy", "cuda_memset"];
