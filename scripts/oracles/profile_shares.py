#!/usr/bin/env python3
"""Independent oracle for profile files (no flameox code): self and total weight per function name,
per weight unit, for the formats flameox reads into stacks.

Usage: profile_shares.py <format> <file>   (the file may be gzip-compressed)
Output on stdout: {"units": {unit: {"total": W, "functions": {name: [self, total]}}}}

Conventions, taken from each format's documentation and shared with every reader of it:
- a stack is root first; a function's self weight is the weight of stacks whose leaf it is, its total
  weight the weight of stacks it is on (counted once per stack, whatever the recursion);
- stacks with no frames, and weights that are negative, not numbers or beyond 2^53, count nowhere;
- units: "ns" (time), "samples" (counts) or "bytes"; shares are taken within one unit.
Format notes are at each reader below.
"""
import gzip
import json
import marshal
import re
import sys
from collections import defaultdict

MAX_WEIGHT = 2 ** 53


class Shares:
    def __init__(self):
        self.units = {}

    def add(self, unit, names, weight):
        if not names or not (weight > 0) or weight > MAX_WEIGHT:
            return
        table = self.units.setdefault(unit, {"total": 0.0, "self": defaultdict(float), "all": defaultdict(float)})
        table["total"] += weight
        table["self"][names[-1]] += weight
        for name in set(names):
            table["all"][name] += weight

    def result(self):
        units = {}
        for unit, table in self.units.items():
            functions = {name: [table["self"].get(name, 0.0), total] for name, total in table["all"].items()}
            units[unit] = {"total": table["total"], "functions": functions}
        return {"units": units}


def read_bytes(path):
    with open(path, "rb") as handle:
        data = handle.read()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def read_text(path):
    data = read_bytes(path)
    if data[:2] == b"\xff\xfe":
        return data[2:].decode("utf-16-le")
    if data[:2] == b"\xfe\xff":
        return data[2:].decode("utf-16-be")
    return data.decode("utf-8", errors="replace").lstrip("\ufeff")


def text_lines(path):
    return [line[:-1] if line.endswith("\r") else line for line in read_text(path).split("\n")]


# Folded stacks: `frame;frame;frame weight`; a frame may end in ` (file:line)` and/or ` [module]`
# (the module last; an empty ` []` leaves the name before it as it is); py-spy raw also allows
# ` (file.py)` and starts lines with process/thread frames.
MODULE = re.compile(r"^(.+) \[([^\[\]]*)\]$")
FILE_LINE = re.compile(r"^(.*) \(([^()]*):(\d+)\)$")
FILE_ONLY = re.compile(r"^(.*) \(([^()\s]+\.[A-Za-z0-9]+)\)$")


def folded_name(frame, file_only):
    match = MODULE.match(frame)
    rest = match.group(1) if match else frame
    if match and match.group(2) == "":
        return rest
    match = FILE_LINE.match(rest)
    if match:
        return match.group(1)
    if file_only:
        match = FILE_ONLY.match(rest)
        if match:
            return match.group(1)
    return rest


def strip_py_spy_context(stack):
    while True:
        match = re.match(r'^process \d+:"', stack)
        if not match:
            break
        end = stack.find('";', match.end())
        if end == -1:
            return ""
        stack = stack[end + 2:]
    match = re.match(r"^thread \(([^)]*)\)(?:: ([^;]*))?(?:;|$)", stack)
    return stack[match.end():] if match else stack


def folded(path, py_spy):
    shares = Shares()
    for line in text_lines(path):
        text = line.rstrip()
        if text.strip() == "" or text.startswith("#"):
            continue
        space = text.rfind(" ")
        if space == -1:
            continue
        try:
            weight = float(text[space + 1:])
        except ValueError:
            continue
        stack = text[:space]
        if py_spy:
            stack = strip_py_spy_context(stack)
        if stack.strip() == "":
            continue
        shares.add("samples", [folded_name(part, py_spy) for part in stack.split(";")], weight)
    return shares


