// Conv and ConvTranspose on the CPU, both on the packed GEMM core (linalg_gemm.h); their filter
// gradient, ConvGradFilter, is in convolution_grad_filter.cpp.
//
// Conv: for a step of images, im2col copies each image's receptive fields into a column
// matrix [C * taps, out_size] (rows ordered (c, kd, kh, kw) like W's [M, C/group, k...]
// layout), then one GEMM call computes Y[n, group] = W[group] @ col[n, group] + B for every
// (image, group) of the step. A 1x1 kernel with unit strides and no pads reads X directly:
// its column matrix would be X itself, so the GEMM sees the same values and gives the same bits.
//
// ConvTranspose: per (image, group) one GEMM gives col = W[group]^T @ X[n, group], rows
// ordered (m, kd, kh, kw); col2im then adds each column row into its output plane. Every
// output plane is one task that starts from the bias and adds taps in kernel order, so each
// element's sum has a fixed order.
//
// Depthwise Conv (group == C > 1) skips the GEMM: its K would be the taps alone. Each output
// plane is computed directly, taps added in kernel order.
//
// Determinism: the GEMM's bits do not depend on how its tiles are scheduled (linalg_gemm.h), and
// im2col / col2im split work by plane or row, never by thread count. No K splitting.
//
// 1-D and 2-D problems run as 3-D ones with leading spatial dims of size 1.

#include <algorithm>
#include <array>
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "convolution_geometry.h"
#include "cpu_kernel.h"
#include "linalg_gemm.h"

