/**
 * The `thread` and `process` labels of a trace's stacks rows. A thread is keyed by pid AND tid; its
 * label is its `thread_name` (else its tid), and when two threads would share a label (three
 * processes' `MainThread`s) each gets its pid and tid added, so per-thread answers never merge
 * them. A process is labelled by its `process_name`, except that a process whose kineto
 * `process_labels` names an accelerator (`GPU 0`, `MTIA 1`, …) is labelled by that, so device
 * time can be told from host time.
 */
import { type StackLabel, ownedString } from "./common.ts";
import type { TraceEventRecord } from "./chrome-event-record.ts";
import type { StackGroup } from "./stack-aggregator.ts";

type LabelledThread = { key: string; pid: string | null; tid: string | null; group: StackGroup };

const deviceLabel = /^(GPU|MTIA|XPU|HPU|TPU|NPU|IPU|Accelerator|Device)\s*\d+/i;

/** Whether a process label names an accelerator (device time, not host time). */
export function isDeviceProcessLabel(label: string | null): boolean {
  return label !== null && deviceLabel.test(label);
}

export class ThreadLabels {
  private readonly processNames = new Map<string, string>();
  private readonly processLabels = new Map<string, string>();
  private readonly threadNames = new Map<string, string>();

  /** Takes the names from a metadata (M) event. */
  metadata(record: TraceEventRecord): void {
    const name = record.metaName;
    const pid = record.pid;
    if (record.nameString === "process_name" && pid !== null && name) this.processNames.set(ownedString(pid), ownedString(name));
    if (record.nameString === "thread_name" && name) this.threadNames.set(`${pid ?? ""}\u0000${record.tid ?? ""}`, ownedString(name));
    if (record.nameString === "process_labels" && pid !== null) {
      const labels = record.argsObject()?.labels;
      if (typeof labels === "string" && labels) this.processLabels.set(ownedString(pid), ownedString(labels));
    }
  }

  /** A py-spy `thread (N): Name` slice names its thread when no metadata event does. */
  contextName(record: TraceEventRecord): void {
    const match = /^thread \([^)]*\): (.+)$/.exec(record.name);
    const key = `${record.pid ?? ""}\u0000${record.tid ?? ""}`;
    if (match && !this.threadNames.has(key)) this.threadNames.set(key, (match[1] as string).trim());
  }

  /** Sets every thread's final labels on its stack group. */
  apply(threads: readonly LabelledThread[]): void {
    const byKey = new Map(threads.map((thread) => [thread.key, thread]));
    for (const label of this.all(threads)) {
      const thread = byKey.get(label.key);
      if (!thread) continue;
      thread.group.thread = label.thread;
      thread.group.process = label.process;
    }
  }

  /** Labels a group by its thread key, for rows relabelled later by the sink. */
  keyed(thread: LabelledThread): void {
    thread.group.thread = thread.key;
    thread.group.process = null;
  }

  /** The final labels of every thread, by thread key. */
  all(threads: readonly LabelledThread[]): StackLabel[] {
    const base = threads.map((thread) => ({
      key: thread.key,
      pid: thread.pid,
      tid: thread.tid,
      thread: this.threadNames.get(thread.key) ?? thread.tid,
      process: this.processLabel(thread.pid),
    }));
    const uses = new Map<string, number>();
    for (const label of base) uses.set(label.thread ?? "", (uses.get(label.thread ?? "") ?? 0) + 1);
    return base.map((label) => {
      let thread = label.thread;
      if ((uses.get(thread ?? "") ?? 0) > 1) {
        thread =
          thread === label.tid
            ? `${thread ?? ""} (pid ${label.pid ?? "?"})`
            : `${thread ?? ""} (pid ${label.pid ?? "?"}, tid ${label.tid ?? "?"})`;
      }
      return { key: label.key, thread, process: label.process };
    });
  }

  private processLabel(pid: string | null): string | null {
    if (pid === null) return null;
    const labels = this.processLabels.get(pid) ?? null;
    if (isDeviceProcessLabel(labels)) return labels;
    return this.processNames.get(pid) ?? pid;
  }
}

/** A stack group whose thread label may be shared with others. */
export type LabelledGroup = { thread: string | null; process: string | null; tid: string | null; group: StackGroup; fallback: string };

/**
 * Thread labels used by more than one (process, thread) get the process and thread ids added, so
 * per-thread answers never merge them (the three `MainThread`s of `py-spy --subprocesses`).
 */
export function disambiguateThreadLabels(groups: readonly LabelledGroup[]): void {
  // A thread py-spy sometimes names and sometimes does not (its first samples) gets its name throughout.
  const named = new Map<string, string>();
  for (const entry of groups) {
    if (entry.tid !== null && entry.thread !== null && entry.thread !== entry.tid)
      named.set(`${entry.process ?? ""}\u0000${entry.tid}`, entry.thread);
  }
  for (const entry of groups) {
    const name =
      entry.tid !== null && (entry.thread === null || entry.thread === entry.tid)
        ? named.get(`${entry.process ?? ""}\u0000${entry.tid}`)
        : undefined;
    if (name !== undefined) {
      entry.thread = name;
      entry.group.thread = name;
    }
  }
  const owners = new Map<string, Set<string>>();
  for (const entry of groups) {
    const label = entry.thread ?? "";
    let set = owners.get(label);
    if (!set) {
      set = new Set();
      owners.set(label, set);
    }
    set.add(`${entry.process ?? ""}\u0000${entry.tid ?? entry.fallback}`);
  }
  for (const entry of groups) {
    if ((owners.get(entry.thread ?? "")?.size ?? 0) < 2) continue;
    const ids = [entry.process !== null ? `pid ${entry.process}` : null, entry.tid !== null ? `tid ${entry.tid}` : entry.fallback];
    entry.group.thread = `${entry.thread ?? ""} (${ids.filter(Boolean).join(", ")})`;
  }
}
