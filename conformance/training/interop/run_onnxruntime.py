#!/usr/bin/env python3
"""Runs an ONNX model in ONNX Runtime (CPUExecutionProvider, one thread) and compares its
outputs with Volta's.

    run_onnxruntime.py MODEL.onnx --inputs IN.safetensors --expect OUT.safetensors [--atol 1e-5]

IN holds one tensor per model input and OUT one per output compared, named as in the model;
a Volta caller writes both with serialize_checkpoint (any safetensors file will do). Floating
outputs must agree within --atol (NaN where the expectation has NaN, the same infinities);
integer and bool outputs exactly. Prints each output's max abs diff.

Exit status: 0 every output within atol, 1 a difference or a model/input mismatch, 2 bad
arguments. Only the interop tests run it, from build/interop-venv (scripts/ci/interop_venv.sh).
"""

import argparse
import sys

import numpy as np
import onnxruntime as ort
from safetensors import SafetensorError
from safetensors.numpy import load_file


def session(model_path):
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(model_path, sess_options=options,
                                providers=["CPUExecutionProvider"])


def load(path):
    try:
        return load_file(path)
    except (SafetensorError, OSError) as e:
        raise SystemExit(f"run_onnxruntime: {path}: safetensors cannot read it: {e}") from e


def max_abs_diff(actual, expected):
    """(max abs diff over the finite elements, a problem or None)."""
    if actual.shape != expected.shape:
        return None, f"shape {list(actual.shape)}, expected {list(expected.shape)}"
    if actual.dtype != expected.dtype:
        return None, f"dtype {actual.dtype}, expected {expected.dtype}"
    if not np.issubdtype(expected.dtype, np.floating):
        differs = actual != expected
        diff = np.abs(actual.astype(np.int64) - expected.astype(np.int64))
        return (int(diff.max()) if diff.size else 0), (
            f"{int(differs.sum())} elements differ" if differs.any() else None)
    nan_differs = np.isnan(actual) != np.isnan(expected)
    if nan_differs.any():
        return None, f"NaN at {int(nan_differs.sum())} positions where the other has a number"
    inf = np.isinf(expected) | np.isinf(actual)
    if (actual[inf] != expected[inf]).any():
        return None, "infinities differ"
    finite = np.isfinite(expected) & np.isfinite(actual)
    diff = np.abs(actual[finite].astype(np.float64) - expected[finite].astype(np.float64))
    return (float(diff.max()) if diff.size else 0.0), None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("--inputs", required=True, metavar="IN.safetensors")
    parser.add_argument("--expect", required=True, metavar="OUT.safetensors")
    parser.add_argument("--atol", type=float, default=1e-5)
    args = parser.parse_args()

    inputs, expected = load(args.inputs), load(args.expect)
    try:
        runner = session(args.model)
    except Exception as e:  # noqa: BLE001 (ONNX Runtime's errors derive from Exception only)
        print(f"run_onnxruntime: ONNX Runtime cannot load {args.model}: {e}", file=sys.stderr)
        return 1
    input_names = sorted(i.name for i in runner.get_inputs())
    output_names = [o.name for o in runner.get_outputs()]
    if sorted(inputs) != input_names:
        print(f"run_onnxruntime: the model's inputs are {input_names}, {args.inputs} has "
              f"{sorted(inputs)}", file=sys.stderr)
        return 1
    unknown = sorted(set(expected) - set(output_names))
    if unknown or not expected:
        print(f"run_onnxruntime: {args.expect} names {sorted(expected)}; the model's outputs "
              f"are {output_names}", file=sys.stderr)
        return 1
    names = sorted(expected)
    try:
        outputs = dict(zip(names, runner.run(names, inputs)))
    except Exception as e:  # noqa: BLE001
        print(f"run_onnxruntime: ONNX Runtime could not run {args.model}: {e}", file=sys.stderr)
        return 1
    failed = False
    for name in names:
        diff, problem = max_abs_diff(outputs[name], expected[name])
        if problem is None and diff > args.atol:
            problem = f"max abs diff {diff:.3g} over atol {args.atol:g}"
        if problem is not None:
            failed = True
            print(f"run_onnxruntime: MISMATCH {name}: {problem}", file=sys.stderr)
        else:
            print(f"run_onnxruntime: {name} max abs diff {diff:.3g} (atol {args.atol:g}, "
                  f"onnxruntime {ort.__version__})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
