"""Writes the backend test data of the installed onnx package (its node tests and model tests)
into a directory: what `backend-test-tools generate-data` writes, plus the node tests, which
that command leaves out. numpy's global generator is seeded first, so the random inputs of the
cases that draw them (and so every expected output) are the same on every run. Test data
generation only: the product has no Python dependency."""

import sys
import types

import numpy as np
import onnx.backend.test.case.model as model_cases
import onnx.backend.test.case.node as node_cases
import onnx.backend.test.cmd_tools as tools


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: onnx_current_data.py OUTPUT_DIR")
    np.random.seed(0)
    cases = node_cases.collect_testcases() + model_cases.collect_testcases()
    tools.model_test = types.SimpleNamespace(collect_testcases=lambda: cases)
    tools.generate_data(types.SimpleNamespace(output=sys.argv[1]))


if __name__ == "__main__":
    main()
