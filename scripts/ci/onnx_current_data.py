"""Writes the onnx-current corpus into a directory: the backend test data of the installed onnx
package (its node tests and model tests: what `backend-test-tools generate-data` writes, plus
the node tests, which that command leaves out), and the PyTorch exports of ONNX 1.12's data
(Debian's libonnx-testdata: pytorch-converted, pytorch-operator) converted by this onnx's
version converter to opset 18, the opset torch.onnx.export writes by default, with their data
sets unchanged. numpy's global generator is seeded first, so the random inputs of the cases
that draw them (and so every expected output) are the same on every run. Test data generation
only: the product has no Python dependency."""

import os
import shutil
import sys
import types

import numpy as np
import onnx
import onnx.backend.test.case.model as model_cases
import onnx.backend.test.case.node as node_cases
import onnx.backend.test.cmd_tools as tools
from onnx import version_converter

EXPORT_OPSET = 18
PYTORCH_ROOT = "/usr/share/libonnx-testdata/data"
PYTORCH_FOLDERS = ("pytorch-converted", "pytorch-operator")


def convert_pytorch_exports(output: str) -> None:
    for folder in PYTORCH_FOLDERS:
        converted = skipped = 0
        for test in sorted(os.listdir(os.path.join(PYTORCH_ROOT, folder))):
            source = os.path.join(PYTORCH_ROOT, folder, test)
            model = onnx.load(os.path.join(source, "model.onnx"))
            try:
                model = version_converter.convert_version(model, EXPORT_OPSET)
                onnx.checker.check_model(model)
            except Exception:  # noqa: BLE001  (the converter has no adapter, or the old IR breaks it)
                skipped += 1
                continue
            target = os.path.join(output, folder, test)
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("model.onnx"))
            onnx.save(model, os.path.join(target, "model.onnx"))
            converted += 1
        print(f"{folder}: {converted} converted to opset {EXPORT_OPSET}, {skipped} the converter refused")


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: onnx_current_data.py OUTPUT_DIR")
    np.random.seed(0)
    cases = node_cases.collect_testcases() + model_cases.collect_testcases()
    tools.model_test = types.SimpleNamespace(collect_testcases=lambda: cases)
    tools.generate_data(types.SimpleNamespace(output=sys.argv[1]))
    convert_pytorch_exports(sys.argv[1])


if __name__ == "__main__":
    main()