# `perf script`: a header `comm pid[/tid] [cpu] time: [period] event:` (old perf: no time, the line
# ends with the event), then the call chain leaf first as `address symbol[+0xoffset] (dso)`, then a
# blank line. Every sample counts 1; the command is not a frame. Python perf trampolines
# `py::name:/file.py` are the function `name`.
PERF_HEADER = re.compile(
    r"^(\S.*?)\s+(-?\d+)(?:/(-?\d+))?\s+(?:\[\d+\]\s+)?(?:\d+\.\d+:|(?:\d+\s+)?[A-Za-z][\w.\-/]*(?::[\w.\-/]*)*:\s*$)"
)
PERF_FRAME = re.compile(r"^\s*([0-9a-fA-F]+)\s+(\S.*)$")


def perf_symbol(rest):
    symbol = rest.strip()
    open_at = symbol.rfind(" (")
    if open_at != -1 and symbol.endswith(")"):
        symbol = symbol[:open_at]
    symbol = re.sub(r"\+0x[0-9a-fA-F]+$", "", symbol)
    trampoline = re.match(r"^py::(.+?):(/.*|<[^>]*>)$", symbol)
    if trampoline:
        return trampoline.group(1)
    return symbol or "[unknown]"


def perf_script(path):
    shares = Shares()
    chain, in_sample = [], False

    def finish():
        if in_sample and chain:
            shares.add("samples", list(reversed(chain)), 1)

    for line in text_lines(path):
        if line.strip() == "":
            finish()
            chain, in_sample = [], False
            continue
        if line.startswith("#"):
            continue
        header = None if line[:1].isspace() or len(line) > 4096 else PERF_HEADER.match(line)
        if header:
            finish()
            chain, in_sample = [], True
            inline = re.search(r":\s+([0-9a-fA-F]+)\s+(\S.*\))\s*$", line[header.end():])
            if inline:
                chain.append(perf_symbol(inline.group(2)))
            continue
        frame = PERF_FRAME.match(line) if in_sample else None
        if frame:
            chain.append(perf_symbol(frame.group(2)))
    finish()
    return shares


# DTrace aggregated stacks: frames leaf first (`module`function+0xoffset`), then an indented count
# line; a blank line drops frames not yet counted (the header's probe line).
def dtrace(path):
    shares = Shares()
    pending = []
    for line in text_lines(path):
        if line.strip() == "":
            pending = []
            continue
        if re.match(r"^CPU\s+ID\s+FUNCTION:NAME\s*$", line):
            continue
        count = re.match(r"^\s+(-?\d+)\s*$", line)
        if count:
            names = []
            for frame in reversed(pending):
                text = frame.strip()
                tick = text.find("`")
                symbol = text[tick + 1:] if tick >= 0 else text
                symbol = re.sub(r"\+0x[0-9a-fA-F]+$", "", symbol)
                names.append(symbol or "[unknown]")
            shares.add("samples", names, int(count.group(1)))
            pending = []
            continue
        pending.append(line)
    return shares


# GHC: the -p text report's cost-centre tree (indentation is depth; a node's individual ticks, or its
# individual %time times the report's total ticks / 100 rounded, weigh its root→node stack), or the
# -pj JSON tree (ticks per node).
def ghc(path):
    text = read_text(path)
    shares = Shares()
    if text.lstrip().startswith("{"):
        document = json.loads(text)
        labels = {centre["id"]: centre.get("label", "") for centre in document["cost_centres"]}
        pending = [(document["profile"], [])]
        while pending:
            node, path_names = pending.pop()
            names = path_names + [labels.get(node.get("id"), "<cost centre %s>" % node.get("id"))]
            shares.add("samples", names, node.get("ticks", 0))
            for child in node.get("children", []):
                pending.append((child, names))
        return shares
    lines = text.split("\n")
    total_ticks = None
    start = None
    for index, line in enumerate(lines):
        match = re.search(r"total time\s*=.*\((\d+) ticks", line)
        if match:
            total_ticks = int(match.group(1))
        if line.startswith("COST CENTRE") and " no." in line + " ":
            start = index
            break
    header = lines[start]
    module_at = header.index("MODULE")
    columns = header[header.index("no."):].split()
    ticks_column = columns.index("ticks") if "ticks" in columns else None
    stack = []
    for line in lines[start + 1:]:
        if line.strip() == "":
            continue
        depth = len(line) - len(line.lstrip())
        name = line[:module_at].strip() or "<unnamed>"
        numbers = line.split()[-len(columns):]
        while stack and stack[-1][0] >= depth:
            stack.pop()
        stack.append((depth, name))
        if ticks_column is not None:
            weight = float(numbers[ticks_column])
        else:
            percent = float(numbers[2])
            weight = percent if total_ticks is None else round(percent * total_ticks / 100)
        shares.add("samples", [entry[1] for entry in stack], weight)
    return shares


