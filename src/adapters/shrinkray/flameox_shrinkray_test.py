"""ShrinkRay's interestingness test, written by flameox next to its configuration.

Runs the reduction's predicate workload on the candidate file exactly as flameox's own reducer does:
the same argv, cwd and environment, the candidate's path in FLAMEOX_REDUCTION_CANDIDATE, each run
bounded by the predicate timeout (and the reduction's wall time), its output kept up to a byte budget,
`predicate_repetitions` runs that must agree. Exit 0 (interesting) only when every run exited 0.
Every call appends one JSON line to the attempt log; past max_attempts it answers "not interesting"
without running the predicate and leaves a marker, and flameox stops ShrinkRay.
"""

import fcntl
import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "shrinkray-test.json"), encoding="utf-8") as handle:
    CONFIG = json.load(handle)


class Interrupted(Exception):
    """ShrinkRay stopped this test (its own adaptive timeout) or flameox is stopping ShrinkRay."""


def interrupt(signum, frame):
    raise Interrupted()


def units_of(data):
    kind = CONFIG["partitioner"]
    if kind == "text_lines":
        return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    if kind == "jsonl_records":
        return sum(1 for line in data.split(b"\n") if line.strip())
    try:
        document = json.loads(data)
    except ValueError:
        return 0
    if kind == "chrome_trace_events" and isinstance(document, dict):
        document = document.get("traceEvents")
    return len(document) if isinstance(document, (list, dict)) else 0


def drain(stream, path, budget):
    kept = 0
    with open(path, "wb") as out:
        while True:
            chunk = stream.read(65536)
            if not chunk:
                return
            if kept < budget:
                piece = chunk[: budget - kept]
                out.write(piece)
                kept += len(piece)


def kill_group(child):
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_once(candidate, timeout, state):
    environment = dict(CONFIG["environment"])
    environment[CONFIG["candidate_variable"]] = candidate
    child = subprocess.Popen(
        CONFIG["argv"],
        cwd=CONFIG["cwd"],
        env=environment,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    state["child"] = child
    budget = CONFIG["output_budget_bytes"]
    readers = [
        threading.Thread(target=drain, args=(child.stdout, CONFIG["stdout"], budget), daemon=True),
        threading.Thread(target=drain, args=(child.stderr, CONFIG["stderr"], budget), daemon=True),
    ]
    for reader in readers:
        reader.start()
    expired = False
    try:
        code = child.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        expired = True
        code = None
    # Whatever the predicate left behind goes with it, as the broker does after a run.
    kill_group(child)
    child.wait()
    for reader in readers:
        reader.join(2)
    state["child"] = None
    return code, expired


def classify(exit_codes, timed_out, failure):
    if failure is not None:
        return "failed_to_run"
    if timed_out:
        return "timed_out"
    if all(code == 0 for code in exit_codes):
        return "interesting"
    if all(code != 0 for code in exit_codes):
        return "not_interesting"
    return "contradictory"


def judge(candidate, state):
    exit_codes, timed_out, failure = [], False, None
    try:
        for _ in range(CONFIG["repetitions"]):
            timeout = min(CONFIG["predicate_timeout_seconds"], CONFIG["wall_deadline_ms"] / 1000 - time.time())
            if timeout <= 0:
                timed_out = True
                break
            code, expired = run_once(candidate, timeout, state)
            exit_codes.append(code)
            if expired:
                timed_out = True
                break
    except Interrupted:
        if state.get("child") is not None:
            kill_group(state["child"])
        timed_out = True
    except OSError as error:
        failure = f"{type(error).__name__}: {error.strerror or error}"
    return exit_codes, timed_out, failure


def load_state():
    try:
        with open(CONFIG["state"], encoding="utf-8") as handle:
            return json.load(handle)
    except FileNotFoundError:
        return {"attempts": 0, "judged": 0, "best_bytes": CONFIG["original_bytes"]}


def save(path, data):
    with open(path + ".tmp", "wb") as handle:
        handle.write(data)
    os.replace(path + ".tmp", path)


def main():
    signal.signal(signal.SIGINT, interrupt)
    signal.signal(signal.SIGTERM, interrupt)
    arguments = sys.argv[1:]
    revalidation = arguments[:1] == ["--revalidate"]
    candidate = os.path.abspath(arguments[-1])
    with open(candidate, "rb") as handle:
        data = handle.read()
    with open(CONFIG["lock"], "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        state = load_state()
        if not revalidation and state["judged"] >= CONFIG["max_attempts"]:
            open(CONFIG["limit_marker"], "w").close()
            return 1
        started = time.monotonic()
        exit_codes, timed_out, failure = judge(candidate, state)
        # Recorded whatever comes next: a late stop must not lose the attempt that already ran.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        classification = classify(exit_codes, timed_out, failure)
        interesting = classification == "interesting"
        became_best = interesting and not revalidation and len(data) < state["best_bytes"]
        if became_best:
            save(CONFIG["best"], data)
            state["best_bytes"] = len(data)
        state["attempts"] += 1
        if not revalidation:
            state["judged"] += 1
        units = units_of(data)
        record = {
            "attempt": state["attempts"],
            "candidate_digest": "sha256:" + hashlib.sha256(data).hexdigest(),
            "units": units,
            "byte_length": len(data),
            "removed_units": max(0, CONFIG["original_units"] - units),
            "dependency_added_units": 0,
            "classification": classification,
            "cache_status": "miss",
            "exit_codes": exit_codes,
            "duration_ms": round((time.monotonic() - started) * 1000),
            "became_best": became_best,
            "revalidation": revalidation,
            "failure": failure,
        }
        with open(CONFIG["log"], "a", encoding="utf-8") as log:
            log.write(json.dumps(record) + "\n")
        save(CONFIG["state"], json.dumps(state).encode())
        return 0 if interesting else 1


if __name__ == "__main__":
    sys.exit(main())
