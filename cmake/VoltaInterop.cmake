# The interop tests: Volta against the Python ecosystem's readers and runtimes (the `safetensors`
# package, ONNX Runtime), through conformance/training/interop/*.py run in the venv that
# scripts/ci/bootstrap.sh creates (scripts/ci/interop_venv.sh, pinned by
# scripts/ci/interop-requirements.txt). Only tests use Python; the product has no Python
# dependency. Where the venv is missing, each such test prints a SKIPPED line with the reason
# and CTest reports it SKIPPED, not passed.
set(VOLTA_INTEROP_VENV "${PROJECT_SOURCE_DIR}/build/interop-venv" CACHE PATH
  "The interop tests' Python venv (scripts/ci/interop_venv.sh creates it; give the script the same path in VOLTA_INTEROP_VENV)")

# volta_interop_test(NAME): makes the volta_add_test target NAME an interop test: it includes
# interop_python.h, finds the scripts and the venv, and is SKIPPED without the venv.
function(volta_interop_test name)
  set(scripts "${PROJECT_SOURCE_DIR}/conformance/training/interop")
  target_include_directories(${name} PRIVATE ${scripts})
  target_compile_definitions(${name} PRIVATE VOLTA_INTEROP_SCRIPTS="${scripts}"
    VOLTA_INTEROP_VENV="${VOLTA_INTEROP_VENV}")
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "VOLTA_INTEROP_VENV=${VOLTA_INTEROP_VENV}"
    SKIP_REGULAR_EXPRESSION "SKIPPED: no interop venv")
endfunction()
