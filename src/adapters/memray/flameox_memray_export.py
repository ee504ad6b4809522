"""flameox memray exporter: reads a memray capture with memray's public FileReader and writes JSON.

Usage: python flameox_memray_export.py INPUT.bin OUTPUT.json [--max-records N]
Runs in the interpreter that captured (memray's file format is version-specific); needs only memray.
Exit 3 when the capture cannot be read.
"""
import json
import os
import sys

FREES = {"FREE", "MUNMAP", "PYMALLOC_FREE"}


def _frames(record, limit=128):
    frames = []
    try:
        trace = record.stack_trace(max_stacks=limit)
    except TypeError:
        trace = record.stack_trace()
    for function, filename, line in trace:
        frames.append({"function": str(function), "file": str(filename), "line": int(line) if line else None})
    return frames


def _allocator_name(value):
    from memray import AllocatorType

    try:
        return AllocatorType(int(value)).name
    except (ValueError, TypeError):
        return str(value)


def _records(iterable, max_records):
    out = []
    for record in iterable:
        if len(out) >= max_records:
            break
        out.append({
            "size": int(record.size),
            "n_allocations": int(record.n_allocations),
            "tid": int(record.tid),
            "thread_name": str(getattr(record, "thread_name", "") or ""),
            "allocator": _allocator_name(record.allocator),
            "frames_leaf_first": _frames(record),
        })
    return out


def main(argv):
    if len(argv) < 2:
        print("usage: INPUT.bin OUTPUT.json [--max-records N]", file=sys.stderr)
        return 2
    source, target = argv[0], argv[1]
    max_records = 100000
    if len(argv) >= 4 and argv[2] == "--max-records":
        max_records = int(argv[3])
    import memray
    from memray import AllocatorType, FileReader

    try:
        reader = FileReader(source)
        metadata = reader.metadata
        high = _records(reader.get_high_watermark_allocation_records(merge_threads=True), max_records)
        leaked = _records(reader.get_leaked_allocation_records(merge_threads=True), max_records)
        total_bytes = 0
        total_count = 0
        freed = {int(getattr(AllocatorType, name)) for name in FREES}
        for record in reader.get_allocation_records():
            if int(record.allocator) in freed:
                continue
            total_bytes += int(record.size)
            total_count += int(record.n_allocations)
    except (OSError, ValueError, RuntimeError) as error:
        print(f"cannot read memray capture: {type(error).__name__}: {error}", file=sys.stderr)
        return 3
    document = {
        "schema": "flameox.memray-export.v1",
        "memray_version": getattr(memray, "__version__", None),
        "metadata": {
            "peak_memory": int(metadata.peak_memory),
            "total_allocations": int(metadata.total_allocations),
            "total_frames": int(metadata.total_frames),
            "command_line": str(metadata.command_line),
            "pid": int(metadata.pid),
            "python_allocator": str(metadata.python_allocator),
            "has_native_traces": bool(metadata.has_native_traces),
            "file_format": str(getattr(metadata.file_format, "name", metadata.file_format)),
        },
        "total_allocated_bytes": total_bytes,
        "total_allocation_count": total_count,
        "high_watermark": high,
        "leaked": leaked,
    }
    temporary = target + ".tmp"
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(document, handle, separators=(",", ":"))
    os.replace(temporary, target)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
