/**
 * The small real workloads of agent-jobs.bench.ts, laid out in a fresh project folder: the repository's
 * own fixtures (test/fixtures, origins in their READMEs) plus two scripts written here (a benchmark
 * whose candidate does twice the baseline's work, and a quadratic loop for the scaling sweep), and an
 * AddressSanitizer log produced by building test/fixtures/failures/heap_overflow.c with gcc.
 * Not a benchmark module itself.
 */
import { copyFileSync, cpSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { repositoryRoot, toolsBin } from "./measure.ts";

export const python = join(toolsBin, "python");
const fixtures = join(repositoryRoot, "test", "fixtures");

/** What each job's expected fact is, in the workload that produces it. */
export const expectedFacts = {
  hot_function: "burn_cpu",
  hot_caller: "run_job",
  top_allocator: "hold_buffer",
  leaking_function: "leak",
  failing_test: "suite/test_suite.py::test_fails",
  missed_line: 8,
  verdict: "regressed",
  /** analyze_scaling's best model, or a power-law exponent within 0.35 of 2. */
  scaling_model: "quadratic",
  top_operator: "aten::mm",
  exception_type: "RuntimeError",
  exception_message: "configuration is incomplete",
  sanitizer_error: "heap-buffer-overflow",
} as const;

/** Candidate does the baseline's sort twice: 2x the work in CPU time. */
const benchmark = `import sys


def work(n):
    return sorted(str(i) for i in range(n))


for _ in range(2 if sys.argv[1] == "candidate" else 1):
    work(150_000)
`;

/** Pairs i < j of range(n): n^2/2 steps, so the cost grows with exponent 2 once startup is small beside it. */
const quadratic = `import sys


def count_pairs(n):
    return sum(1 for i in range(n) for j in range(n) if i < j)


print(count_pairs(int(sys.argv[1])))
`;

export const scalingSizes = [1000, 2000, 4000];

/** Fills `project` with every job's inputs; returns whether the ASan log could be made (gcc present). */
export async function layOutWorkloads(project: string): Promise<{ sanitizerLog: boolean; torch: boolean }> {
  copyFileSync(join(fixtures, "workloads", "hot.py"), join(project, "hot.py"));
  copyFileSync(join(fixtures, "python", "memray", "allocate.py"), join(project, "allocate.py"));
  copyFileSync(join(fixtures, "python", "memray", "leak.py"), join(project, "leak.py"));
  copyFileSync(join(fixtures, "python", "coverage", "branches.py"), join(project, "branches.py"));
  copyFileSync(join(fixtures, "python", "torch", "matmul.py"), join(project, "matmul.py"));
  copyFileSync(join(fixtures, "failures", "crash.py"), join(project, "crash.py"));
  mkdirSync(join(project, "suite"));
  cpSync(join(fixtures, "python", "pytest-suite"), join(project, "suite"), { recursive: true });
  writeFileSync(join(project, "bench.py"), benchmark);
  writeFileSync(join(project, "scale.py"), quadratic);
  const torch = Bun.spawnSync([python, "-c", "import torch"], { stdout: "ignore", stderr: "ignore" }).exitCode === 0;
  return { sanitizerLog: await sanitizerLog(project), torch };
}

/** The stderr of an out-of-bounds read built with -fsanitize=address, as asan.log in the project. */
async function sanitizerLog(project: string): Promise<boolean> {
  const gcc = Bun.which("gcc");
  if (!gcc) return false;
  const program = join(project, "heap_overflow");
  const source = join(project, "heap_overflow.c");
  copyFileSync(join(fixtures, "failures", "heap_overflow.c"), source);
  const built = Bun.spawnSync([gcc, "-g", "-O0", "-fsanitize=address", "-o", program, source], { stdout: "pipe", stderr: "pipe" });
  if (built.exitCode !== 0) return false;
  const ran = Bun.spawn([program], { cwd: project, stdout: "ignore", stderr: "pipe", stdin: "ignore" });
  const stderr = await new Response(ran.stderr).text();
  await ran.exited;
  writeFileSync(join(project, "asan.log"), stderr);
  return stderr.includes("AddressSanitizer");
}
