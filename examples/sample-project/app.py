"""A tiny log analyser with a deliberately slow parser: the demo's profile should point at it."""
import re
import sys


def make_log(lines):
    return [f"2026-11-29T10:{i % 60:02d}:00 level={'ERROR' if i % 7 == 0 else 'INFO'} user=u{i % 50} took={i % 97}ms" for i in range(lines)]


def parse_line(line):
    # Compiling the pattern on every call is the hotspot a profile should reveal.
    pattern = re.compile(r"(\S+) level=(\w+) user=(\w+) took=(\d+)ms")
    match = pattern.match(line)
    return match.groups() if match else None


def summarize(records):
    errors = sum(1 for record in records if record and record[1] == "ERROR")
    slowest = max(int(record[3]) for record in records if record)
    return errors, slowest


def main(lines):
    log = make_log(lines)
    records = [parse_line(line) for line in log]
    errors, slowest = summarize(records)
    print(f"{lines} lines, {errors} errors, slowest {slowest} ms")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200_000)
