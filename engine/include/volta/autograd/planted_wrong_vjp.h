#pragma once
// A test-only defect for the gradient suite's negative control: while a PlantedWrongVjp lives
// on a thread, build_training_graph on that thread negates every input gradient that the VJP
// rule of `op` gives. Nothing plants it in normal runs; the suite plants it for
// its control case and under `volta-audit run gradients --plant-wrong-vjp OP`, which records
// the run as a demonstration, never evidence. The engine and the reference engine run the same
// (wrong) training graph, so only the finite-difference check can catch it: that is the point.

#include <optional>

#include "volta/ir/op_schema.h"

namespace volta::autograd {

struct WrongVjp {
  OpKind op;  // whose rule is sign-flipped
};

class PlantedWrongVjp {
 public:
  explicit PlantedWrongVjp(OpKind op);
  ~PlantedWrongVjp();
  PlantedWrongVjp(const PlantedWrongVjp&) = delete;
  PlantedWrongVjp& operator=(const PlantedWrongVjp&) = delete;

 private:
  std::optional<WrongVjp> previous_;
};

// The defect planted on this thread, if any.
std::optional<WrongVjp> planted_wrong_vjp();

}  // namespace volta::autograd
