/**
 * What the Chrome trace extractor knows of kineto (torch.profiler) traces: the categories that name
 * the producer, and its bookkeeping spans (category `Trace` on its `Spans` track: `PyTorch Profiler
 * (0)`, `__MTIA_CCP_events__ (-1)`, `MTIA Activity Trace (-1)`), which cover the whole recording and
 * are not work.
 */
import { torchTraceCategories } from "../../domain/trace-categories.ts";
import type { TraceEventRecord } from "./chrome-event-record.ts";

const torchCategories = new Set(torchTraceCategories);

const bookkeepingNames = /^(PyTorch Profiler|__MTIA_CCP_events__|MTIA Activity Trace) \(-?\d+\)$/;

/** kineto's profiler spans: bookkeeping, not work. */
export function isBookkeepingSpan(record: TraceEventRecord): boolean {
  return record.category === "Trace" && (record.pid === "Spans" || bookkeepingNames.test(record.name));
}

export function isTorchCategory(category: string | null): boolean {
  return category !== null && torchCategories.has(category);
}
