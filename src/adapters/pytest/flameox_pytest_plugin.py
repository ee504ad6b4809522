"""flameox pytest plugin: writes a JSONL event stream of one pytest session.

Needs only pytest (and pytest-xdist when the session uses it); never imports flameox.
The controller (or the only process of a serial run) owns the stream named by
FLAMEOX_PYTEST_EVENTS_PATH. xdist workers write their own sidecar files next to it
(``<stream>.worker-<id>.jsonl``); the controller folds each sidecar into the stream when
that worker goes down, so the lines a crashed worker flushed before dying are kept.
"""
import json
import os
import platform
import sys
import time

import pytest

SCHEMA = "flameox.pytest-events.v1"
EVENTS_ENV = "FLAMEOX_PYTEST_EVENTS_PATH"
MAX_TEXT = 2000


def _now_ns():
    return time.time_ns()


def _worker_id(config):
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None:
        return None
    return str(workerinput.get("workerid", "?"))


def _sidecar_path(stream_path, worker_id):
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in worker_id)
    return f"{stream_path}.worker-{safe}.jsonl"


class _Writer:
    def __init__(self, path, truncate):
        self.path = path
        self.handle = open(path, "w" if truncate else "a", encoding="utf-8")

    def write(self, event, **fields):
        record = {"schema": SCHEMA, "event": event, "observed_at_ns": _now_ns()}
        record.update(fields)
        self.handle.write(json.dumps(record, sort_keys=True, separators=(",", ":"), default=str) + "\n")
        self.handle.flush()

    def write_raw_line(self, line):
        self.handle.write(line if line.endswith("\n") else line + "\n")
        self.handle.flush()

    def close(self):
        try:
            self.handle.close()
        except OSError:
            pass


_state = {"writer": None, "worker": None, "stream": None, "first_failure": False}


def _writer():
    return _state["writer"]


def _emit(event, **fields):
    writer = _writer()
    if writer is not None:
        writer.write(event, **fields)


def _is_controller_of_xdist(config):
    return _state["worker"] is None and config.pluginmanager.hasplugin("dsession")


def _short(text):
    text = str(text)
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 3] + "..."


def pytest_configure(config):
    stream = os.environ.get(EVENTS_ENV)
    if not stream:
        return
    worker = _worker_id(config)
    _state["worker"] = worker
    _state["stream"] = stream
    if worker is None:
        _state["writer"] = _Writer(stream, truncate=True)
        dist = getattr(config.option, "dist", "no")
        workers = getattr(config.option, "numprocesses", None)
        _emit(
            "run_started",
            run_started_at_ns=int(os.environ.get("FLAMEOX_PYTEST_RUN_STARTED_NS") or _now_ns()),
            pytest_version=pytest.__version__,
            python_version=platform.python_version(),
            platform=sys.platform,
            scheduler=str(dist if workers else "no"),
            requested_workers=None if workers is None else str(workers),
            worker_id="controller",
        )
    else:
        _state["writer"] = _Writer(_sidecar_path(stream, worker), truncate=True)
        _emit("worker_started", worker_id=worker, pid=os.getpid())


def pytest_sessionstart(session):
    _emit("session_started", worker_id=_state["worker"] or "controller")


@pytest.hookimpl(wrapper=True)
def pytest_collection(session):
    if _is_controller_of_xdist(session.config):
        return (yield)
    started = time.perf_counter_ns()
    _emit("collection_started", worker_id=_state["worker"] or "controller")
    try:
        return (yield)
    finally:
        _emit(
            "collection_finished",
            worker_id=_state["worker"] or "controller",
            duration_ns=time.perf_counter_ns() - started,
            test_count=len(getattr(session, "items", []) or []),
        )


def pytest_collection_finish(session):
    # The controller lists collected ids once; under xdist the first worker's list stands in.
    if _state["worker"] is None and not _is_controller_of_xdist(session.config):
        for item in session.items:
            _emit("test_collected", nodeid=item.nodeid)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node, ids):
    if _state.get("collected_listed"):
        _emit("worker_collection_finished", worker_id=node.gateway.id, test_count=len(ids))
        return
    _state["collected_listed"] = True
    _emit("worker_collection_finished", worker_id=node.gateway.id, test_count=len(ids))
    for nodeid in ids:
        _emit("test_collected", nodeid=nodeid)


def _request_nodeid(request):
    item = getattr(request, "_pyfuncitem", None)
    return getattr(item, "nodeid", None) or getattr(request.node, "nodeid", None)


