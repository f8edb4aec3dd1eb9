#pragma once
// Internal to the parity suite: how the per-family case files (cases_*.cpp) declare cases.

#include <optional>
#include <vector>

#include "volta/conformance/parity_cases.h"

namespace volta::conformance::cases {

using Types = std::vector<std::optional<TypeInfo>>;
using K = OpKind;

// Element counts around the CPU kernels' fixed chunk sizes (elementwise 16384,
// reduction leaves 4096), so chunk edges are covered.
inline constexpr int64_t kChunk = 16384;
inline constexpr int64_t kLeaf = 4096;

inline TypeInfo f32(Shape s) { return {DType::F32, std::move(s)}; }
inline TypeInfo of(DType d, Shape s) { return {d, std::move(s)}; }

class CaseList {
 public:
  explicit CaseList(std::vector<ParityCase>& out) : out_(out) {}

  // One case; inputs not given in `fixed` are drawn from the operand domains, seeded by the
  // case id. Absent optional inputs are nullopt in `types`.
  void add(OpKind op, Types types, Attributes attrs = {}, int num_outputs = 1,
           std::vector<std::optional<Tensor>> fixed = {});

 private:
  std::vector<ParityCase>& out_;
};

// Shape grids shared by the elementwise families.
void unary_cases(CaseList& cases, OpKind op);
void binary_cases(CaseList& cases, OpKind op);

// One function per case file.
void math_cases(CaseList& cases);           // cases_elementwise.cpp
void spatial_cases(CaseList& cases);        // cases_convolution.cpp
void normalization_cases(CaseList& cases);  // cases_normalization.cpp
void indexing_cases(CaseList& cases);       // cases_indexing.cpp
void resize_cases(CaseList& cases);         // cases_resampling.cpp

}  // namespace volta::conformance::cases
