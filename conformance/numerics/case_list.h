#pragma once
// Internal to the parity suite: how the per-family case files (cases_<family>.cpp) declare cases.

#include <limits>
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

// Every dtype, in DType order.
inline std::vector<DType> all_dtypes() {
  std::vector<DType> all(kDTypeCount);
  for (int code = 0; code < kDTypeCount; ++code)
    all[static_cast<size_t>(code)] = static_cast<DType>(code);
  return all;
}

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

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Shape grids shared by the elementwise families.
void unary_cases(CaseList& cases, OpKind op);
void binary_cases(CaseList& cases, OpKind op);

// Fixed inputs shared by the elementwise families: a tensor of the given values (shape: 1-D
// when not given), the 24 values of kSpecialShape that exercise edges (NaN, infinities, signed
// zeros, halves, tiny and huge), and `count` values evenly spaced in [lo, hi].
Tensor tensor_of(DType dtype, const std::vector<double>& v, std::optional<Shape> shape = {});
inline const Shape kSpecialShape{24};
Tensor special(DType dtype);
Tensor spaced(DType dtype, int64_t count, double lo, double hi);
// The special values through `op` in f32 and f64; float_unary adds the unary grid first.
void special_cases(CaseList& cases, OpKind op, const Attributes& attrs = {});
void float_unary(CaseList& cases, OpKind op);

// Integers in [lo, hi) of dtype `d`, seeded; indices: valid indices of an axis of n elements,
// negative ones included.
Tensor ints(DType d, const Shape& shape, int64_t lo, int64_t hi, uint64_t seed);
Tensor indices(DType d, const Shape& shape, int64_t n, uint64_t seed);

// One function per family file: cases_<family>.cpp.
void elementwise_cases(CaseList& cases);
void activation_cases(CaseList& cases);
void logical_cases(CaseList& cases);
void linalg_cases(CaseList& cases);
void normalization_cases(CaseList& cases);
void reduction_cases(CaseList& cases);
void movement_cases(CaseList& cases);
void convolution_cases(CaseList& cases);
void pooling_cases(CaseList& cases);
void indexing_cases(CaseList& cases);
void loss_cases(CaseList& cases);
void resampling_cases(CaseList& cases);

}  // namespace volta::conformance::cases
