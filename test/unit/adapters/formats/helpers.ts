import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { MemoryEvidenceSink, FrameRow, StackRow } from "../../../../src/domain/evidence.ts";
import { FlameoxError } from "../../../../src/domain/errors.ts";

export const fixtures = join(import.meta.dir, "../../../fixtures/formats");
/** The checkout the fixtures were recorded in (their absolute paths start with it), wherever tests run. */
export const projectRoot = "/work/main";

export function tempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "flameox-formats-"));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function leaf(sink: MemoryEvidenceSink, stack: StackRow): FrameRow {
  return sink.frames.get(stack.frame_keys[stack.frame_keys.length - 1] as string) as FrameRow;
}

export function names(sink: MemoryEvidenceSink, stack: StackRow): string[] {
  return stack.frame_keys.map((key) => (sink.frames.get(key) as FrameRow).function);
}

/** Self weight per leaf function name. */
export function selfByFunction(sink: MemoryEvidenceSink): Map<string, number> {
  const totals = new Map<string, number>();
  for (const stack of sink.stacks) {
    const name = leaf(sink, stack).function;
    totals.set(name, (totals.get(name) ?? 0) + stack.weight);
  }
  return totals;
}

export function hottest(sink: MemoryEvidenceSink): string {
  return [...selfByFunction(sink)].sort((left, right) => right[1] - left[1])[0]?.[0] ?? "";
}

export function snapshot(sink: MemoryEvidenceSink): unknown {
  return { frames: [...sink.frames.values()], stacks: sink.stacks, traceEvents: sink.traceEvents };
}

export async function parseFailure(run: () => Promise<unknown>): Promise<FlameoxError> {
  try {
    await run();
  } catch (error) {
    if (error instanceof FlameoxError) return error;
    throw error;
  }
  throw new Error("expected ARTIFACT_PARSE_FAILED, but the extractor succeeded");
}
