#!/usr/bin/env python3
"""Writes a safetensors file's tensors again with `safetensors.numpy.save_file`, as a Python
program saving those arrays would: the reverse direction of the checkpoint interop test.

    rewrite_safetensors.py IN OUT [--drop-metadata]

OUT holds IN's tensors (passed to save_file sorted by name) and IN's `__metadata__`, or no
metadata with --drop-metadata. The bytes are the package's, not Volta's canonical ones: it
orders an entry's keys dtype, shape, data_offsets and lays the buffer out by dtype alignment.

Exit status: 0 written, 1 IN unreadable, 2 bad arguments.
"""

import argparse
import sys

from safetensors import SafetensorError, safe_open
from safetensors.numpy import load_file, save_file


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--drop-metadata", action="store_true")
    args = parser.parse_args()
    try:
        arrays = load_file(args.input)
        with safe_open(args.input, framework="np") as f:
            metadata = f.metadata()
    except (SafetensorError, OSError) as e:
        print(f"rewrite_safetensors: {args.input}: safetensors cannot read it: {e}",
              file=sys.stderr)
        return 1
    save_file({name: arrays[name] for name in sorted(arrays)}, args.output,
              metadata=None if args.drop_metadata else metadata)
    print(f"rewrite_safetensors: {args.output}: {len(arrays)} tensors, "
          f"{0 if args.drop_metadata or metadata is None else len(metadata)} metadata entries")
    return 0


if __name__ == "__main__":
    sys.exit(main())