# stackprof JSON with `raw`: runs of [height, frame id … (root first), count]; a frame is named by
# frames[id].name (or `<frame id>`).
def stackprof(path):
    document = json.loads(read_text(path))
    frames = document["frames"]
    raw = document["raw"]
    shares = Shares()
    at = 0
    while at < len(raw):
        height = raw[at]
        ids = raw[at + 1:at + 1 + height]
        count = raw[at + 1 + height]
        names = []
        for frame_id in ids:
            frame = frames.get(str(frame_id), {})
            names.append(frame.get("name") or "<frame %s>" % frame_id)
        shares.add("samples", names, count)
        at += height + 2
    return shares


# Firefox Profiler: Gecko profiles (schema+data tables, per-thread stringTable, frame `location`
# strings `name (file:line[:col])`, `name (in lib)`), processed profiles (column tables, funcTable
# names from the thread's stringArray or shared.stringArray), child processes under `processes`, and
# Firefox devtools recordings wrapping a Gecko profile under `profile`. One stack per sample, weight
# 1 or the samples' weight column.
def gecko_table(value):
    if not isinstance(value, dict):
        return 0, lambda row, column: None
    if isinstance(value.get("schema"), dict) and isinstance(value.get("data"), list):
        schema, rows = value["schema"], value["data"]

        def get(row, column):
            index = schema.get(column)
            values = rows[row]
            return values[index] if isinstance(index, int) and isinstance(values, list) and index < len(values) else None

        return len(rows), get
    length = max([len(column) for column in value.values() if isinstance(column, list)] or [0])

    def get(row, column):
        values = value.get(column)
        return values[row] if isinstance(values, list) and row < len(values) else None

    return length, get


def gecko_location(location):
    if len(location) > 4096:
        return location
    match = re.match(r"^(.*) \((.+?):(\d+)(?::\d+)?\)$", location)
    if match:
        return match.group(1)
    match = re.match(r"^(.*) \(in (.+)\)$", location)
    if match:
        return match.group(1)
    return location


def gecko_threads(profile):
    for thread in profile.get("threads", []) or []:
        if isinstance(thread, str):
            # Gecko profiles before version 4 hold a child process's profile as a JSON string.
            yield from gecko_threads(json.loads(thread))
        elif isinstance(thread, dict):
            yield thread
    for child in profile.get("processes", []) or []:
        if isinstance(child, dict):
            yield from gecko_threads(child)


def is_index(value):
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def gecko(path):
    document = json.loads(read_text(path))
    if "meta" not in document and isinstance(document.get("profile"), dict):
        document = document["profile"]
    shared = (document.get("shared") or {}).get("stringArray")
    shares = Shares()
    for thread in gecko_threads(document):
        strings = thread.get("stringArray") if isinstance(thread.get("stringArray"), list) else thread.get("stringTable")
        if not isinstance(strings, list):
            strings = shared or []

        def text(index):
            return strings[index] if is_index(index) and index < len(strings) else None

        samples = thread.get("samples")
        if not isinstance(samples, dict):
            continue
        weight_type = samples.get("weightType")
        unit = {"tracing-ms": "ns", "bytes": "bytes"}.get(weight_type, "samples")
        scale = 1e6 if weight_type == "tracing-ms" else 1
        sample_count, sample = gecko_table(samples)
        stack_count, stack = gecko_table(thread.get("stackTable"))
        _, frame = gecko_table(thread.get("frameTable"))
        processed = isinstance(thread.get("funcTable"), dict)
        _, func = gecko_table(thread.get("funcTable"))

        def frame_name(index):
            if processed:
                function = frame(index, "func")
                if not is_index(function):
                    return "<frame %d>" % index
                return text(func(function, "name")) or "<function %d>" % function
            location = text(frame(index, "location"))
            return gecko_location(location if location is not None else "<frame %d>" % index)

        for row in range(sample_count):
            at = sample(row, "stack")
            if not is_index(at) or at >= stack_count:
                continue
            names = []
            seen = 0
            while is_index(at) and seen <= stack_count:
                frame_index = stack(at, "frame")
                if is_index(frame_index):
                    names.append(frame_name(frame_index))
                at = stack(at, "prefix")
                seen += 1
            weight = sample(row, "weight")
            weight = weight if isinstance(weight, (int, float)) and weight >= 0 else 1
            shares.add(unit, list(reversed(names)), weight * scale)
    return shares


