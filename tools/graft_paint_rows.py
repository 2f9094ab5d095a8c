#!/usr/bin/env python3
"""Grafts the paint rows of a painted model's output head onto a paint-less model.

Usage: tools/graft_paint_rows.py BODY_DIR PAINTED_DIR OUT_DIR

The paint logits (Note [Painted pixels]) are the last rows of `head.proj`; everything else of a
painted model has the shapes of the same model without paints. The graft takes every tensor and
the head's first rows from BODY_DIR (for example a repair run, trained without paints) and the
head's paint rows, the config and the index from PAINTED_DIR (the bundled model). It is a quick
look at a new body with the old paints, for the CPU, where the paints cannot be retrained; the
fair model trains its own (`worldcast train ... --grow-head`, tools/gpu_new_ground.sh).
Only the standard library: safetensors is an 8-byte header length, a JSON header, then bytes.
"""
import json
import shutil
import struct
import sys
from pathlib import Path

SHARD = "model-00001-of-00001.safetensors"
HEAD = ("head.proj.weight", "head.proj.bias")


def read_shard(path: Path):
    data = path.read_bytes()
    if len(data) < 8:
        sys.exit(f"{path}: truncated (no header length)")
    length = struct.unpack("<Q", data[:8])[0]
    if 8 + length > len(data):
        sys.exit(f"{path}: truncated header")
    header = json.loads(data[8 : 8 + length])
    return header, data[:8 + length], data[8 + length :]


def tensor_bytes(header, payload, name, path):
    if name not in header:
        sys.exit(f"{path}: tensor '{name}' missing")
    start, end = header[name]["data_offsets"]
    return payload[start:end]


def main() -> None:
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    body_dir, painted_dir, out_dir = (Path(a) for a in sys.argv[1:])
    body_path, painted_path = body_dir / SHARD, painted_dir / SHARD
    body, _, body_payload = read_shard(body_path)
    painted, painted_prefix, painted_payload = read_shard(painted_path)
    out = bytearray(painted_payload)
    for name, meta in painted.items():
        if name == "__metadata__":
            continue
        if name not in body:
            sys.exit(f"{body_path}: tensor '{name}' missing")
        if body[name]["dtype"] != meta["dtype"]:
            sys.exit(f"{body_path}: tensor '{name}': dtype {body[name]['dtype']}, "
                     f"the painted model's is {meta['dtype']}")
        own = tensor_bytes(body, body_payload, name, body_path)
        if name in HEAD:
            kept, rows = body[name]["shape"][0], meta["shape"][0]
            if body[name]["shape"][1:] != meta["shape"][1:] or kept >= rows:
                sys.exit(f"{body_path}: tensor '{name}': shape {body[name]['shape']} is not the "
                         f"first rows of {meta['shape']}")
            theirs = tensor_bytes(painted, painted_payload, name, painted_path)
            own = own + theirs[len(own):]
        elif body[name]["shape"] != meta["shape"]:
            sys.exit(f"{body_path}: tensor '{name}': shape {body[name]['shape']}, "
                     f"the painted model's is {meta['shape']}")
        start, end = meta["data_offsets"]
        out[start:end] = own
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / SHARD).write_bytes(painted_prefix + bytes(out))
    for name in ("config.json", "model.safetensors.index.json"):
        shutil.copy(painted_dir / name, out_dir / name)
    print(f"{out_dir}: {body_dir}'s body and head, {painted_dir}'s paint rows and config")


if __name__ == "__main__":
    main()
