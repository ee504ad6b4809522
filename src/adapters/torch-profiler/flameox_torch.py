"""flameox torch.profiler SDK mode: the workload imports this and marks steps and phases.

    import flameox_torch
    with flameox_torch.session() as fx:
        for batch in data:
            with fx.phase("forward"):
                model(batch)
            fx.step()
Reads FLAMEOX_TORCH_PROFILER_CONFIG (JSON: schedule {wait, warmup, active, repeat, skip_first}, activities …)
and FLAMEOX_TORCH_PROFILER_OUTPUT_ROOT; writes torch-trace-cycle-NNNN.json per cycle, a cycle manifest and
a diagnostics file. Without those variables it profiles nothing and costs nothing. Needs only torch.
"""
import contextlib
import json
import os
import time


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


def _write_json(path, value):
    temporary = path + ".tmp"
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(value, handle)
    os.replace(temporary, path)


@contextlib.contextmanager
def session():
    root = os.environ.get("FLAMEOX_TORCH_PROFILER_OUTPUT_ROOT")
    raw = os.environ.get("FLAMEOX_TORCH_PROFILER_CONFIG")
    if not root or not raw:
        yield _Session(None, None, 0)
        return
    config = json.loads(raw)
    schedule = config.get("schedule") or {}
    expected = int(schedule.get("repeat", 1))
    import torch
    from torch.profiler import ProfilerActivity, profile

    diagnostics = os.path.join(root, "torch-profiler-diagnostics.json")
    activities = [ProfilerActivity.CPU]
    if "cuda" in config.get("activities", []) or ("cuda_if_available" in config.get("activities", ["cuda_if_available"]) and torch.cuda.is_available()):
        activities.append(ProfilerActivity.CUDA)
    state = _Session(None, root, expected)

    def on_trace_ready(profiler):
        index = len(state.files)
        if index >= expected:
            raise RuntimeError("flameox: more profiler cycles than the plan expected")
        path = os.path.join(root, "torch-trace-cycle-%04d.json" % index)
        if os.path.exists(path):
            raise RuntimeError("flameox: refusing to overwrite " + path)
        profiler.export_chrome_trace(path)
        state.files.append(os.path.basename(path))

    _write_json(diagnostics, {"schema_version": "flameox.torch-profiler-diagnostics.v1", "phase": "profiler_initialization", "status": "running", "detail": "", "observed_at_ns": time.time_ns()})
    profiler = profile(
        activities=activities,
        schedule=torch.profiler.schedule(
            wait=int(schedule.get("wait", 1)), warmup=int(schedule.get("warmup", 1)), active=int(schedule.get("active", 1)),
            repeat=expected, skip_first=int(schedule.get("skip_first", 0)),
        ),
        on_trace_ready=on_trace_ready,
        record_shapes=bool(config.get("record_shapes", True)),
        profile_memory=bool(config.get("profile_memory", True)),
        with_stack=bool(config.get("with_stack", True)),
    )
    state._profiler = profiler
    status, detail = "succeeded", ""
    try:
        with profiler:
            yield state
    except BaseException as error:
        status, detail = "failed", f"{type(error).__name__}: {error}"
        raise
    finally:
        if status == "succeeded" and len(state.files) != expected:
            status, detail = "failed", f"{len(state.files)} of {expected} cycles were written"
        _write_json(os.path.join(root, "torch-profiler-cycles.json"), {"schema_version": "flameox.torch-profiler-cycles.v1", "expected_cycles": expected, "files": state.files})
        _write_json(diagnostics, {"schema_version": "flameox.torch-profiler-diagnostics.v1", "phase": "completed", "status": status, "detail": detail[:500], "observed_at_ns": time.time_ns()})
