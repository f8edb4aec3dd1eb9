#pragma once
// The single-op cases of autograd_test: for each VJP rule, operands (shapes, value domains,
// which are trainable) and attributes covering its attribute space and edge cases.

#include <cstdint>
#include <string>
#include <vector>

#include "volta/ir/graph.h"

namespace volta::autograd_cases {

using Ints = std::vector<int64_t>;

// Float operands: the values' range (SomeZeros: Any with every third element 0). I64 operands:
// indices in [-range, range) (Any) or labels in [0, range) (NonNegative).
enum class Domain { Any, Positive, AwayFromZero, Inside, AboveOne, NonNegative, SomeZeros };

struct Operand {
  Shape shape;
  Domain domain = Domain::Any;
  bool trainable = true;
  DType dtype = DType::F64;  // F64 / F32 follow the case's float type; Bool and I64 stay
  int64_t index_range = 0;   // I64: see Domain; repeats included
};

struct Case {
  std::string name;
  OpKind op;
  std::vector<Operand> operands;
  Attributes attrs = {};
  int outputs = 1;
  // The loss reads the last float output (so the others' gradients are absent), or with
  // every_output all of them.
  bool every_output = false;
};

// An operand's value: random in its domain (float types), a pattern with repeats (bool, I64).
Tensor operand_value(const Operand& o, DType float_type, uint64_t seed);

// Every rule's cases.
std::vector<Case> rule_cases();

}  // namespace volta::autograd_cases
