"""Runs ShrinkRay's command line with its greedy reduction stopped at the first fixpoint.

ShrinkRay (the pinned release) then restarts from the original input, computing a Python-level sort
key of every candidate of the first run; on a 10,000-line input at parallelism 1 that phase ran for
minutes without calling the interestingness test once. flameox turns it off so a reduction's time is
spent judging candidates. Refuses to run a release without the setting instead of running it unchanged.
"""

import sys

import attrs
from shrinkray import reducer

if "restart_at_fixpoint" not in attrs.fields_dict(reducer.ShrinkRay):
    sys.stderr.write("flameox: this ShrinkRay release has no restart_at_fixpoint; only the pinned release is supported\n")
    sys.exit(2)

_initialize = reducer.ShrinkRay.__init__


def _to_first_fixpoint(self, *args, **kwargs):
    kwargs["restart_at_fixpoint"] = False
    _initialize(self, *args, **kwargs)


reducer.ShrinkRay.__init__ = _to_first_fixpoint

from shrinkray.__main__ import main  # noqa: E402

sys.argv[0] = "shrinkray"
sys.exit(main())
