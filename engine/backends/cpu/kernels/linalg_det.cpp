// Det on the CPU: LU factorization with partial pivoting, in the input type.
//
// Each matrix is copied into scratch and eliminated column by column. Column k's pivot is
// the first row i >= k of largest |a[i][k]|; a row swap flips the sign. Rows below take
//   a[i][j] -= (a[i][k] / a[k][k]) * a[k][j]   for i > k in order, then j > k in order.
// A zero pivot (the column is zero from row k down) has nothing to eliminate: the step is
// skipped and the determinant is 0 through the product. The determinant is then
// sign * u[0][0] * u[1][1] * ... in index order. A matrix holding NaN has determinant NaN
// (checked first: a zero pivot would skip the column the NaN is in); infinities go through the
// arithmetic. Matrices are independent; tasks take fixed runs
// of them, so the bits do not depend on the thread count. M = 0 gives 1, the empty product.

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "dtype_kernels.h"

namespace volta::cpu {
namespace {

// The determinant of the m x m row-major matrix in `a`, which it overwrites.
template <class T>
T lu_determinant(T* a, int64_t m) {
  if (std::any_of(a, a + m * m, [](T v) { return std::isnan(v); })) {
    return std::numeric_limits<T>::quiet_NaN();
  }
  bool negative = false;
  for (int64_t k = 0; k < m; ++k) {
    int64_t pivot = k;
    T best = std::abs(a[k * m + k]);
    for (int64_t i = k + 1; i < m; ++i) {
      const T v = std::abs(a[i * m + k]);
      if (v > best) {
        best = v;
        pivot = i;
      }
    }
    if (pivot != k) {
      std::swap_ranges(a + k * m, a + (k + 1) * m, a + pivot * m);
      negative = !negative;
    }
    const T diagonal = a[k * m + k];
    if (diagonal == T{0}) continue;
    const T* pivot_row = a + k * m;
    for (int64_t i = k + 1; i < m; ++i) {
      T* row = a + i * m;
      const T factor = row[k] / diagonal;
      for (int64_t j = k + 1; j < m; ++j) row[j] -= factor * pivot_row[j];
    }
  }
  T det{1};
  for (int64_t k = 0; k < m; ++k) det *= a[k * m + k];
  return negative ? -det : det;
}

template <class T>
struct DetKernel {
  static void run(const KernelArgs& args) {
    const ConstTensorView& in = args.inputs[0];
    const int64_t m = in.shape[in.shape.rank() - 1];
    const int64_t matrices = args.outputs[0].numel();
    const T* x = in.as<T>();
    T* y = args.outputs[0].as<T>();
    const int64_t work = std::max<int64_t>(1, m * m * m);
    args.pool.parallel_chunks(matrices, std::max<int64_t>(1, kElementwiseChunk / work),
                              [&](int64_t begin, int64_t end) {
                                T* const lu = worker_part<T>(args.pool, 0, m * m, args.node);
                                for (int64_t b = begin; b < end; ++b) {
                                  std::copy_n(x + b * m * m, m * m, lu);
                                  y[b] = lu_determinant(lu, m);
                                }
                              });
  }
};

const DTypeKernels& det_kernels() {
  static const DTypeKernels kKernels = kernels_for<DetKernel>(FloatTypes{}, "det_lu_partial_pivot");
  return kKernels;
}

// Each task factors one matrix at a time in its worker's scratch.
KernelSelection select_det_kernel(const KernelQuery& query) {
  const TypeInfo& x = *query.inputs[0];
  const int64_t m = x.shape.rank() > 0 ? x.shape[x.shape.rank() - 1] : 0;
  return with_scratch(select_by_dtype(det_kernels(), query.node, x.dtype), 0,
                      m * m * static_cast<int64_t>(dtype_size(x.dtype)));
}

}  // namespace

void register_linalg_det_kernels(KernelTable& table) {
  table[static_cast<size_t>(op_index(OpKind::Det))] = {&select_det_kernel, kFloatTypes,
                                                       KernelDeterminism::BitExact};
}

}  // namespace volta::cpu
