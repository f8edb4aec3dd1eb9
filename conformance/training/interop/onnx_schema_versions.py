"""Prints what the pinned onnx package knows of ONNX's versions, for onnx_versions_interop_test:
`IR <ir version>`, `OPSET <newest default-domain opset>`, then one line `<op> <version> <New|Changed>`
per default-domain schema version above opset 17 (New: the op has no older schema)."""

import onnx
import onnx.defs

LIBRARY_OPSET = 17


def main() -> None:
    print("IR", onnx.IR_VERSION)
    print("OPSET", onnx.defs.onnx_opset_version())
    versions: dict[str, list[int]] = {}
    for schema in onnx.defs.get_all_schemas_with_history():
        if schema.domain in ("", "ai.onnx"):
            versions.setdefault(schema.name, []).append(schema.since_version)
    for op in sorted(versions):
        history = sorted(versions[op])
        for version in history:
            if version > LIBRARY_OPSET:
                older = [v for v in history if v < version]
                print(op, version, "Changed" if older else "New")


if __name__ == "__main__":
    main()
