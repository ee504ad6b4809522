"""flameox torch.profiler SDK mode: the workload imports this and marks steps and phases.

    import flameox_torch
    with flameox_torch.profile():          # or: with flameox_torch.session() as fx:
        for batch in data:
            with flameox_torch.phase("decode"):
                model(batch)
            flameox_torch.step()

Reads FLAMEOX_TORCH_PROFILER_CONFIG (JSON: schedule {wait, warmup, active, repeat, skip_first}, activities …)
and FLAMEOX_TORCH_PROFILER_OUTPUT_ROOT; writes torch-trace-cycle-NNNN.json per cycle, a cycle manifest and
a diagnostics file. Without those variables it profiles nothing and costs nothing. Needs only torch.
flameox's launcher puts this folder on sys.path (the child environment never carries PYTHONPATH).
"""
import contextlib
import json
import os
import time

_active = None


class _Session:
    def __init__(self, profiler, root, expected):
        self._profiler = profiler
        self.root = root
        self.expected_cycles = expected
        self.files = []

    def step(self):
        if self._profiler is not None:
            self._profiler.step()

    @contextlib.contextmanager
    def phase(self, name):
        if self._profiler is None:
            yield
            return
        import torch

        with torch.profiler.record_function("flameox.phase:" + str(name)):
            yield


def step():
    """Advances the schedule of the open profile(); a no-op outside one."""
    if _active is not None:
        _active.step()


@contextlib.contextmanager
def phase(name):
    """Marks a named region (a `flameox.phase:<name>` range in the trace); a no-op outside profile()."""
    if _active is None:
        yield
        return
    with _active.phase(name):
        yield


def _write_json(path, value):
    temporary = path + ".tmp"
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(value, handle)
    os.replace(temporary, path)


def _diagnose(root, phase_name, status, detail=""):
    _write_json(
        os.path.join(root, "torch-profiler-diagnostics.json"),
        {"schema_version": "flameox.torch-profiler-diagnostics.v1", "phase": phase_name, "status": status, "detail": str(detail)[:500], "observed_at_ns": time.time_ns()},
    )


@contextlib.contextmanager
def session():
    global _active
    root = os.environ.get("FLAMEOX_TORCH_PROFILER_OUTPUT_ROOT")
    raw = os.environ.get("FLAMEOX_TORCH_PROFILER_CONFIG")
    if not root or not raw:
        yield _Session(None, None, 0)
        return
    if _active is not None:
        raise RuntimeError("flameox: flameox_torch.profile() is already open")
    config = json.loads(raw)
    schedule = config.get("schedule") or {}
    expected = int(schedule.get("repeat", 1))
    _diagnose(root, "profiler_initialization", "running")
    import torch
    from torch.profiler import ProfilerActivity, profile as torch_profile

    wanted = config.get("activities", ["cpu", "cuda_if_available"])
    if "cuda" in wanted and not torch.cuda.is_available():
        _diagnose(root, "profiler_initialization", "failed", "cuda activity requested but CUDA is not available")
        raise RuntimeError("flameox: the cuda activity was requested but CUDA is not available")
    activities = [ProfilerActivity.CPU] if "cpu" in wanted else []
    if "cuda" in wanted or ("cuda_if_available" in wanted and torch.cuda.is_available()):
        activities.append(ProfilerActivity.CUDA)
    if not activities:
        activities = [ProfilerActivity.CPU]
    state = _Session(None, root, expected)

    def on_trace_ready(profiler):
        index = len(state.files)
        if index >= expected:
            raise RuntimeError("flameox: more profiler cycles than the plan expected")
        path = os.path.join(root, "torch-trace-cycle-%04d.json" % index)
        if os.path.exists(path):
            raise RuntimeError("flameox: refusing to overwrite " + path)
        temporary = path + ".partial.json"
        profiler.export_chrome_trace(temporary)
        os.replace(temporary, path)
        state.files.append(os.path.basename(path))

    profiler = torch_profile(
        activities=activities,
        schedule=torch.profiler.schedule(
            wait=int(schedule.get("wait", 1)), warmup=int(schedule.get("warmup", 1)), active=int(schedule.get("active", 1)),
            repeat=expected, skip_first=int(schedule.get("skip_first", 0)),
        ),
        on_trace_ready=on_trace_ready,
        record_shapes=bool(config.get("record_shapes", True)),
        profile_memory=bool(config.get("profile_memory", True)),
        with_stack=bool(config.get("with_stack", True)),
        with_flops=bool(config.get("with_flops", False)),
        with_modules=bool(config.get("with_modules", False)),
    )
    state._profiler = profiler
    status, detail = "succeeded", ""
    _active = state
    try:
        _diagnose(root, "workload_execution", "running")
        with profiler:
            yield state
    except BaseException as error:
        status, detail = "failed", f"{type(error).__name__}: {error}"
        raise
    finally:
        _active = None
        if status == "succeeded" and len(state.files) != expected:
            status, detail = "failed", f"{len(state.files)} of {expected} cycles were written (each cycle needs wait+warmup+active steps; call step() per iteration)"
        _write_json(os.path.join(root, "torch-profiler-cycles.json"), {"schema_version": "flameox.torch-profiler-cycles.v1", "expected_cycles": expected, "files": state.files})
        _diagnose(root, "completed", status, detail)


# The name workloads reach for first: `with flameox_torch.profile(): ...`.
profile = session
