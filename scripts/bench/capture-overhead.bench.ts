/**
 * Capture overhead: `flameox capture run py-spy --workload work` against the same py-spy command run by
 * hand (`py-spy record -o x.json --format speedscope -- python3 work.py`), on a CPU-bound Python
 * workload of about 2 s. The workload does a fixed amount of work (calibrated once to ~2 s here), so
 * sampling overhead shows up in wall time instead of being hidden by a deadline loop. Runs alternate
 * (plain, by hand, flameox) so background load hits all three alike; medians of BENCH_CAPTURE_RUNS (3).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { binary, initProject, load1, measure, median, requireBinary, round, toolsBin, withTempFolder } from "./lib/measure.ts";

const runs = Number(process.env.BENCH_CAPTURE_RUNS ?? 3);
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

export async function run(): Promise<Record<string, unknown>> {
  requireBinary();
  return withTempFolder("flameox-bench-capture-", async (project) => {
    const env = { ...process.env, PATH: `${toolsBin}:${process.env.PATH ?? ""}` };
    writeFileSync(join(project, "work.py"), workload);
    const calibration = Bun.spawnSync(["python3", "work.py", "calibrate"], { cwd: project, env, stdout: "pipe", stderr: "pipe" });
    if (calibration.exitCode !== 0) throw new Error(`calibration failed: ${calibration.stderr.toString()}`);
    const rounds = Math.max(1, Math.round(Number(calibration.stdout.toString().trim()) * targetSeconds));
    writeFileSync(join(project, "flameox.toml"), `[workloads.work]\nargv = ["python3", "work.py", "${rounds}"]\ntimeout_seconds = 120\n`);
    initProject(project);

    const plain: number[] = [];
    const byHand: number[] = [];
    const flameox: number[] = [];
    const byHandCpu: number[] = [];
    const flameoxCpu: number[] = [];
    const loads: number[] = [];
    const phases: Record<string, number>[] = [];
    for (let index = 0; index < runs; index += 1) {
      loads.push(load1());
      const bare = await measure(["python3", "work.py", String(rounds)], { cwd: project, env });
      if (bare.exitCode !== 0) throw new Error(`plain workload failed: ${bare.stderrTail}`);
      plain.push(bare.wallMs);
      const hand = await measure(
        [join(toolsBin, "py-spy"), "record", "-o", "x.json", "--format", "speedscope", "--", "python3", "work.py", String(rounds)],
        { cwd: project, env },
      );
      if (hand.exitCode !== 0) throw new Error(`py-spy by hand failed: ${hand.stderrTail}`);
      byHand.push(hand.wallMs);
      byHandCpu.push(hand.cpuMs);
      // Progress lines on stderr ("[k/8] …") split flameox's wall time into phases.
      const marks: Record<string, number> = {};
      // --log-level info puts the progress lines on stderr (they are info messages); the JSON goes to stdout as ever.
      const captured = await measure(
        [binary, "capture", "run", "py-spy", "--workload", "work", "--json", "--log-level", "info", "--project-root", project],
        {
          cwd: project,
          env,
          onStderrLine: (line, at) => {
            const step = /\[(\d+)\/\d+\]/.exec(line);
            if (step) marks[step[1]!] = at;
          },
        },
      );
      if (captured.exitCode !== 0)
        throw new Error(`flameox capture failed (exit ${captured.exitCode}): ${captured.stdout.slice(0, 2000)}${captured.stderrTail}`);
      const receipt = JSON.parse(captured.stdout).receipt as { execution_status?: string };
      if (receipt.execution_status !== "succeeded") throw new Error(`flameox capture ended ${receipt.execution_status}`);
      flameox.push(captured.wallMs);
      flameoxCpu.push(captured.cpuMs);
      const steps = Object.keys(marks)
        .map(Number)
        .sort((a, b) => a - b);
      const first = steps[0];
      const last = steps[steps.length - 1];
      if (first !== undefined && last !== undefined) {
        // Step 4 is logged just before the collector starts, step 5 just after it ends.
        phases.push({
          spawn_to_first_progress_ms: round(marks[first]!),
          before_collector_ms: round(marks["4"] ?? Number.NaN),
          collector_phase_ms: round((marks["5"] ?? Number.NaN) - (marks["4"] ?? Number.NaN)),
          after_collector_ms: round(captured.wallMs - (marks["5"] ?? Number.NaN)),
          after_collector_to_last_progress_ms: round(marks[last]! - (marks["5"] ?? Number.NaN)),
          last_progress_to_exit_ms: round(captured.wallMs - marks[last]!),
        });
      }
    }
    const handMedian = median(byHand);
    const flameoxMedian = median(flameox);
    return {
      workload_rounds: rounds,
      runs,
      plain_python_median_ms: round(median(plain)),
      py_spy_by_hand_median_ms: round(handMedian),
      flameox_capture_median_ms: round(flameoxMedian),
      flameox_capture_over_by_hand_ratio: round(flameoxMedian / handMedian, 3),
      flameox_capture_added_ms: round(flameoxMedian - handMedian),
      py_spy_by_hand_over_plain_ratio: round(handMedian / median(plain), 3),
      // CPU time (rusage of the process and the children it waited for) is less at the mercy of other load than wall time.
      py_spy_by_hand_cpu_median_ms: round(median(byHandCpu)),
      flameox_capture_cpu_median_ms: round(median(flameoxCpu)),
      flameox_capture_added_cpu_ms: round(median(flameoxCpu) - median(byHandCpu)),
      py_spy_by_hand_ms: byHand.map((value) => round(value)),
      flameox_capture_ms: flameox.map((value) => round(value)),
      flameox_before_collector_median_ms: phases.length ? round(median(phases.map((phase) => phase.before_collector_ms!))) : null,
      flameox_after_collector_median_ms: phases.length ? round(median(phases.map((phase) => phase.after_collector_ms!))) : null,
      flameox_collector_over_by_hand_ratio: phases.length
        ? round(median(phases.map((phase) => phase.collector_phase_ms!)) / handMedian, 3)
        : null,
      flameox_phases_per_round: phases,
      load1_per_round: loads,
    };
  });
}

if (import.meta.main) console.log(JSON.stringify(await run(), null, 2));
