import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { loadDuckdb } from "./duckdb.ts";
import type { Engine } from "./evidence-bundle-trace-events.ts";

/**
 * The DuckDB instances bundle writers convert their rows with: made ahead of the writers that take
 * them, and closed off the path to publication. Closing an instance is synchronous (2-8 ms) and adds
 * nothing to the bundle: each COPY has completed its Parquet file when it returns, the writer fsyncs
 * the files itself, and the instance is in memory. So a finished writer's instance is closed a
 * second later, when the publication that follows is long done; a CLI process that exits first drops
 * it with the process, as it does the spares it never used.
 */

/** Instances made ahead for this process's next bundle writers; each is taken by one writer, which retires it. */
const spareEngines: Promise<Engine>[] = [];
const maximumSpareEngines = 4;

/** Finished writers' instances not yet closed. */
const retiredEngines: Engine[] = [];
/** How long a finished writer's instance stays open: a capture's publication follows its bundles' finish within ~10-100 ms. */
const closeDelayMs = 1000;
let closeTimer: ReturnType<typeof setTimeout> | undefined;

async function createEngine(): Promise<Engine> {
  const duckdb = await loadDuckdb();
  const instance = await duckdb.DuckDBInstance.create(":memory:", { threads: "1", memory_limit: "256MB" });
  return { instance, connection: await instance.connect() };
}

/**
 * Creates up to `count` DuckDB instances for the bundle writers this process is about to open: a
 * capture calls it while its collector runs, so the instances (15-35 ms each) are not made while
 * its outputs are extracted. Unused spares stay for the next writers of this process.
 */
export function warmBundleEngines(count: number): void {
  while (spareEngines.length < Math.min(count, maximumSpareEngines)) {
    const engine = createEngine();
    engine.catch(() => undefined);
    spareEngines.push(engine);
  }
}

/** A spare instance if one was made ahead, or a new one, for a writer being constructed (which retires it). */
export function takeBundleEngine(): Promise<Engine> {
  const spare = spareEngines.shift();
  return (async () => (spare ? await spare.catch(() => null) : null) ?? (await createEngine()))();
}

/**
 * A writer's conversions are done (or it was abandoned): its scratch folder goes now, and its
 * instance is closed with the others retired meanwhile once the delay has passed, by a timer that
 * keeps no process alive. An instance that spilled into the scratch folder (a large bundle, where
 * closing is the least of its costs) is closed first, so its spill folder goes with the rest.
 */
export function retireBundleEngine(engine: Engine | null, scratchFolder: string): void {
  if (engine && existsSync(join(scratchFolder, "duckdb"))) closeEngine(engine);
  else if (engine) retiredEngines.push(engine);
  rmSync(scratchFolder, { recursive: true, force: true });
  if (retiredEngines.length === 0 || closeTimer) return;
  closeTimer = setTimeout(closeRetiredEngines, closeDelayMs);
  closeTimer.unref();
}

/** Closes every retired instance. */
function closeRetiredEngines(): void {
  clearTimeout(closeTimer);
  closeTimer = undefined;
  for (const engine of retiredEngines.splice(0)) closeEngine(engine);
}

function closeEngine(engine: Engine): void {
  try {
    engine.connection.closeSync();
    engine.instance.closeSync();
  } catch {
    // Closed already: nothing else holds it.
  }
}
