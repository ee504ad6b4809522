/**
 * Capture overhead: `flameox capture run py-spy --workload work` against the same py-spy command run by
 * hand (`py-spy record -o x.json --format speedscope -- python3 work.py`), on a CPU-bound Python
 * workload of about 2 s, and against the previous flameox (lib/previous-flameox.ts, BENCH_PREVIOUS_COMMIT)
 * capturing the same workload in a project of its own. The workload does a fixed amount of work
 * (calibrated once to ~2 s here, or BENCH_CAPTURE_WORKLOAD_ROUNDS), so sampling overhead shows up in wall
 * time instead of being hidden by a deadline loop. Each round runs plain python, by hand, this flameox and
 * the previous one, in an order that rotates from round to round, so background load hits all alike;
 * medians of BENCH_CAPTURE_RUNS (5) rounds, and medians of the per-round differences (paired: the
 * same round's by-hand run is the reference), which load that varies between rounds disturbs less.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { binary, load1, type Measured, measure, median, requireBinary, round, toolsBin, withTempFolder } from "./lib/measure.ts";
import { previousFlameox } from "./lib/previous-flameox.ts";

const runs = Number(process.env.BENCH_CAPTURE_RUNS ?? 5);
const targetSeconds = Number(process.env.BENCH_CAPTURE_SECONDS ?? 2);

const workload = `import sys

def hot(n):
    total = 0
    for i in range(n):
        total += i * i
    return total

def main(rounds):
    for _ in range(rounds):
        hot(20000)

if __name__ == "__main__":
    if sys.argv[1] == "calibrate":
        import time
        start = time.perf_counter()
        rounds = 0
        while time.perf_counter() - start < 0.5:
            hot(20000)
            rounds += 1
        print(rounds / (time.perf_counter() - start))
    else:
        main(int(sys.argv[1]))
`;

type Phases = Record<string, number>;

/** One `capture run` of `executable` in `project`; its progress lines on stderr ("[k/8] …") split its wall time into phases. */
async function captureOnce(
  executable: string,
  project: string,
  env: Record<string, string | undefined>,
): Promise<{ measured: Measured; phases: Phases | null }> {
  const marks: Record<string, number> = {};
  // --log-level info puts the progress lines on stderr (they are info messages); the JSON goes to stdout as ever.
  const measured = await measure(
    [executable, "capture", "run", "py-spy", "--workload", "work", "--json", "--log-level", "info", "--project-root", project],
    {
      cwd: project,
      env,
      onStderrLine: (line, at) => {
        const step = /\[(\d+)\/\d+\]/.exec(line);
        if (step) marks[step[1]!] = at;
      },
    },
  );
  if (measured.exitCode !== 0)
    throw new Error(`${executable} capture failed (exit ${measured.exitCode}): ${measured.stdout.slice(0, 2000)}${measured.stderrTail}`);
  const receipt = JSON.parse(measured.stdout).receipt as { execution_status?: string };
  if (receipt.execution_status !== "succeeded") throw new Error(`${executable} capture ended ${receipt.execution_status}`);
  const steps = Object.keys(marks)
    .map(Number)
    .sort((a, b) => a - b);
  const first = steps[0];
  const last = steps[steps.length - 1];
  if (first === undefined || last === undefined) return { measured, phases: null };
  // Step 4 is logged just before the collector starts, step 5 just after it ends.
  return {
    measured,
    phases: {
      spawn_to_first_progress_ms: round(marks[first]!),
      before_collector_ms: round(marks["4"] ?? Number.NaN),
      collector_phase_ms: round((marks["5"] ?? Number.NaN) - (marks["4"] ?? Number.NaN)),
      after_collector_ms: round(measured.wallMs - (marks["5"] ?? Number.NaN)),
      after_collector_to_last_progress_ms: round(marks[last]! - (marks["5"] ?? Number.NaN)),
      last_progress_to_exit_ms: round(measured.wallMs - marks[last]!),
    },
  };
}

/** A project folder with the workload declared, initialized by `executable` (each build keeps its own workspace). */
function captureProject(folder: string, executable: string, rounds: number): string {
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, "work.py"), workload);
  writeFileSync(join(folder, "flameox.toml"), `[workloads.work]\nargv = ["python3", "work.py", "${rounds}"]\ntimeout_seconds = 120\n`);
  const init = Bun.spawnSync([executable, "init", folder, "--json"], { stdout: "pipe", stderr: "pipe" });
  if (init.exitCode !== 0) throw new Error(`${executable} init failed: ${init.stdout.toString()}${init.stderr.toString()}`);
  return folder;
}

const pairedMedian = (values: number[], reference: number[]) => round(median(values.map((value, index) => value - reference[index]!)));

function phaseMedian(phases: Phases[], name: string): number | null {
  return phases.length ? round(median(phases.map((phase) => phase[name]!))) : null;
}

