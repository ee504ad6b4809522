"""flameox Python startup collector: fresh-interpreter wall time and peak RSS, plus one -X importtime run.

Usage: python flameox_python_startup.py --output OUT.json [--samples N] -- PYTHON ARGS...
Standard library only. Each sample is a new interpreter; peak RSS comes from wait4's ru_maxrss.
"""
import json
import os
import platform
import subprocess
import sys
import time

MAX_IMPORTTIME_LINES = 200000


def _run(argv, capture_stderr):
    started = time.perf_counter_ns()
    child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE if capture_stderr else None)
    stderr = b""
    if capture_stderr:
        # Drain stderr before reaping, or a chatty child blocks on a full pipe.
        stderr = child.stderr.read()
        child.stderr.close()
    rss = None
    backend = None
    if hasattr(os, "wait4"):
        _, status, usage = os.wait4(child.pid, 0)
        duration = time.perf_counter_ns() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        scale = 1 if sys.platform == "darwin" else 1024
        rss = int(usage.ru_maxrss) * scale
        backend = "wait4_ru_maxrss"
    else:
        child.wait()
        duration = time.perf_counter_ns() - started
    return duration, child.returncode, rss, backend, stderr


def main(argv):
    if "--" not in argv:
        print("usage: --output OUT.json [--samples N] -- PYTHON ARGS...", file=sys.stderr)
        return 2
    split = argv.index("--")
    options, workload = argv[:split], argv[split + 1 :]
    output = None
    samples = 5
    index = 0
    while index < len(options):
        if options[index] == "--output":
            output = options[index + 1]
            index += 2
        elif options[index] == "--samples":
            samples = int(options[index + 1])
            index += 2
        else:
            print(f"unknown option {options[index]}", file=sys.stderr)
            return 2
    if not output or not workload or samples < 1:
        print("usage: --output OUT.json [--samples N] -- PYTHON ARGS...", file=sys.stderr)
        return 2
    started_at = time.time_ns()
    records = []
    last_failure = 0
    for sample in range(samples):
        duration, code, rss, backend, _ = _run(workload, capture_stderr=False)
        if code != 0:
            last_failure = code
        records.append({
            "index": sample,
            "cache_semantics": "uncontrolled_initial" if sample == 0 else "warm_process_restart",
            "duration_ns": duration,
            "peak_rss_bytes": rss,
            "peak_rss_backend": backend,
            "exit_code": code,
        })
    trace_argv = [workload[0], "-X", "importtime", *workload[1:]]
    _, trace_code, _, _, stderr = _run(trace_argv, capture_stderr=True)
    if trace_code != 0:
        last_failure = trace_code
    lines = []
    other = []
    for line in stderr.decode("utf-8", "replace").splitlines():
        if line.startswith("import time:"):
            if len(lines) < MAX_IMPORTTIME_LINES:
                lines.append(line)
        else:
            other.append(line)
    if other:
        sys.stderr.write("\n".join(other) + "\n")
    document = {
        "schema": "flameox.python-startup.v1",
        "started_at_ns": started_at,
        "finished_at_ns": time.time_ns(),
        "python_executable": workload[0],
        "collector_python_version": platform.python_version(),
        "workload_argv": workload,
        "samples": records,
        "import_trace": {"exit_code": trace_code, "importtime_lines": lines, "lines_truncated": len(lines) >= MAX_IMPORTTIME_LINES},
    }
    temporary = output + ".tmp"
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(document, handle, separators=(",", ":"))
    os.replace(temporary, output)
    return last_failure if 0 <= last_failure < 256 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
