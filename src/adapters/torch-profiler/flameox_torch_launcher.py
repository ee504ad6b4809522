"""flameox torch.profiler launcher: runs a script or module under torch.profiler and exports a Chrome trace.

Usage: python flameox_torch_launcher.py --output TRACE.json --config JSON (--script PATH | --module NAME) [-- ARGS...]
       python flameox_torch_launcher.py --mode sdk --output-root DIR (--script PATH | --module NAME) [-- ARGS...]
Needs only torch. Writes <output dir>/torch-profiler-diagnostics.json at each phase, so a failure says where.
SDK mode profiles nothing itself: it makes this folder importable (so the workload's `import flameox_torch`
works without PYTHONPATH, which the child environment never carries) and runs the target unchanged.
"""
import json
import os
import runpy
import sys
import time

DIAGNOSTICS = "torch-profiler-diagnostics.json"


def _diagnose(directory, phase, status, detail=""):
    path = os.path.join(directory, DIAGNOSTICS)
    temporary = path + ".tmp"
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump({"schema_version": "flameox.torch-profiler-diagnostics.v1", "phase": phase, "status": status, "detail": str(detail)[:500], "observed_at_ns": time.time_ns()}, handle)
    os.replace(temporary, path)


def _parse(argv):
    options = {"output": None, "output-root": None, "mode": "whole_entrypoint", "config": "{}", "script": None, "module": None}
    rest = []
    if "--" in argv:
        split = argv.index("--")
        argv, rest = argv[:split], argv[split + 1 :]
    index = 0
    while index < len(argv):
        key = argv[index].lstrip("-")
        if key not in options or index + 1 >= len(argv):
            raise SystemExit(f"flameox torch launcher: bad option {argv[index]}")
        options[key] = argv[index + 1]
        index += 2
    if bool(options["script"]) == bool(options["module"]):
        raise SystemExit("flameox torch launcher: exactly one of --script/--module is required")
    if options["mode"] == "sdk" and not options["output-root"]:
        raise SystemExit("flameox torch launcher: --mode sdk needs --output-root")
    if options["mode"] == "whole_entrypoint" and not options["output"]:
        raise SystemExit("flameox torch launcher: --output is required")
    if options["mode"] not in ("sdk", "whole_entrypoint"):
        raise SystemExit(f"flameox torch launcher: unknown mode {options['mode']}")
    return options, rest


def _prepare_target(options, rest):
    if options["script"]:
        script = os.path.abspath(options["script"])
        sys.argv = [script, *rest]
        sys.path.insert(0, os.path.dirname(script))
    else:
        sys.argv = [options["module"], *rest]
        sys.path.insert(0, os.getcwd())
    # After the target's own folder, so a workload module never loses to ours.
    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:
        sys.path.insert(1, here)


def _run_target(options):
    if options["script"]:
        runpy.run_path(sys.argv[0], run_name="__main__")
    else:
        runpy.run_module(options["module"], run_name="__main__", alter_sys=True)


def _exit_code(stop):
    return stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)


def _read_phase(directory):
    try:
        with open(os.path.join(directory, DIAGNOSTICS), encoding="utf-8") as handle:
            return json.load(handle).get("phase")
    except (OSError, ValueError):
        return None


def sdk_main(options, rest):
    """Runs the workload unprofiled; its own flameox_torch.profile() records the cycles."""
    directory = os.path.abspath(options["output-root"])
    _diagnose(directory, "wrapper_startup", "running")
    _prepare_target(options, rest)
    exit_code = 0
    try:
        _run_target(options)
    except SystemExit as stop:
        exit_code = _exit_code(stop)
    except BaseException as error:
        if _read_phase(directory) != "completed":
            _diagnose(directory, "workload_execution", "failed", f"{type(error).__name__}: {error}")
        raise
    if _read_phase(directory) == "wrapper_startup":
        _diagnose(directory, "completed", "failed", "the workload never opened flameox_torch.profile() (or session())")
        return exit_code or 4
    return exit_code


def main(argv):
    options, rest = _parse(argv)
    if options["mode"] == "sdk":
        return sdk_main(options, rest)
    output = os.path.abspath(options["output"])
    directory = os.path.dirname(output)
    _diagnose(directory, "wrapper_startup", "running")
    config = json.loads(options["config"])
    _diagnose(directory, "profiler_initialization", "running")
    import torch
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU]
    wanted = config.get("activities", ["cpu", "cuda_if_available"])
    if "cuda" in wanted and not torch.cuda.is_available():
        _diagnose(directory, "profiler_initialization", "failed", "cuda activity requested but CUDA is not available")
        return 3
    if "cuda" in wanted or ("cuda_if_available" in wanted and torch.cuda.is_available()):
        activities.append(ProfilerActivity.CUDA)
    _prepare_target(options, rest)
    exit_code = 0
    with profile(
        activities=activities,
        record_shapes=bool(config.get("record_shapes", True)),
        profile_memory=bool(config.get("profile_memory", True)),
        with_stack=bool(config.get("with_stack", True)),
        with_flops=bool(config.get("with_flops", False)),
        with_modules=bool(config.get("with_modules", False)),
    ) as profiler:
        _diagnose(directory, "workload_execution", "running")
        try:
            _run_target(options)
        except SystemExit as stop:
            exit_code = _exit_code(stop)
        except BaseException as error:
            _diagnose(directory, "workload_execution", "failed", f"{type(error).__name__}: {error}")
            exit_code = 1
        _diagnose(directory, "profiler_finalization", "running")
    _diagnose(directory, "trace_finalization", "running")
    temporary = output + ".partial.json"
    profiler.export_chrome_trace(temporary)
    os.replace(temporary, output)
    _diagnose(directory, "completed", "succeeded" if exit_code == 0 else "failed", "" if exit_code == 0 else f"workload exit {exit_code}")
    return exit_code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