# cProfile .pstats: {(file, line, name): (cc, nc, tt, ct, callers)}. Self is tt, total is ct (cProfile's
# own cumulative time), both in ns, summed per function name.
def pstats(path):
    stats = marshal.loads(read_bytes(path))
    shares = Shares()
    table = shares.units.setdefault("ns", {"total": 0.0, "self": defaultdict(float), "all": defaultdict(float)})
    for (file, line, name), (cc, nc, tt, ct, callers) in stats.items():
        table["total"] += tt * 1e9
        table["self"][name] += tt * 1e9
        table["all"][name] += ct * 1e9
    return shares


# pprof profile.proto: the chosen sample type is default_sample_type, else "cpu", else the last; a
# location's lines are innermost first (each a frame, named by its function's name or system name);
# a location without lines is its address `0x…`; sample location ids are leaf first.
def varint(data, at):
    value, shift = 0, 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def fields(data):
    at = 0
    while at < len(data):
        key, at = varint(data, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, at = varint(data, at)
        elif wire == 2:
            length, at = varint(data, at)
            value = data[at:at + length]
            at += length
        elif wire == 1:
            value = int.from_bytes(data[at:at + 8], "little")
            at += 8
        elif wire == 5:
            value = int.from_bytes(data[at:at + 4], "little")
            at += 4
        else:
            raise ValueError("wire type %d" % wire)
        yield number, wire, value


def packed(wire, value):
    if wire == 0:
        return [value]
    values, at = [], 0
    while at < len(value):
        item, at = varint(value, at)
        values.append(item)
    return values


def signed(value):
    return value - (1 << 64) if value >= 1 << 63 else value


PPROF_UNITS = {
    "nanoseconds": "ns", "ns": "ns", "microseconds": "ns", "us": "ns", "milliseconds": "ns", "ms": "ns",
    "seconds": "ns", "s": "ns", "bytes": "bytes",
}


def pprof(path):
    data = read_bytes(path)
    sample_types, samples, locations, functions, strings = [], [], {}, {}, []
    default_type = 0
    for number, wire, value in fields(data):
        if number == 1:
            inner = {n: v for n, _, v in fields(value)}
            sample_types.append((inner.get(1, 0), inner.get(2, 0)))
        elif number == 2:
            ids, values = [], []
            for n, w, v in fields(value):
                if n == 1:
                    ids += packed(w, v)
                elif n == 2:
                    values += [signed(item) for item in packed(w, v)]
            samples.append((ids, values))
        elif number == 4:
            location = {"id": 0, "address": 0, "lines": []}
            for n, w, v in fields(value):
                if n == 1:
                    location["id"] = v
                elif n == 3:
                    location["address"] = v
                elif n == 4:
                    line = {m: x for m, _, x in fields(v)}
                    location["lines"].append(line.get(1, 0))
            locations[location["id"]] = location
        elif number == 5:
            inner = {n: v for n, _, v in fields(value)}
            functions[inner.get(1, 0)] = (inner.get(2, 0), inner.get(3, 0))
        elif number == 6:
            strings.append(value.decode("utf-8", errors="replace"))
        elif number == 14:
            default_type = value
    names = [strings[kind] for kind, _ in sample_types]
    if default_type and strings[default_type] in names:
        chosen = names.index(strings[default_type])
    elif "cpu" in names:
        chosen = names.index("cpu")
    else:
        chosen = len(names) - 1
    unit = PPROF_UNITS.get(strings[sample_types[chosen][1]].lower(), "samples")
    shares = Shares()
    for ids, values in samples:
        leaf_first = []
        for location_id in ids:
            location = locations.get(location_id)
            if location is None:
                continue
            if not location["lines"]:
                leaf_first.append("0x%x" % location["address"])
            for function_id in location["lines"]:
                name, system_name = functions.get(function_id, (0, 0))
                leaf_first.append((strings[name] if name else "") or (strings[system_name] if system_name else "") or "<unknown>")
        weight = values[chosen] if chosen < len(values) else 0
        shares.add(unit, list(reversed(leaf_first)), weight)
    return shares


# speedscope: sampled profiles (frame-index stacks, root first, with weights) and evented ones (open
# and close events; the time between events weighs the stack open then), in the profile's unit.
SPEEDSCOPE_UNITS = {
    "nanoseconds": ("ns", 1), "microseconds": ("ns", 1e3), "milliseconds": ("ns", 1e6), "seconds": ("ns", 1e9),
    "bytes": ("bytes", 1), "none": ("samples", 1),
}


def speedscope(path):
    document = json.loads(read_text(path))
    frames = [frame.get("name", "") for frame in document["shared"]["frames"]]
    shares = Shares()
    for profile in document["profiles"]:
        unit, scale = SPEEDSCOPE_UNITS.get(profile.get("unit", "none"), ("samples", 1))
        if profile["type"] == "sampled":
            for stack, weight in zip(profile["samples"], profile["weights"]):
                shares.add(unit, [frames[index] for index in stack], weight * scale)
        else:
            stack, last = [], profile.get("startValue", 0)
            for event in profile["events"]:
                if stack:
                    shares.add(unit, [frames[index] for index in stack], (event["at"] - last) * scale)
                last = event["at"]
                if event["type"] == "O":
                    stack.append(event["frame"])
                elif stack:
                    stack.pop()
    return shares


# V8 .cpuprofile: nodes (flat with children ids, or the pre-2016 `head` tree), samples and timeDeltas
# (µs; a sample lasts until the next, the last until endTime) or pre-2016 timestamps. The parentless
# "(root)" node is no frame; an empty functionName is "(anonymous)".
def v8(path):
    document = json.loads(read_text(path))
    nodes, parents = {}, {}
    if "head" in document:
        pending = [(document["head"], None)]
        while pending:
            node, parent = pending.pop()
            nodes[node["id"]] = node.get("callFrame", node)
            parents[node["id"]] = parent
            for child in node.get("children", []):
                pending.append((child, node["id"]))
        timestamps = document.get("timestamps", [])
        start, end = document.get("startTime", 0) * 1e6, document.get("endTime", 0) * 1e6
    else:
        for node in document["nodes"]:
            nodes[node["id"]] = node.get("callFrame", {})
            if "parent" in node:
                parents[node["id"]] = node["parent"]
        for node in document["nodes"]:
            for child in node.get("children", []):
                parents.setdefault(child, node["id"])
        timestamps = None
        start, end = document.get("startTime", 0), document.get("endTime")
    samples = document.get("samples", [])
    deltas = document.get("timeDeltas", [])
    shares = Shares()
    clock = start
    for index, node_id in enumerate(samples):
        if timestamps:
            duration = (timestamps[index + 1] if index + 1 < len(timestamps) else end) - timestamps[index]
        else:
            clock += deltas[index] if index < len(deltas) else 0
            if index + 1 < len(samples):
                duration = deltas[index + 1] if index + 1 < len(deltas) else 0
            else:
                duration = (end - clock) if end is not None else 0
        names, at = [], node_id
        while at is not None and at in nodes:
            name = nodes[at].get("functionName", "")
            if not (parents.get(at) is None and name == "(root)"):
                names.append(name or "(anonymous)")
            at = parents.get(at)
        shares.add("ns", list(reversed(names)), max(duration, 0) * 1000)
    return shares


READERS = {
    "collapsed": lambda path: folded(path, False),
    "py_spy_raw": lambda path: folded(path, True),
    "perf_script": perf_script,
    "dtrace_stacks": dtrace,
    "ghc_prof": ghc,
    "stackprof": stackprof,
    "gecko_profile": gecko,
    "pstats": pstats,
    "pprof": pprof,
    "speedscope": speedscope,
    "v8_cpuprofile": v8,
}

if __name__ == "__main__":
    print(json.dumps(READERS[sys.argv[1]](sys.argv[2]).result()))
