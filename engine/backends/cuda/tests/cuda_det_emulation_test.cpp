// Det's device code (kernels/linalg_det_kernel.cuh) run on the host against the CPU backend,
// bit for bit, NaN payloads included (x86 arithmetic passes them on as the CPU kernel's does; a
// device returns the canonical NaN for inf - inf, which its claim allows): random matrices of
// sizes 0 to 9, singular ones, ties for the pivot, infinities and NaN.

#define BOOST_TEST_MODULE cuda_det_emulation_test
#include <cuda_runtime_api.h>

#include <boost/test/unit_test.hpp>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

// NOLINTBEGIN(bugprone-reserved-identifier): the CUDA names the kernel is written with, which
// cuda_runtime_api.h defines as device attributes a host compiler does not know.
#undef __device__
#undef __forceinline__
#define __device__
#define __forceinline__ inline
// NOLINTEND(bugprone-reserved-identifier)

#include "kernels/linalg_det_kernel.cuh"
#include "volta/ir/random.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"

namespace volta {
namespace {

const Backend& cpu() {
  static const std::unique_ptr<Backend> backend = make_backend("cpu");
  return *backend;
}

// Matrices of the batch: uniform in [-2, 2), with matrix 1 singular (row 0 repeated), matrix 2
// of small integers (pivot ties), matrix 3 holding infinities and matrix 4 a NaN.
Tensor matrices(DType dtype, const Shape& shape, uint64_t seed) {
  Tensor t = random_tensor(dtype, shape, seed, -2.0, 2.0);
  const int64_t m = shape[shape.rank() - 1];
  const int64_t count = m == 0 ? 0 : t.numel() / (m * m);
  for (int64_t j = 0; count > 1 && m > 1 && j < m; ++j) {
    t.set_double(m * m + m + j, t.get_double(m * m + j));
  }
  for (int64_t i = 0; count > 2 && i < m * m; ++i) {
    t.set_double(2 * m * m + i, static_cast<double>((i * 7) % 5) - 2.0);
  }
  if (count > 3) {
    t.set_double(3 * m * m, std::numeric_limits<double>::infinity());
    t.set_double(3 * m * m + m * m - 1, -std::numeric_limits<double>::infinity());
  }
  if (count > 4) t.set_double(4 * m * m + m / 2, std::numeric_limits<double>::quiet_NaN());
  return t;
}

template <class T>
Tensor emulate(const Tensor& x, int64_t m, const Shape& out) {
  Tensor y(x.dtype(), out);
  std::vector<T> scratch(static_cast<size_t>(m * m));
  for (int64_t b = 0; b < y.numel(); ++b) {
    std::memcpy(scratch.data(), static_cast<const T*>(x.data()) + b * m * m,
                scratch.size() * sizeof(T));
    static_cast<T*>(y.data())[b] = cuda::det_detail::lu_determinant(scratch.data(), m);
  }
  return y;
}

BOOST_AUTO_TEST_CASE(det_is_the_cpus) {
  uint64_t seed = 900;
  for (DType dtype : {DType::F32, DType::F64}) {
    for (const Shape& shape : {Shape{0, 0}, Shape{1, 1}, Shape{6, 2, 2}, Shape{7, 3, 3},
                               Shape{2, 3, 5, 5}, Shape{8, 9, 9}, Shape{0, 4, 4}}) {
      Graph g;
      g.set_outputs({g.add(OpKind::Det, {g.add_input("x", dtype, shape)}, {}, "det")});
      const Tensor x = matrices(dtype, shape, ++seed);
      const ExecutionPlan plan = compile(g, cpu(), DeterminismMode::Strict, {.optimize = false});
      const std::unique_ptr<ExecutionContext> ctx = cpu().make_context({.threads = 2});
      const std::vector<Tensor> inputs = {x};
      const Tensor want = execute(plan, cpu(), *ctx, inputs).at(0);
      const int64_t m = shape[shape.rank() - 1];
      const Tensor got = dtype == DType::F32 ? emulate<float>(x, m, want.shape())
                                             : emulate<double>(x, m, want.shape());
      BOOST_TEST(std::memcmp(got.data(), want.data(), want.nbytes()) == 0,
                 dtype_name(dtype) << " Det of " << shape.str());
    }
  }
}

}  // namespace
}  // namespace volta
