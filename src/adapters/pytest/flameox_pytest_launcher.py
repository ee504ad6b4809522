"""flameox pytest launcher: runs a pytest command line in this interpreter with the flameox plugin.

Usage: python flameox_pytest_launcher.py --output EVENTS.jsonl -- pytest|python -m pytest [args...]
Needs only pytest. The plugin sits beside this file; putting this folder first on sys.path
before pytest (and xdist) load lets local xdist workers import it too, because xdist gives
them the controller's sys.path.
"""
import os
import sys
import time


def _pytest_arguments(command):
    if not command:
        raise SystemExit("flameox pytest launcher: no pytest command after --")
    head = os.path.basename(command[0])
    if head.startswith("python"):
        if len(command) >= 3 and command[1] == "-m" and command[2] == "pytest":
            return command[3:]
        raise SystemExit("flameox pytest launcher: expected 'python -m pytest ...'")
    if head.startswith("pytest") or head == "py.test":
        return command[1:]
    raise SystemExit("flameox pytest launcher: expected a pytest command, got " + command[0])


def main(argv):
    if "--" not in argv:
        raise SystemExit("flameox pytest launcher: usage: --output PATH -- <pytest command>")
    split = argv.index("--")
    options, command = argv[:split], argv[split + 1 :]
    if len(options) != 2 or options[0] != "--output":
        raise SystemExit("flameox pytest launcher: usage: --output PATH -- <pytest command>")
    os.environ["FLAMEOX_PYTEST_EVENTS_PATH"] = os.path.abspath(options[1])
    os.environ.setdefault("FLAMEOX_PYTEST_RUN_STARTED_NS", str(time.time_ns()))
    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:
        sys.path.insert(0, here)
    arguments = _pytest_arguments(command)
    import pytest

    sys.argv = [command[0]] + arguments
    return pytest.main(["-p", "flameox_pytest_plugin", *arguments])


if __name__ == "__main__":
    sys.exit(int(main(sys.argv[1:])))
