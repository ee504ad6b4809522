#!/usr/bin/env python3
"""Independent oracle for Chrome/kineto trace nesting (no flameox code): per-operator calls, self and
total time, and self time per (category, name) slice, from a Chrome trace JSON file (gzip or not).

Rules, as trace viewers draw a trace:
- events nest per thread, the thread being (pid, tid) as text; in timestamp order, B/E before X at
  the same timestamp, longer X first, then file order;
- timestamps are exact decimals (microseconds) turned into integer nanoseconds (half up);
- an X slice ends the open X slices that ended at or before its start, then those it overlaps
  without fitting inside (their end is before its end): it is their sibling, not their child;
- a B opens a slice that the innermost open B of the same name (or the innermost B, for an E with
  no name) closes at the E's timestamp, together with any slice still open above it;
- self time = duration minus the (clipped) durations of direct children; a negative dur is 0;
- kineto bookkeeping spans (category "Trace" on pid "Spans") nest but carry no self time.

Usage: chrome_trace_operators.py TRACE [--category cpu_op]  → JSON on stdout:
  {"operators": {name: {calls, self_ns, total_ns, outermost_calls, outermost_total_ns}},
   "self_by_frame": {"<category>\\u0000<name>": self_ns}, "slices": N}
"""
import gzip
import json
import re
import sys
from decimal import ROUND_HALF_UP, Decimal

BOOKKEEPING = re.compile(r"^(PyTorch Profiler|__MTIA_CCP_events__|MTIA Activity Trace) \(-?\d+\)$")


def load(path):
    with open(path, "rb") as handle:
        head = handle.read(2)
    opener = gzip.open if head == b"\x1f\x8b" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        text = handle.read()
    try:
        document = json.loads(text, parse_float=Decimal, parse_int=Decimal)
    except json.JSONDecodeError:
        # The JSON Array Format may end without its closing bracket.
        document = json.loads(text.rstrip().rstrip(",") + "]", parse_float=Decimal, parse_int=Decimal)
    return document["traceEvents"] if isinstance(document, dict) else document


def as_text(value):
    if isinstance(value, str):
        return value
    if isinstance(value, Decimal):
        return format(value.normalize(), "f") if value == value.to_integral_value() else str(value)
    return None


def nanoseconds(value):
    if isinstance(value, str):
        value = Decimal(value)
    if not isinstance(value, Decimal):
        return None
    return int((value * 1000).quantize(Decimal(1), rounding=ROUND_HALF_UP))


class Slice:
    __slots__ = ("index", "name", "category", "start", "end", "duration", "children", "parent", "bookkeeping", "begin")

    def __init__(self, index, event, start, duration, begin):
        self.index = index
        self.name = event.get("name") if isinstance(event.get("name"), str) else (as_text(event.get("name")) or "")
        self.category = event.get("cat") if isinstance(event.get("cat"), str) else None
        self.start = start
        self.duration = duration
        self.end = start + duration if duration is not None else None
        self.children = 0
        self.parent = None
        self.bookkeeping = self.category == "Trace" and (as_text(event.get("pid")) == "Spans" or bool(BOOKKEEPING.match(self.name)))
        self.begin = begin


def nest(events):
    threads = {}
    for index, event in enumerate(events):
        if not isinstance(event, dict):
            continue
        phase = event.get("ph")
        if phase not in ("X", "B", "E"):
            continue
        start = nanoseconds(event.get("ts"))
        if start is None:
            start = 0
        key = (as_text(event.get("pid")), as_text(event.get("tid")))
        duration = 0
        if phase == "X":
            duration = nanoseconds(event.get("dur")) or 0
            duration = max(duration, 0)
        group = 0 if phase in ("B", "E") else 1
        threads.setdefault(key, []).append(((start, group, -duration if phase == "X" else 0, index), phase, event))
    finished = []
    for items in threads.values():
        items.sort(key=lambda item: item[0])
        stack = []
        last = None

        def finish(piece):
            finished.append(piece)
            if stack:
                parent = stack[-1]
                piece.parent = parent
                top_end = parent.end if parent.end is not None else piece.end
                parent.children += max(0, min(piece.end, top_end) - piece.start)

        for (start, _group, _sub, index), phase, event in items:
            reach = start - _sub if phase == "X" else start
            last = reach if last is None else max(last, reach)
            if phase == "E":
                name = event.get("name") if isinstance(event.get("name"), str) else None
                at = len(stack) - 1
                while at >= 0 and not (stack[at].begin and (not name or stack[at].name == name)):
                    at -= 1
                if at < 0:
                    continue
                while len(stack) - 1 > at:
                    inner = stack.pop()
                    if inner.begin:
                        inner.duration = max(0, start - inner.start)
                        inner.end = inner.start + inner.duration
                    finish(inner)
                piece = stack.pop()
                piece.duration = max(0, start - piece.start)
                piece.end = piece.start + piece.duration
                finish(piece)
                continue
            while stack and not stack[-1].begin and stack[-1].end <= start:
                finish(stack.pop())
            if phase == "X":
                duration = -_sub
                end = start + duration
                while stack and not stack[-1].begin and start < stack[-1].end < end:
                    finish(stack.pop())
                piece = Slice(index, event, start, duration, False)
            else:
                piece = Slice(index, event, start, None, True)
            piece.parent = stack[-1] if stack else None
            stack.append(piece)
        while stack:
            piece = stack.pop()
            if piece.begin:
                piece.duration = max(0, last - piece.start)
                piece.end = piece.start + piece.duration
            finish(piece)
    return finished


def main():
    path = sys.argv[1]
    category = sys.argv[sys.argv.index("--category") + 1] if "--category" in sys.argv else "cpu_op"
    slices = nest(load(path))
    operators = {}
    self_by_frame = {}
    for piece in slices:
        own = max(0, piece.duration - piece.children)
        if not piece.bookkeeping and own > 0:
            frame = f"{piece.category or ''}\u0000{piece.name or '<unnamed>'}"
            self_by_frame[frame] = self_by_frame.get(frame, 0) + own
        if piece.category != category:
            continue
        entry = operators.setdefault(piece.name, {"calls": 0, "self_ns": 0, "total_ns": 0, "outermost_calls": 0, "outermost_total_ns": 0})
        entry["calls"] += 1
        entry["total_ns"] += piece.duration
        entry["self_ns"] += max(0, piece.duration - piece.children)
        ancestor = piece.parent
        while ancestor is not None and ancestor.name != piece.name:
            ancestor = ancestor.parent
        if ancestor is None:
            entry["outermost_calls"] += 1
            entry["outermost_total_ns"] += piece.duration
    json.dump({"operators": operators, "self_by_frame": self_by_frame, "slices": len(slices)}, sys.stdout, sort_keys=True)


if __name__ == "__main__":
    main()
