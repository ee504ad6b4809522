#!/usr/bin/env python3
"""Independent oracle for V8 CPU profiles (no flameox code): self time in ns per function name, from
a .cpuprofile (current or pre-2016 format) or a Chrome DevTools trace carrying one (Profile +
ProfileChunk events, or a CpuProfile event), gzip or not.

Each sample lasts until the next one (timeDeltas: the next sample's delta; pre-2016 timestamps: the
difference to the next timestamp); the last one until endTime. Negative durations count 0. The
"(root)" node is no function. Output: {"self_ns": {name: ns}, "samples": N} on stdout.
"""
import gzip
import json
import sys


def load(path):
    with open(path, "rb") as handle:
        head = handle.read(2)
    opener = gzip.open if head == b"\x1f\x8b" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return json.load(handle)


def flatten_head(head):
    nodes, pending = [], [(head, None)]
    while pending:
        node, parent = pending.pop()
        nodes.append({"id": node["id"], "callFrame": node, "parent": parent})
        for child in node.get("children", []):
            pending.append((child, node["id"]))
    return nodes


class Profile:
    def __init__(self):
        self.names = {}
        self.samples = []
        self.deltas = []
        self.timestamps = []
        self.start = None
        self.end = None

    def add_nodes(self, nodes):
        for node in nodes:
            frame = node.get("callFrame", node)
            self.names[node["id"]] = frame.get("functionName") or "(anonymous)"

    def self_ns(self, totals):
        count = len(self.samples)
        clock = self.start or 0
        for index, node in enumerate(self.samples):
            if self.timestamps:
                start = self.timestamps[index]
                if index + 1 < len(self.timestamps):
                    duration = self.timestamps[index + 1] - start
                else:
                    duration = (self.end - start) if self.end is not None else 0
            else:
                clock += self.deltas[index] if index < len(self.deltas) else 0
                if index + 1 < count:
                    duration = self.deltas[index + 1] if index + 1 < len(self.deltas) else 0
                else:
                    duration = (self.end - clock) if self.end is not None else 0
            duration = max(duration, 0)
            name = self.names.get(node)
            if name is None or name == "(root)":
                continue
            totals[name] = totals.get(name, 0) + round(duration * 1000)
        return count


def profiles_of(document):
    if isinstance(document, dict) and ("nodes" in document or "head" in document):
        profile = Profile()
        if "head" in document:
            profile.add_nodes(flatten_head(document["head"]))
            profile.timestamps = document.get("timestamps", [])
            scale = 1e6
        else:
            profile.add_nodes(document["nodes"])
            profile.deltas = document.get("timeDeltas", [])
            scale = 1
        profile.samples = document.get("samples", [])
        profile.start = document["startTime"] * scale if "startTime" in document else None
        profile.end = document["endTime"] * scale if "endTime" in document else None
        return [profile]
    events = document["traceEvents"] if isinstance(document, dict) else document
    found = {}
    result = []
    for event in events:
        if not isinstance(event, dict):
            continue
        data = (event.get("args") or {}).get("data") or {}
        if event.get("name") == "CpuProfile":
            cpu = data.get("cpuProfile") or {}
            profile = Profile()
            profile.add_nodes(cpu.get("nodes", []))
            profile.samples = cpu.get("samples", [])
            profile.deltas = cpu.get("timeDeltas", data.get("timeDeltas", []))
            profile.start, profile.end = cpu.get("startTime"), cpu.get("endTime")
            result.append(profile)
        elif event.get("name") in ("Profile", "ProfileChunk"):
            key = (event.get("pid"), event.get("id"))
            if key not in found:
                found[key] = Profile()
                result.append(found[key])
            profile = found[key]
            if event["name"] == "Profile":
                profile.start = data.get("startTime", profile.start)
                continue
            cpu = data.get("cpuProfile") or {}
            profile.add_nodes(cpu.get("nodes", []))
            profile.samples += cpu.get("samples", [])
            profile.deltas += data.get("timeDeltas", cpu.get("timeDeltas", []))
            if "endTime" in data:
                profile.end = data["endTime"]
    return result


def main():
    totals = {}
    samples = sum(profile.self_ns(totals) for profile in profiles_of(load(sys.argv[1])))
    json.dump({"self_ns": totals, "samples": samples}, sys.stdout, sort_keys=True)


if __name__ == "__main__":
    main()