namespace volta::cpu {
namespace {

using namespace conv;  // NOLINT(google-build-using-namespace): the family's own helpers

Geometry geometry(const KernelArgs& args) {
  return conv::geometry(args.attrs, args.inputs[0].shape, args.inputs[1].shape,
                        args.outputs[0].shape);
}

// A 1x1 Conv with unit strides and no pads reads X as its column matrix.
bool is_direct(const Geometry& g) {
  return g.taps() == 1 && g.stride == Dims3{1, 1, 1} && g.pad == Dims3{0, 0, 0};
}

// Where a Conv or ConvTranspose node keeps its scratch: one step's column matrix and its GEMM
// calls' shared op(B) panels in the planned workspace, the GEMM tasks' packing in the worker
// scratch. Selection and run derive it from the same geometry.
struct ConvScratch {
  int64_t step = 1;  // images per GEMM call
  int64_t col_offset = 0;
  int64_t col_elements = 0;
  int64_t shared_offset = 0;
  GemmScratch gemm;
  int64_t workspace_bytes = 0;
};

template <OpKind Op, class T>
ConvScratch conv_scratch(const GemmMicroKernel<T>& micro, const Geometry& g) {
  ConvScratch s;
  const int64_t in_size = product(g.in);
  const int64_t out_size = product(g.out);
  const int64_t group_in = g.channels_in / g.group;
  const int64_t group_out = g.channels_out / g.group;
  // Per (image, group) GEMM: Conv Y = W @ col, ConvTranspose col = W^T @ X.
  int64_t m = 0, n = 0, k = 0;
  if constexpr (Op == OpKind::Conv) {
    const int64_t rows = g.channels_in * g.taps();
    const bool direct = is_direct(g);
    s.step = direct ? g.batch : images_per_step(g.batch, rows * out_size);
    s.col_elements = direct ? 0 : s.step * rows * out_size;
    m = group_out, n = out_size, k = group_in * g.taps();
  } else {
    const int64_t rows = g.channels_out * g.taps();
    s.step = images_per_step(g.batch, rows * in_size);
    s.col_elements = s.step * rows * in_size;
    m = group_out * g.taps(), n = in_size, k = group_in;
  }
  // A full step of images per call, and the last call's remainder (its grid may differ).
  s.gemm = gemm_scratch(micro, m, n, k, std::min(s.step, g.batch) * g.group);
  if (s.step > 0 && g.batch % s.step != 0) {
    s.gemm = max_scratch(s.gemm, gemm_scratch(micro, m, n, k, (g.batch % s.step) * g.group));
  }
  WorkspaceLayout layout;
  s.col_offset = layout.add<T>(s.col_elements);
  s.shared_offset = layout.add<std::byte>(s.gemm.shared_bytes);
  s.workspace_bytes = layout.bytes();
  return s;
}

// A run's scratch, where conv_scratch put it: images per GEMM call, the column matrix and the
// GEMM calls' shared panels.
template <class T>
struct ConvBuffers {
  int64_t step = 1;
  T* col = nullptr;
  std::span<std::byte> shared;
};

template <OpKind Op, class T>
ConvBuffers<T> conv_buffers(const GemmMicroKernel<T>& micro, const Geometry& g,
                            const KernelArgs& args) {
  const ConvScratch s = conv_scratch<Op, T>(micro, g);
  return {s.step, workspace_part<T>(args.workspace, s.col_offset, s.col_elements, args.node),
          args.workspace.subspan(static_cast<size_t>(s.shared_offset))};
}

template <class T>
void run_conv(const GemmMicroKernel<T>& micro, const KernelArgs& args) {
  const TensorView& y_view = args.outputs[0];
  if (y_view.numel() == 0) return;
  const Geometry g = geometry(args);
  const T* x = args.inputs[0].as<T>();
  const T* w = args.inputs[1].as<T>();
  const T* bias = optional_input_data<T>(args, 2);
  T* y = y_view.as<T>();
  const int64_t in_size = product(g.in);
  const int64_t out_size = product(g.out);
  const int64_t group_in = g.channels_in / g.group;
  const int64_t group_out = g.channels_out / g.group;
  const int64_t depth = group_in * g.taps();  // GEMM K
  const bool direct = is_direct(g);

  const int64_t rows = g.channels_in * g.taps();  // column-matrix rows per image
  const ConvBuffers<T> buffers = conv_buffers<OpKind::Conv>(micro, g, args);
  const int64_t step = buffers.step;
  T* const col = buffers.col;
  std::vector<GemmProblem<T>> problems;
  for (int64_t first = 0; first < g.batch; first += step) {
    const int64_t images = std::min(step, g.batch - first);
    if (!direct) {
      args.pool.parallel_chunks(images * rows, rows_per_task(out_size), [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          const int64_t image = first + r / rows;
          const int64_t c = (r % rows) / g.taps();
          im2col_row(g, x + (image * g.channels_in + c) * in_size, r % g.taps(),
                     col + r * out_size);
        }
      });
    }
    problems.clear();
    for (int64_t i = 0; i < images; ++i) {
      const int64_t image = first + i;
      for (int64_t grp = 0; grp < g.group; ++grp) {
        const T* b = direct ? x + (image * g.channels_in + grp * group_in) * in_size
                            : col + (i * rows + grp * depth) * out_size;
        GemmProblem<T> p{.m = group_out,
                         .n = out_size,
                         .k = depth,
                         .a = w + grp * group_out * depth,
                         .a_row_stride = depth,
                         .a_col_stride = 1,
                         .b = b,
                         .b_row_stride = out_size,
                         .b_col_stride = 1,
                         .y = y + (image * g.channels_out + grp * group_out) * out_size,
                         .y_row_stride = out_size};
        if (bias != nullptr) {
          p.c = bias + grp * group_out;
          p.c_row_stride = 1;
          p.c_col_stride = 0;
          p.beta = T(1);
        }
        problems.push_back(p);
      }
    }
    gemm<T>(micro, problems, args.pool, buffers.shared);
  }
}

// Adds weight * 0 to the outputs of a plane whose tap falls into the padding: those outside
// the tap's valid ranges rd x rh x rw.
template <class T>
void add_padded_taps(T weight, const Dims3& out_dims, const Range& rd, const Range& rh,
                     const Range& rw, T* out) {
  const auto inside = [](const Range& r, int64_t i) { return i >= r.lo && i < r.hi; };
  for (int64_t od = 0; od < out_dims[0]; ++od) {
    for (int64_t oh = 0; oh < out_dims[1]; ++oh) {
      for (int64_t ow = 0; ow < out_dims[2]; ++ow) {
        if (inside(rd, od) && inside(rh, oh) && inside(rw, ow)) continue;
        out[(od * out_dims[1] + oh) * out_dims[2] + ow] += weight * T(0);
      }
    }
  }
}

// Depthwise Conv (one input channel per group): a GEMM would have only the taps as its K, so
// each output plane is computed directly, one task per plane: taps are added over whole rows
// in kernel order, then the bias. Zero padding is data, as on the im2col path: a padded tap
// adds 0 * weight, which changes nothing for a finite weight (the sum starts at +0, so it is
// never -0) and gives NaN for a NaN or infinite one, so only those weights visit the padding.
template <class T>
void run_depthwise(const KernelArgs& args) {
  const TensorView& y_view = args.outputs[0];
  if (y_view.numel() == 0) return;
  const Geometry g = geometry(args);
  const T* x = args.inputs[0].as<T>();
  const T* w = args.inputs[1].as<T>();
  const T* bias = optional_input_data<T>(args, 2);
  T* y = y_view.as<T>();
  const int64_t in_size = product(g.in);
  const int64_t out_size = product(g.out);
  const int64_t multiplier = g.channels_out / g.group;  // output channels per input channel
  const int64_t planes = g.batch * g.channels_out;
  args.pool.parallel_chunks(planes, rows_per_task(out_size * g.taps()), [&](int64_t b, int64_t e) {
    for (int64_t plane = b; plane < e; ++plane) {
      const int64_t m = plane % g.channels_out;
      const T* xc = x + ((plane / g.channels_out) * g.channels_in + m / multiplier) * in_size;
      T* out = y + plane * out_size;
      std::fill(out, out + out_size, T(0));
      for (int64_t tap = 0; tap < g.taps(); ++tap) {
        const T weight = w[m * g.taps() + tap];
        const auto [kd, kh, kw, w_offset, rd, rh, rw] = tap_reads(g, tap);
        if (!std::isfinite(weight)) add_padded_taps(weight, g.out, rd, rh, rw, out);
        for (int64_t od = rd.lo; od < rd.hi; ++od) {
          const int64_t id = od * g.stride[0] - g.pad[0] + kd * g.dilation[0];
          for (int64_t oh = rh.lo; oh < rh.hi; ++oh) {
            const int64_t ih = oh * g.stride[1] - g.pad[1] + kh * g.dilation[1];
            const T* src = xc + (id * g.in[1] + ih) * g.in[2];
            T* dst = out + (od * g.out[1] + oh) * g.out[2];
            if (g.stride[2] == 1) {
              for (int64_t ow = rw.lo; ow < rw.hi; ++ow) dst[ow] += weight * src[ow + w_offset];
            } else {
              for (int64_t ow = rw.lo; ow < rw.hi; ++ow) {
                dst[ow] += weight * src[ow * g.stride[2] + w_offset];
              }
            }
          }
        }
      }
      if (bias != nullptr) {
        for (int64_t o = 0; o < out_size; ++o) out[o] += bias[m];
      }
    }
  });
}

// Adds one column-matrix row (tap (kd, kh, kw) of output channel m) into its output plane.
template <class T>
void col2im_row(const Geometry& g, const T* row, int64_t tap, T* plane) {
  const int64_t kw = tap % g.kernel[2];
  const int64_t kh = (tap / g.kernel[2]) % g.kernel[1];
  const int64_t kd = tap / (g.kernel[2] * g.kernel[1]);
  const int64_t w_offset = kw * g.dilation[2] - g.pad[2];
  const Range rw = valid_range(g.in[2], g.stride[2], w_offset, g.out[2]);
  const Range rh = valid_range(g.in[1], g.stride[1], kh * g.dilation[1] - g.pad[1], g.out[1]);
  const Range rd = valid_range(g.in[0], g.stride[0], kd * g.dilation[0] - g.pad[0], g.out[0]);
  for (int64_t id = rd.lo; id < rd.hi; ++id) {
    const int64_t od = id * g.stride[0] - g.pad[0] + kd * g.dilation[0];
    for (int64_t ih = rh.lo; ih < rh.hi; ++ih) {
      const int64_t oh = ih * g.stride[1] - g.pad[1] + kh * g.dilation[1];
      const T* src = row + (id * g.in[1] + ih) * g.in[2];
      T* dst = plane + (od * g.out[1] + oh) * g.out[2];
      for (int64_t iw = rw.lo; iw < rw.hi; ++iw) dst[iw * g.stride[2] + w_offset] += src[iw];
    }
  }
}

template <class T>
void run_conv_transpose(const GemmMicroKernel<T>& micro, const KernelArgs& args) {
  const TensorView& y_view = args.outputs[0];
  if (y_view.numel() == 0) return;
  const Geometry g = geometry(args);
  const T* x = args.inputs[0].as<T>();
  const T* w = args.inputs[1].as<T>();
  const T* bias = optional_input_data<T>(args, 2);
  T* y = y_view.as<T>();
  const int64_t in_size = product(g.in);
  const int64_t out_size = product(g.out);
  const int64_t group_in = g.channels_in / g.group;
  const int64_t group_out = g.channels_out / g.group;
  const int64_t rows = g.channels_out * g.taps();  // column-matrix rows per image

  const ConvBuffers<T> buffers = conv_buffers<OpKind::ConvTranspose>(micro, g, args);
  const int64_t step = buffers.step;
  T* const col = buffers.col;
  std::vector<GemmProblem<T>> problems;
  for (int64_t first = 0; first < g.batch; first += step) {
    const int64_t images = std::min(step, g.batch - first);
    problems.clear();
    for (int64_t i = 0; i < images; ++i) {
      for (int64_t grp = 0; grp < g.group; ++grp) {
        problems.push_back(
            GemmProblem<T>{.m = group_out * g.taps(),
                           .n = in_size,
                           .k = group_in,
                           .a = w + grp * group_in * group_out * g.taps(),
                           .a_row_stride = 1,
                           .a_col_stride = group_out * g.taps(),
                           .b = x + ((first + i) * g.channels_in + grp * group_in) * in_size,
                           .b_row_stride = in_size,
                           .b_col_stride = 1,
                           .y = col + (i * rows + grp * group_out * g.taps()) * in_size,
                           .y_row_stride = in_size});
      }
    }
    gemm<T>(micro, problems, args.pool, buffers.shared);
    args.pool.parallel_chunks(
        images * g.channels_out, rows_per_task(out_size), [&](int64_t b, int64_t e) {
          for (int64_t plane = b; plane < e; ++plane) {
            T* out = y + (first * g.channels_out + plane) * out_size;
            std::fill(out, out + out_size, bias ? bias[plane % g.channels_out] : T(0));
            for (int64_t tap = 0; tap < g.taps(); ++tap) {
              col2im_row(g, col + (plane * g.taps() + tap) * in_size, tap, out);
            }
          }
        });
  }
}

template <OpKind Op, class T, GemmIsa Isa>
void conv_kernel(const KernelArgs& args) {
  const GemmMicroKernel<T>& micro = gemm_micro_kernel<T>(Isa);
  if constexpr (Op == OpKind::Conv) {
    run_conv(micro, args);
  } else {
    static_assert(Op == OpKind::ConvTranspose);
    run_conv_transpose(micro, args);
  }
}

// "f32_conv_im2col_gemm_avx2fma_6x16": the op's scheme and the GEMM micro-kernel it runs.
template <OpKind Op, class T, GemmIsa Isa>
const CpuKernel& conv_cpu_kernel() {
  static const CpuKernel kernel = [] {
    const std::string_view micro = gemm_micro_kernel<T>(Isa).name;
    const std::string scheme = Op == OpKind::Conv ? "conv_im2col_" : "convtranspose_col2im_";
    return CpuKernel{&conv_kernel<Op, T, Isa>, std::string(dtype_name(dtype_of<T>())) + "_" +
                                                   scheme +
                                                   std::string(micro.substr(micro.find("gemm")))};
  }();
  return kernel;
}

template <OpKind Op, class T>
const CpuKernel& fastest_conv_kernel() {
  switch (best_gemm_isa()) {
    case GemmIsa::Generic:
      return conv_cpu_kernel<Op, T, GemmIsa::Generic>();
    case GemmIsa::Avx2Fma:
      return conv_cpu_kernel<Op, T, GemmIsa::Avx2Fma>();
    case GemmIsa::Avx512:
      return conv_cpu_kernel<Op, T, GemmIsa::Avx512>();
  }
  return conv_cpu_kernel<Op, T, GemmIsa::Generic>();  // unreachable: the switch is exhaustive
}

template <class T>
const CpuKernel& depthwise_kernel() {
  static const CpuKernel kernel{&run_depthwise<T>,
                                std::string(dtype_name(dtype_of<T>())) + "_conv_depthwise_direct"};
  return kernel;
}

// Conv whose groups each read one input channel (group == C > 1).
bool is_depthwise(const KernelQuery& query) {
  const int64_t group = AttrReader(query.node).get_int("group");
  return query.node.op == OpKind::Conv && group > 1 && query.inputs[0]->shape[1] == group;
}

// The im2col / col2im kernel with the scratch of the exact node; depthwise needs none.
template <OpKind Op, class T>
KernelChoice conv_choice(const KernelQuery& query) {
  if (is_depthwise(query)) return choice_of(depthwise_kernel<T>());
  const Geometry g = conv::geometry(AttrReader(query.node), query.inputs[0]->shape,
                                    query.inputs[1]->shape, query.outputs[0].shape);
  const ConvScratch s = conv_scratch<Op, T>(gemm_micro_kernel<T>(best_gemm_isa()), g);
  return choice_of(fastest_conv_kernel<Op, T>(), s.workspace_bytes, s.gemm.task_bytes);
}

template <OpKind Op>
KernelSelection select_conv_kernel(const KernelQuery& query) {
  const DType dtype = query.outputs[0].dtype;
  if (dtype == DType::F32) return conv_choice<Op, float>(query);
  if (dtype == DType::F64) return conv_choice<Op, double>(query);
  return KernelUnsupported{"no " + std::string(dtype_name(dtype)) + " kernel for " +
                           std::string(op_name(Op)) + " (supported: f32, f64)"};
}

}  // namespace

void register_convolution_kernels(KernelTable& table) {
  table[static_cast<size_t>(op_index(OpKind::Conv))] = {&select_conv_kernel<OpKind::Conv>,
                                                        kFloatTypes, KernelDeterminism::BitExact};
  table[static_cast<size_t>(op_index(OpKind::ConvTranspose))] = {
      &select_conv_kernel<OpKind::ConvTranspose>, kFloatTypes, KernelDeterminism::BitExact};
  register_convolution_grad_filter_kernels(table);
}

}  // namespace volta::cpu