export async function run(): Promise<Record<string, unknown>> {
  requireBinary();
  const previous = previousFlameox();
  return withTempFolder("flameox-bench-capture-", async (folder) => {
    const env = { ...process.env, PATH: `${toolsBin}:${process.env.PATH ?? ""}` };
    const project = join(folder, "by-hand");
    mkdirSync(project);
    writeFileSync(join(project, "work.py"), workload);
    let rounds = Number(process.env.BENCH_CAPTURE_WORKLOAD_ROUNDS ?? 0);
    if (!rounds) {
      const calibration = Bun.spawnSync(["python3", "work.py", "calibrate"], { cwd: project, env, stdout: "pipe", stderr: "pipe" });
      if (calibration.exitCode !== 0) throw new Error(`calibration failed: ${calibration.stderr.toString()}`);
      rounds = Math.max(1, Math.round(Number(calibration.stdout.toString().trim()) * targetSeconds));
    }
    const current = captureProject(join(folder, "current"), binary, rounds);
    const before = previous.binary ? captureProject(join(folder, "previous"), previous.binary, rounds) : null;

    const wall: Record<"plain" | "by_hand" | "flameox" | "previous", number[]> = { plain: [], by_hand: [], flameox: [], previous: [] };
    const cpu: Record<"by_hand" | "flameox" | "previous", number[]> = { by_hand: [], flameox: [], previous: [] };
    const phases: Record<"flameox" | "previous", Phases[]> = { flameox: [], previous: [] };
    const loads: number[] = [];
    const steps: Record<string, () => Promise<void>> = {
      plain: async () => {
        const bare = await measure(["python3", "work.py", String(rounds)], { cwd: project, env });
        if (bare.exitCode !== 0) throw new Error(`plain workload failed: ${bare.stderrTail}`);
        wall.plain.push(bare.wallMs);
      },
      by_hand: async () => {
        const hand = await measure(
          [join(toolsBin, "py-spy"), "record", "-o", "x.json", "--format", "speedscope", "--", "python3", "work.py", String(rounds)],
          { cwd: project, env },
        );
        if (hand.exitCode !== 0) throw new Error(`py-spy by hand failed: ${hand.stderrTail}`);
        wall.by_hand.push(hand.wallMs);
        cpu.by_hand.push(hand.cpuMs);
      },
      flameox: async () => {
        const { measured, phases: split } = await captureOnce(binary, current, env);
        wall.flameox.push(measured.wallMs);
        cpu.flameox.push(measured.cpuMs);
        if (split) phases.flameox.push(split);
      },
      previous: async () => {
        if (!previous.binary || !before) return;
        const { measured, phases: split } = await captureOnce(previous.binary, before, env);
        wall.previous.push(measured.wallMs);
        cpu.previous.push(measured.cpuMs);
        if (split) phases.previous.push(split);
      },
    };
    const order = ["plain", "by_hand", "flameox", "previous"];
    for (let index = 0; index < runs; index += 1) {
      loads.push(load1());
      // Rotated each round, so neither build always follows the other (or the plain run).
      for (const name of [...order.slice(index % order.length), ...order.slice(0, index % order.length)]) await steps[name]!();
    }
    const handMedian = median(wall.by_hand);
    const flameoxMedian = median(wall.flameox);
    const figures: Record<string, unknown> = {
      workload_rounds: rounds,
      runs,
      plain_python_median_ms: round(median(wall.plain)),
      py_spy_by_hand_median_ms: round(handMedian),
      flameox_capture_median_ms: round(flameoxMedian),
      flameox_capture_over_by_hand_ratio: round(flameoxMedian / handMedian, 3),
      flameox_capture_added_ms: round(flameoxMedian - handMedian),
      flameox_capture_added_paired_median_ms: pairedMedian(wall.flameox, wall.by_hand),
      py_spy_by_hand_over_plain_ratio: round(handMedian / median(wall.plain), 3),
      // CPU time (rusage of the process and the children it waited for) is less at the mercy of other load than wall time.
      py_spy_by_hand_cpu_median_ms: round(median(cpu.by_hand)),
      flameox_capture_cpu_median_ms: round(median(cpu.flameox)),
      flameox_capture_added_cpu_ms: round(median(cpu.flameox) - median(cpu.by_hand)),
      py_spy_by_hand_ms: wall.by_hand.map((value) => round(value)),
      flameox_capture_ms: wall.flameox.map((value) => round(value)),
      flameox_before_collector_median_ms: phaseMedian(phases.flameox, "before_collector_ms"),
      flameox_after_collector_median_ms: phaseMedian(phases.flameox, "after_collector_ms"),
      flameox_collector_over_by_hand_ratio: phases.flameox.length
        ? round(median(phases.flameox.map((phase) => phase.collector_phase_ms!)) / handMedian, 3)
        : null,
      flameox_phases_per_round: phases.flameox,
      load1_per_round: loads,
    };
    if (!("commit" in previous)) return { ...figures, previous_error: previous.error };
    const previousMedian = median(wall.previous);
    return {
      ...figures,
      previous_commit: previous.commit,
      previous_capture_median_ms: round(previousMedian),
      previous_capture_ms: wall.previous.map((value) => round(value)),
      previous_capture_over_by_hand_ratio: round(previousMedian / handMedian, 3),
      previous_capture_added_paired_median_ms: pairedMedian(wall.previous, wall.by_hand),
      previous_capture_cpu_median_ms: round(median(cpu.previous)),
      flameox_over_previous_ratio: round(flameoxMedian / previousMedian, 3),
      flameox_minus_previous_paired_median_ms: pairedMedian(wall.flameox, wall.previous),
      flameox_minus_previous_cpu_paired_median_ms: pairedMedian(cpu.flameox, cpu.previous),
      previous_before_collector_median_ms: phaseMedian(phases.previous, "before_collector_ms"),
      previous_after_collector_median_ms: phaseMedian(phases.previous, "after_collector_ms"),
    };
  });
}

if (import.meta.main) console.log(JSON.stringify(await run(), null, 2));