# Fixture instances set up and not yet torn down: id(fixturedef) -> what its teardown event needs.
_open_fixtures = {}


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef, request):
    started = time.perf_counter_ns()
    outcome = "passed"
    try:
        result = yield
    except BaseException as error:
        outcome = "skipped" if isinstance(error, pytest.skip.Exception) else "failed"
        raise
    finally:
        _emit(
            "fixture_setup",
            fixture=fixturedef.argname,
            scope=fixturedef.scope,
            nodeid=_request_nodeid(request),
            duration_ns=time.perf_counter_ns() - started,
            outcome=outcome,
            worker_id=_state["worker"] or "controller",
        )
    # Finalizers run last-in first-out: this one, added after the fixture's own teardown (a
    # generator's code after yield, addfinalizer callbacks), runs just before it, and
    # pytest_fixture_post_finalizer runs just after it, so the two bracket the teardown.
    key = id(fixturedef)
    entry = {"fixture": fixturedef.argname, "scope": fixturedef.scope, "nodeid": _request_nodeid(request), "started": None}
    _open_fixtures[key] = entry

    def _teardown_begins():
        entry["started"] = time.perf_counter_ns()

    fixturedef.addfinalizer(_teardown_begins)
    return result


def pytest_fixture_post_finalizer(fixturedef, request):
    entry = _open_fixtures.pop(id(fixturedef), None)
    if entry is None or entry["started"] is None:
        return
    _emit(
        "fixture_teardown",
        fixture=entry["fixture"],
        scope=entry["scope"],
        nodeid=entry["nodeid"],
        duration_ns=time.perf_counter_ns() - entry["started"],
        worker_id=_state["worker"] or "controller",
    )


def _report_worker(report):
    node = getattr(report, "node", None)
    gateway = getattr(node, "gateway", None)
    if gateway is not None:
        return str(gateway.id)
    return _state["worker"] or "controller"


def pytest_runtest_logreport(report):
    # Workers' reports reach the controller, which writes them once, in arrival order.
    if _state["worker"] is not None:
        return
    wasxfail = getattr(report, "wasxfail", None)
    phase = report.when if report.when in ("setup", "call", "teardown") else "crash"
    start = getattr(report, "start", None)
    stop = getattr(report, "stop", None)
    fields = dict(
        nodeid=report.nodeid,
        phase=phase,
        outcome=report.outcome,
        duration_ns=int(round((report.duration or 0) * 1e9)),
        started_at_ns=None if start is None else int(start * 1e9),
        stopped_at_ns=None if stop is None else int(stop * 1e9),
        worker_id=_report_worker(report),
        wasxfail=None if wasxfail is None else _short(wasxfail),
    )
    if report.failed or phase == "crash":
        fields["message"] = _short(getattr(report, "longreprtext", "") or report.longrepr or "")
    _emit("test_phase", **fields)


@pytest.hookimpl(optionalhook=True)
def pytest_handlecrashitem(crashitem, report, sched):
    node = getattr(report, "node", None)
    gateway = getattr(node, "gateway", None)
    _emit("worker_crashed_item", nodeid=crashitem, worker_id=None if gateway is None else str(gateway.id))


def _fold_sidecar(worker_id):
    writer = _writer()
    stream = _state["stream"]
    if writer is None or stream is None:
        return
    path = _sidecar_path(stream, worker_id)
    accepted = 0
    rejected = 0
    truncated = False
    try:
        with open(path, "r", encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except FileNotFoundError:
        writer.write("worker_sidecar_recovered", worker_id=worker_id, accepted=0, rejected=0, truncated=False, outcome="missing")
        return
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    elif lines:
        # The worker died mid-write; its last partial line is dropped, not guessed at.
        lines.pop()
        truncated = True
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            rejected += 1
            continue
        if not isinstance(record, dict) or record.get("schema") != SCHEMA or record.get("worker_id") != worker_id:
            rejected += 1
            continue
        writer.write_raw_line(line)
        accepted += 1
    writer.write(
        "worker_sidecar_recovered",
        worker_id=worker_id,
        accepted=accepted,
        rejected=rejected,
        truncated=truncated,
        outcome="complete" if rejected == 0 and not truncated else "partial",
    )
    try:
        os.remove(path)
    except OSError:
        pass


@pytest.hookimpl(optionalhook=True)
def pytest_testnodeready(node):
    _emit("worker_ready", worker_id=str(node.gateway.id))


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    worker_id = str(node.gateway.id)
    _emit(
        "worker_down",
        worker_id=worker_id,
        outcome="crashed" if error else "clean",
        error=None if not error else _short(error),
    )
    _fold_sidecar(worker_id)


def pytest_keyboard_interrupt(excinfo):
    _emit("interrupted", exception_type=type(excinfo.value).__name__)


def pytest_internalerror(excrepr, excinfo):
    _emit("internal_error", exception_type=type(excinfo.value).__name__)


def pytest_sessionfinish(session, exitstatus):
    if _state["worker"] is None:
        _emit("session_finished", exit_status=int(exitstatus))
    else:
        _emit("worker_finished", worker_id=_state["worker"], exit_status=int(exitstatus))


def pytest_unconfigure(config):
    writer = _writer()
    if writer is not None:
        writer.close()
    _state["writer"] = None
