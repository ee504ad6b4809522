"""flameox observations SDK: a workload records annotations and configuration as JSONL.

Copy this file beside the workload (flameox writes it for you) and:
    import flameox_observations as fx
    fx.configuration(batch_size=32, model="tiny")
    fx.annotate("cache.hit_rate", 0.93)
Writes nothing unless FLAMEOX_OBSERVATIONS_PATH is set. Standard library only.
"""
import json
import math
import os
import threading
import time

SCHEMA = "flameox.observations.v1"
MAX_LINE_BYTES = 16384
_lock = threading.Lock()


def _bounded(value, depth=0):
    if depth > 8:
        raise ValueError("observation values nest deeper than 8 levels")
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("observation values must be finite numbers")
        return value
    if isinstance(value, (list, tuple)):
        if len(value) > 256:
            raise ValueError("observation lists hold at most 256 items")
        return [_bounded(item, depth + 1) for item in value]
    if isinstance(value, dict):
        if len(value) > 256:
            raise ValueError("observation objects hold at most 256 keys")
        return {str(key): _bounded(item, depth + 1) for key, item in value.items()}
    return str(value)


def _write(kind, name, value):
    path = os.environ.get("FLAMEOX_OBSERVATIONS_PATH")
    if not path:
        return False
    if not isinstance(name, str) or not 1 <= len(name) <= 200:
        raise ValueError("observation names are 1..200 characters")
    record = {"schema": SCHEMA, "kind": kind, "name": name, "value": _bounded(value), "monotonic_ns": time.monotonic_ns(), "pid": os.getpid()}
    line = json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n"
    if len(line.encode("utf-8")) > MAX_LINE_BYTES:
        raise ValueError("an observation line is limited to 16 KiB")
    with _lock:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(line)
    return True


def annotate(name, value=None):
    """Records one named value (a number, string, list or small object)."""
    return _write("annotation", name, value)


def configuration(**settings):
    """Records the settings a run used, one observation per key."""
    written = False
    for key, value in sorted(settings.items()):
        written = _write("configuration", key, value) or written
    return written
