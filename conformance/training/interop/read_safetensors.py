#!/usr/bin/env python3
"""Reads a Volta checkpoint (governance/checkpoint-format.md) with the `safetensors` package, as
another program would, and checks what it read.

    read_safetensors.py CKPT --expect-json FILE   compare with an expectation
    read_safetensors.py CKPT --dump FILE          write what was read as JSON ('-': stdout)

Both ways the file must be a Volta checkpoint to safetensors: `format` and `format_version`
(major 1) in its metadata, and every tensor's bytes hashing to its `sha256/<name>` entry.

The JSON, written and expected: {"metadata": {key: value}, "tensors": {name: {"dtype": "F32",
"sha256": hex digest of the raw little-endian row-major bytes, "shape": [...]}}}, with sorted
keys, no whitespace and ASCII escapes (json.dumps(sort_keys=True, separators=(",", ":"))), so a
C++ caller can write the same text or compare against its own digests.

Exit status: 0 read (and matched), 1 a mismatch or not a Volta checkpoint, 2 bad arguments.
Only the interop tests run it, from build/interop-venv (scripts/ci/interop_venv.sh).
"""

import argparse
import hashlib
import json
import re
import sys

import numpy as np
from safetensors import SafetensorError, safe_open
from safetensors.numpy import load_file

FORMAT_NAME = "volta-checkpoint"
DIGEST_PREFIX = "sha256/"
SAFETENSORS_DTYPES = {
    np.dtype("float32"): "F32",
    np.dtype("float64"): "F64",
    np.dtype("int64"): "I64",
    np.dtype("int32"): "I32",
    np.dtype("bool"): "BOOL",
}


def raw_bytes(array):
    """The array's bytes as the file stores them: little-endian, row-major."""
    return np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<")).tobytes()


def read(path):
    """(metadata, {name: {"dtype", "shape", "sha256"}}) through both reading APIs."""
    arrays = load_file(path)
    with safe_open(path, framework="np") as f:
        metadata = f.metadata() or {}
        keys = sorted(f.keys())
    if keys != sorted(arrays):
        raise SystemExit(f"read_safetensors: safe_open lists {keys}, load_file {sorted(arrays)}")
    tensors = {}
    for name, array in arrays.items():
        dtype = SAFETENSORS_DTYPES.get(array.dtype)
        if dtype is None:
            raise SystemExit(f"read_safetensors: {name}: dtype {array.dtype} is not one of "
                             f"Volta's ({', '.join(SAFETENSORS_DTYPES.values())})")
        tensors[name] = {"dtype": dtype, "shape": list(array.shape),
                         "sha256": hashlib.sha256(raw_bytes(array)).hexdigest()}
    return metadata, tensors


def format_problems(metadata, tensors):
    """What keeps the file from being a Volta checkpoint v1, as read by safetensors."""
    problems = []
    if metadata.get("format") != FORMAT_NAME:
        problems.append(f"metadata format is {metadata.get('format')!r}, not {FORMAT_NAME!r}")
    version = metadata.get("format_version", "")
    if not re.fullmatch(r"[1-9][0-9]*\.[0-9]+", version) or version.split(".")[0] != "1":
        problems.append(f"metadata format_version is {version!r}, not 1.MINOR")
    for name, tensor in sorted(tensors.items()):
        recorded = metadata.get(DIGEST_PREFIX + name)
        if recorded != tensor["sha256"]:
            problems.append(f"tensor {name!r}: its bytes hash to {tensor['sha256']}, metadata "
                            f"{DIGEST_PREFIX}{name} says {recorded!r}")
    for key in sorted(metadata):
        if key.startswith(DIGEST_PREFIX) and key[len(DIGEST_PREFIX):] not in tensors:
            problems.append(f"metadata {key} names no tensor")
    return problems


def differences(actual, expected):
    """Every difference between what was read and what was expected, one line each."""
    lines = []
    for section in ("metadata", "tensors"):
        got, want = actual[section], expected.get(section, {})
        for key in sorted(set(got) | set(want)):
            if key not in want:
                lines.append(f"{section} {key!r}: read but not expected")
            elif key not in got:
                lines.append(f"{section} {key!r}: expected but not read")
            elif got[key] != want[key]:
                lines.append(f"{section} {key!r}: read {json.dumps(got[key], sort_keys=True)}, "
                             f"expected {json.dumps(want[key], sort_keys=True)}")
    return lines


def canonical_json(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":")) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoint")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--expect-json", metavar="FILE")
    mode.add_argument("--dump", metavar="FILE")
    args = parser.parse_args()

    try:
        metadata, tensors = read(args.checkpoint)
    except (SafetensorError, OSError) as e:
        print(f"read_safetensors: {args.checkpoint}: safetensors cannot read it: {e}",
              file=sys.stderr)
        return 1
    problems = format_problems(metadata, tensors)
    for problem in problems:
        print(f"read_safetensors: {args.checkpoint}: not a Volta checkpoint: {problem}",
              file=sys.stderr)
    if problems:
        return 1
    actual = {"metadata": metadata, "tensors": tensors}
    if args.dump is not None:
        if args.dump == "-":
            sys.stdout.write(canonical_json(actual))
        else:
            with open(args.dump, "w", encoding="ascii") as out:
                out.write(canonical_json(actual))
        return 0
    with open(args.expect_json, encoding="utf-8") as f:
        expected = json.load(f)
    mismatches = differences(actual, expected)
    for line in mismatches:
        print(f"read_safetensors: MISMATCH {line}", file=sys.stderr)
    if mismatches:
        return 1
    print(f"read_safetensors: {len(tensors)} tensors and {len(metadata)} metadata entries match")
    return 0


if __name__ == "__main__":
    sys.exit(main())
