import { expect, test } from "bun:test";
import { heartbeatProgress } from "../../../src/services/progress.ts";

type Note = { progress: number; total: number; message: string };

test("between steps the last message repeats with growing progress below the next step, and every message says the elapsed time", async () => {
  let clock = 1_000;
  const notes: Note[] = [];
  let beats = 0;
  let onBeats: (() => void) | null = null;
  const heartbeat = heartbeatProgress(
    (progress, total, message) => {
      notes.push({ progress, total, message });
      if (message.includes("still running")) {
        beats += 1;
        clock += 2_500;
        if (beats === 3) onBeats?.();
      }
    },
    { intervalMs: 5, now: () => clock },
  );
  try {
    await heartbeat.report(4, 8, "capturing: workload running");
    // Waits for three heartbeats, whenever the timer delivers them; the clock they read is the test's own.
    await new Promise<void>((resolve) => {
      onBeats = resolve;
    });
    await heartbeat.report(5, 8, "validating_artifact: collector complete");
  } finally {
    heartbeat.stop();
  }
  const progress = notes.map((note) => note.progress);
  expect(progress).toEqual([...progress].sort((left, right) => left - right));
  expect(new Set(progress).size).toBe(progress.length);
  expect(notes[0]).toEqual({ progress: 4, total: 8, message: "capturing: workload running (0 s elapsed)" });
  const beatsSeen = notes.filter((note) => note.message.includes("still running"));
  expect(beatsSeen.slice(0, 3).map((note) => note.message)).toEqual([
    "capturing: workload running (still running, 0 s elapsed)",
    "capturing: workload running (still running, 2.5 s elapsed)",
    "capturing: workload running (still running, 5 s elapsed)",
  ]);
  for (const note of beatsSeen) expect(note.progress > 4 && note.progress < 4.5).toBe(true);
  const last = notes[notes.length - 1]!;
  expect([last.progress, last.message.startsWith("validating_artifact: collector complete (")]).toEqual([5, true]);
});

test("a repeated or lower step still goes up, and a failing reporter never throws", async () => {
  const seen: number[] = [];
  const heartbeat = heartbeatProgress((progress) => {
    seen.push(progress);
    if (seen.length === 2) throw new Error("client went away");
  });
  try {
    await heartbeat.report(2, 8, "a");
    await heartbeat.report(2, 8, "b");
    await heartbeat.report(1, 8, "c");
  } finally {
    heartbeat.stop();
  }
  expect(seen[1]! > seen[0]! && seen[2]! > seen[1]!).toBe(true);
});
