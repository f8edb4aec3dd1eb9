#pragma once
// The per-element order the CUDA GEMM claims (GemmLaunch in kernels/launch.h), written plainly
// on the host for MatMul, Gemm and FusedMatMul: K cut into `slice`-deep slices from 0; in each a
// running std::fma sum from +0 over k in order; the first slice stores alpha * sum, then
// fma(beta, C, that) when there is a C; each later slice fma(1, Y, alpha * sum). The device
// test holds the kernels to it on any host; cuda_backend_test holds the CPU backend's FMA
// micro-kernels to it (slice 512 for f32 AVX-512, 256 for AVX2 and for f64).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "volta/ir/shape.h"
#include "volta/ir/tensor.h"

namespace volta::test {

template <class T>
struct ReferenceGemm {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  const T* a = nullptr;  // element (i, p) of op(A): a[i * a_row_stride + p * a_col_stride]
  int64_t a_row_stride = 0;
  int64_t a_col_stride = 0;
  const T* b = nullptr;  // element (p, j) of op(B): b[p * b_row_stride + j * b_col_stride]
  int64_t b_row_stride = 0;
  int64_t b_col_stride = 0;
  const T* c = nullptr;
  int64_t c_row_stride = 0;
  int64_t c_col_stride = 0;
  T alpha = 1;
  T beta = 0;
};

template <class T>
T reference_element(const ReferenceGemm<T>& p, int64_t i, int64_t j, int64_t slice) {
  T y = 0;
  int64_t k0 = 0;
  do {
    const int64_t end = std::min(p.k, k0 + slice);
    T sum = 0;
    for (int64_t q = k0; q < end; ++q) {
      sum = std::fma(p.a[i * p.a_row_stride + q * p.a_col_stride],
                     p.b[q * p.b_row_stride + j * p.b_col_stride], sum);
    }
    T r = p.alpha * sum;
    if (k0 > 0) {
      r = std::fma(T(1), y, r);
    } else if (p.c != nullptr) {
      r = std::fma(p.beta, p.c[i * p.c_row_stride + j * p.c_col_stride], r);
    }
    y = r;
    k0 = end;
  } while (k0 < p.k);
  return y;
}

// Y (row-major m x n) of one problem.
template <class T>
void reference_gemm(const ReferenceGemm<T>& p, int64_t slice, T* y) {
  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t j = 0; j < p.n; ++j) y[i * p.n + j] = reference_element(p, i, j, slice);
  }
}

// numpy matmul of a and b (1-D operands promoted, batch dims broadcast).
template <class T>
Tensor reference_matmul(const Tensor& a, const Tensor& b, int64_t slice) {
  const Shape& sa = a.shape();
  const Shape& sb = b.shape();
  const int64_t k = sa[sa.rank() - 1];
  const int64_t m = sa.rank() >= 2 ? sa[sa.rank() - 2] : 1;
  const int64_t n = sb.rank() >= 2 ? sb[sb.rank() - 1] : 1;
  const auto batch_of = [](const Shape& s) {
    return Shape(std::vector<int64_t>(s.dims().begin(), s.dims().end() - std::min(s.rank(), 2)));
  };
  const Shape batch_a = batch_of(sa);
  const Shape batch_b = batch_of(sb);
  const Shape batch_y = *broadcast_shapes(batch_a, batch_b);
  std::vector<int64_t> y_dims = batch_y.dims();
  if (sa.rank() >= 2) y_dims.push_back(m);
  if (sb.rank() >= 2) y_dims.push_back(n);
  Tensor y(a.dtype(), Shape(y_dims));
  const std::vector<int64_t> a_strides = broadcast_strides(batch_a, batch_y);
  const std::vector<int64_t> b_strides = broadcast_strides(batch_b, batch_y);
  for (int64_t batch = 0; batch < batch_y.numel(); ++batch) {
    int64_t rest = batch, a_matrix = 0, b_matrix = 0;
    for (int axis = batch_y.rank() - 1; axis >= 0; --axis) {
      const int64_t index = rest % batch_y[axis];
      rest /= batch_y[axis];
      a_matrix += index * a_strides[static_cast<size_t>(axis)];
      b_matrix += index * b_strides[static_cast<size_t>(axis)];
    }
    const ReferenceGemm<T> p{.m = m,
                             .n = n,
                             .k = k,
                             .a = a.data_as<T>() + a_matrix * m * k,
                             .a_row_stride = k,
                             .a_col_stride = 1,
                             .b = b.data_as<T>() + b_matrix * k * n,
                             .b_row_stride = n,
                             .b_col_stride = 1};
    reference_gemm(p, slice, y.data_as<T>() + batch * m * n);
  }
  return y;
}

// ONNX Gemm: A [M,K] ([K,M] with trans_a), B [K,N] ([N,K] with trans_b), C broadcast to [M,N].
template <class T>
Tensor reference_gemm_op(const Tensor& a, const Tensor& b, const std::optional<Tensor>& c,
                         double alpha, double beta, bool trans_a, bool trans_b, int64_t slice) {
  const int64_t m = trans_a ? a.shape()[1] : a.shape()[0];
  const int64_t k = trans_a ? a.shape()[0] : a.shape()[1];
  const int64_t n = trans_b ? b.shape()[0] : b.shape()[1];
  Tensor y(a.dtype(), Shape{m, n});
  ReferenceGemm<T> p{.m = m,
                     .n = n,
                     .k = k,
                     .a = a.data_as<T>(),
                     .a_row_stride = trans_a ? 1 : k,
                     .a_col_stride = trans_a ? m : 1,
                     .b = b.data_as<T>(),
                     .b_row_stride = trans_b ? 1 : n,
                     .b_col_stride = trans_b ? k : 1,
                     .alpha = static_cast<T>(alpha),
                     .beta = static_cast<T>(beta)};
  if (c) {
    const std::vector<int64_t> strides = broadcast_strides(c->shape(), y.shape());
    p.c = c->data_as<T>();
    p.c_row_stride = strides[0];
    p.c_col_stride = strides[1];
  }
  reference_gemm(p, slice, y.data_as<T>());
  return y;
}

// FusedMatMul: MatMul(a, b) with b [K,N], then + bias (bias first or second), then Relu.
template <class T>
Tensor reference_fused_matmul(const Tensor& a, const Tensor& b, const Tensor& bias, bool bias_first,
                              bool relu, int64_t slice) {
  Tensor y = reference_matmul<T>(a, b, slice);
  const int64_t n = b.shape()[1];
  T* v = y.data_as<T>();
  for (int64_t i = 0; i < y.numel(); ++i) {
    const T bv = bias.data_as<T>()[i % n];
    T r = bias_first ? bv + v[i] : v[i] + bv;
    if (relu) r = r < T(0) ? T(0) : r;
    v[i] = r;
  }
  return y;
}

}  // namespace volta::test
