#!/usr/bin/env python3
"""Sums the GPU time of a kernel trace by kernel name. Traces come from `worldcast bench model
--trace DIR` and `worldcast train --trace FILE`.

Usage: tools/kernel_table.py TRACE.json [TRACE.json ...] [--top N]
Prints, per trace, the total GPU time and the kernels (and device copies / fills) that took
the most, with their call counts and share, so a block's time can be attributed to GEMMs,
attention, normalisation and copies.
"""
import argparse
import collections
import json
import re
import sys


def short_name(name: str) -> str:
    """Kernel names carry long template arguments; keep the part that says what it is."""
    name = re.sub(r"<.*", "", name) if len(name) > 90 else name
    return name[:90]


def table(path: str, top: int) -> str:
    try:
        with open(path) as f:
            trace = json.load(f)
    except (OSError, json.JSONDecodeError) as error:
        raise SystemExit(f"{path}: cannot read the trace: {error}")
    events = trace.get("traceEvents") if isinstance(trace, dict) else None
    if not isinstance(events, list):
        raise SystemExit(f"{path}: no traceEvents list")
    total = collections.Counter()
    calls = collections.Counter()
    for event in events:
        if not isinstance(event, dict) or event.get("ph") != "X":
            continue
        if event.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset"):
            continue
        name = short_name(str(event.get("name", "?")))
        total[name] += float(event.get("dur", 0.0))
        calls[name] += 1
    device_us = sum(total.values())
    lines = [f"{path}: GPU time {device_us / 1000:.2f} ms in {sum(calls.values())} kernels"]
    lines.append(f"{'ms':>10} {'share':>6} {'calls':>6}  kernel")
    for name, us in total.most_common(top):
        lines.append(f"{us / 1000:10.2f} {100 * us / max(device_us, 1e-9):5.1f}% {calls[name]:6d}  {name}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces", nargs="+")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    print("\n\n".join(table(path, args.top) for path in args.traces))


if __name__ == "__main__":
    sys.exit(main())
