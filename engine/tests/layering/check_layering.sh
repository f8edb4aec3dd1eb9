#!/usr/bin/env bash
# The engine's layers include each other one way only (../shared/DESIGN.md, "Layout"): the backend
# contract (runtime/backend.h, runtime/determinism.h) depends on the IR alone; plan/ builds on
# it and never on the runtime gateway; autograd/ sees the IR alone; the core (ir, passes, plan,
# runtime, autograd, train) names no backend.
# Usage: check_layering.sh ENGINE_DIR   (prints every violation; exit 1 if any)
set -euo pipefail
engine="$1"
status=0
violation() { echo "layering: $1" >&2; status=1; }

for f in "$engine/include/volta/runtime/backend.h" "$engine/include/volta/runtime/determinism.h"; do
  if grep -nE '#include "volta/(plan|passes|backends)/|#include "volta/runtime/(runtime|registry)\.h"' "$f"; then
    violation "$f (the backend contract) includes a layer above it"
  fi
done
for f in "$engine"/include/volta/plan/*.h "$engine"/plan/*.cpp; do
  if grep -nE '#include "volta/runtime/(runtime|registry)\.h"|#include "volta/backends/' "$f"; then
    violation "$f (plan/) includes the runtime gateway or a backend"
  fi
done
# Autograd rewrites graphs: it sees the IR and nothing that plans or runs them.
for f in "$engine"/include/volta/autograd/*.h "$engine"/autograd/*.cpp "$engine"/autograd/*.h; do
  if grep -nE '#include "volta/(plan|passes|runtime|backends|train)/' "$f"; then
    violation "$f (autograd/) includes a layer above the IR"
  fi
done
for f in "$engine"/include/volta/{ir,passes,plan,runtime,autograd,train}/*.h \
    "$engine"/{ir,passes,plan,runtime,autograd,train}/*.cpp; do
  if grep -nE '#include "volta/backends/' "$f"; then
    violation "$f (the core) includes a backend: backends register by name (runtime/registry.h)"
  fi
done
exit $status
