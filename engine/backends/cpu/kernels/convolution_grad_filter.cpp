// ConvGradFilter on the CPU: Conv's filter gradient dW [M, C/group, k...] from X [N, C, D...]
// and dY [N, M, O...], summed over images and window positions.
//
// GEMM path: per group, dW[group] (M/group x C/group * taps) = dY[group] @ col^T, col being X's
// im2col column matrix (convolution_geometry.h). A step of images (images_per_step, set by the
// shape) lays its column matrix out as [C * taps][image][O] and gathers its dY into
// [M][image][O], so one GEMM per group has K = images * O and reads both with unit stride along
// K. dW starts at zero and each step's GEMM adds onto it (beta 1), steps in image order.
//
// Direct path (one X channel per group, e.g. depthwise): a GEMM's N would be the taps alone, so
// each weight is one dot product over images, rows and columns, accumulated in kReductionLanes
// lanes by position within the row and combined pairwise (reduce_tree.h). One task per output
// channel; a dY plane with a non-finite value also adds its padded taps' products.
//
// Determinism: every sum's order is fixed by the shape (the step, the GEMM's K slices, the
// lanes), never by the thread count; work is split by tile, row or channel. Zero padding is
// data, as in Conv: a padded tap adds 0 * dY, which only a non-finite dY makes visible (NaN).

#include <algorithm>
#include <array>
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "convolution_geometry.h"
#include "cpu_kernel.h"
#include "linalg_gemm.h"
#include "reduce_tree.h"

namespace volta::cpu {
namespace {

using namespace conv;  // NOLINT(google-build-using-namespace): the family's own helpers

// X as the input, dY as the output positions, dW's spatial dims as the kernel.
Geometry grad_geometry(const AttrReader& attrs, const Shape& x, const Shape& dy, const Shape& dw) {
  return conv::geometry(attrs, x, dw, dy);
}

// Where the GEMM path keeps one step's column matrix and gathered dY (planned workspace) and
// its GEMM calls' shared op(B) panels; selection and run derive it from the same geometry.
struct GradScratch {
  int64_t step = 1;  // images per GEMM call
  int64_t col_offset = 0, col_elements = 0;
  int64_t dy_offset = 0, dy_elements = 0;
  int64_t shared_offset = 0;
  GemmScratch gemm;
  int64_t workspace_bytes = 0;
};

template <class T>
GradScratch grad_scratch(const GemmMicroKernel<T>& micro, const Geometry& g) {
  GradScratch s;
  const int64_t out_size = product(g.out);
  const int64_t rows = g.channels_in * g.taps();
  const int64_t depth = g.channels_in / g.group * g.taps();
  const int64_t group_out = g.channels_out / g.group;
  s.step = images_per_step(g.batch, rows * out_size);
  const int64_t images = std::min(s.step, g.batch);
  s.col_elements = images * rows * out_size;
  s.dy_elements = images * g.channels_out * out_size;
  s.gemm = gemm_scratch(micro, group_out, depth, images * out_size, g.group);
  if (g.batch % s.step != 0) {
    s.gemm = max_scratch(
        s.gemm, gemm_scratch(micro, group_out, depth, (g.batch % s.step) * out_size, g.group));
  }
  WorkspaceLayout layout;
  s.col_offset = layout.add<T>(s.col_elements);
  s.dy_offset = layout.add<T>(s.dy_elements);
  s.shared_offset = layout.add<std::byte>(s.gemm.shared_bytes);
  s.workspace_bytes = layout.bytes();
  return s;
}

template <class T, GemmIsa Isa>
void run_gemm_path(const KernelArgs& args) {
  const GemmMicroKernel<T>& micro = gemm_micro_kernel<T>(Isa);
  T* dw = args.outputs[0].as<T>();
  std::fill(dw, dw + args.outputs[0].numel(), T(0));
  const Geometry g =
      grad_geometry(args.attrs, args.inputs[0].shape, args.inputs[1].shape, args.outputs[0].shape);
  const int64_t in_size = product(g.in);
  const int64_t out_size = product(g.out);
  if (args.outputs[0].numel() == 0 || g.batch == 0 || out_size == 0) return;
  const T* x = args.inputs[0].as<T>();
  const T* dy = args.inputs[1].as<T>();
  const int64_t rows = g.channels_in * g.taps();
  const int64_t depth = g.channels_in / g.group * g.taps();  // dW columns per group
  const int64_t group_out = g.channels_out / g.group;
  const GradScratch s = grad_scratch(micro, g);
  T* const col = workspace_part<T>(args.workspace, s.col_offset, s.col_elements, args.node);
  T* const dy_step = workspace_part<T>(args.workspace, s.dy_offset, s.dy_elements, args.node);
  const std::span<std::byte> shared = args.workspace.subspan(static_cast<size_t>(s.shared_offset));
  std::vector<GemmProblem<T>> problems;
  for (int64_t first = 0; first < g.batch; first += s.step) {
    const int64_t images = std::min(s.step, g.batch - first);
    const int64_t k = images * out_size;
    args.pool.parallel_chunks(images * rows, rows_per_task(out_size), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {  // r = (row, image): col[row][image][o]
        const int64_t row = r / images, image = first + r % images;
        im2col_row(g, x + (image * g.channels_in + row / g.taps()) * in_size, row % g.taps(),
                   col + r * out_size);
      }
    });
    args.pool.parallel_chunks(
        images * g.channels_out, rows_per_task(out_size), [&](int64_t b, int64_t e) {
          for (int64_t p = b; p < e; ++p) {  // p = (channel, image): dy_step[m][image][o]
            const T* src = dy + ((first + p % images) * g.channels_out + p / images) * out_size;
            std::copy(src, src + out_size, dy_step + p * out_size);
          }
        });
    problems.clear();
    for (int64_t grp = 0; grp < g.group; ++grp) {
      T* y = dw + grp * group_out * depth;
      problems.push_back(GemmProblem<T>{.m = group_out,
                                        .n = depth,
                                        .k = k,
                                        .a = dy_step + grp * group_out * k,
                                        .a_row_stride = k,
                                        .a_col_stride = 1,
                                        .b = col + grp * depth * k,
                                        .b_row_stride = 1,
                                        .b_col_stride = k,
                                        .c = y,
                                        .c_row_stride = depth,
                                        .c_col_stride = 1,
                                        .y = y,
                                        .y_row_stride = depth,
                                        .beta = T(1)});
    }
    gemm<T>(micro, problems, args.pool, shared);
  }
}

// Adds dY * 0 for each position of one dY plane whose tap reads the padding (outside rd x rh x
// rw): nothing for a finite dY, NaN for a non-finite one.
template <class T>
T padded_products(const T* dy_plane, const Dims3& out_dims, const Range& rd, const Range& rh,
                  const Range& rw) {
  const auto inside = [](const Range& r, int64_t i) { return i >= r.lo && i < r.hi; };
  T sum = 0;
  for (int64_t od = 0; od < out_dims[0]; ++od) {
    for (int64_t oh = 0; oh < out_dims[1]; ++oh) {
      for (int64_t ow = 0; ow < out_dims[2]; ++ow) {
        if (inside(rd, od) && inside(rh, oh) && inside(rw, ow)) continue;
        sum += dy_plane[(od * out_dims[1] + oh) * out_dims[2] + ow] * T(0);
      }
    }
  }
  return sum;
}

// One weight of the direct path: tap `tap` of output channel m reading X channel `x_channel`.
template <class T>
T direct_weight(const Geometry& g, const T* x_channel0, const T* dy_channel0, int64_t tap,
                std::span<const uint8_t> plane_finite) {
  const int64_t in_size = product(g.in);
  const int64_t out_size = product(g.out);
  const int64_t x_image_stride = g.channels_in * in_size;
  const int64_t dy_image_stride = g.channels_out * out_size;
  const auto [kd, kh, kw, w_offset, rd, rh, rw] = tap_reads(g, tap);
  std::array<T, kReductionLanes> lanes{};
  for (int64_t n = 0; n < g.batch; ++n) {
    const T* xc = x_channel0 + n * x_image_stride;
    const T* dyc = dy_channel0 + n * dy_image_stride;
    if (plane_finite[static_cast<size_t>(n)] == 0) {
      lanes[0] += padded_products(dyc, g.out, rd, rh, rw);
    }
    for (int64_t od = rd.lo; od < rd.hi; ++od) {
      const int64_t id = od * g.stride[0] - g.pad[0] + kd * g.dilation[0];
      for (int64_t oh = rh.lo; oh < rh.hi; ++oh) {
        const int64_t ih = oh * g.stride[1] - g.pad[1] + kh * g.dilation[1];
        const T* src = xc + (id * g.in[1] + ih) * g.in[2] + w_offset;
        const T* grad = dyc + (od * g.out[1] + oh) * g.out[2];
        const int64_t sw = g.stride[2];
        int64_t ow = rw.lo;
        for (; ow + kReductionLanes <= rw.hi; ow += kReductionLanes) {
          VOLTA_LANE_LOOP
          for (int lane = 0; lane < kReductionLanes; ++lane) {
            lanes[static_cast<size_t>(lane)] += grad[ow + lane] * src[(ow + lane) * sw];
          }
        }
        for (int lane = 0; ow < rw.hi; ++ow, ++lane) {
          lanes[static_cast<size_t>(lane)] += grad[ow] * src[ow * sw];
        }
      }
    }
  }
  return combine_lanes(lanes, [](T a, T b) { return a + b; });
}

template <class T>
void run_direct_path(const KernelArgs& args) {
  const TensorView& dw_view = args.outputs[0];
  if (dw_view.numel() == 0) return;
  const Geometry g =
      grad_geometry(args.attrs, args.inputs[0].shape, args.inputs[1].shape, dw_view.shape);
  const T* x = args.inputs[0].as<T>();
  const T* dy = args.inputs[1].as<T>();
  T* dw = dw_view.as<T>();
  const int64_t in_size = product(g.in);
  const int64_t out_size = product(g.out);
  const int64_t multiplier = g.channels_out / g.group;  // output channels per X channel
  args.pool.parallel_chunks(g.channels_out, 1, [&](int64_t b, int64_t e) {
    const std::span<uint8_t> plane_finite(worker_part<uint8_t>(args.pool, 0, g.batch, args.node),
                                          static_cast<size_t>(g.batch));
    for (int64_t m = b; m < e; ++m) {
      const T* dy_channel0 = dy + m * out_size;
      for (int64_t n = 0; n < g.batch; ++n) {
        const T* plane = dy_channel0 + n * g.channels_out * out_size;
        plane_finite[static_cast<size_t>(n)] =
            std::all_of(plane, plane + out_size, [](T v) { return std::isfinite(v); }) ? 1 : 0;
      }
      const T* x_channel0 = x + (m / multiplier) * in_size;
      for (int64_t tap = 0; tap < g.taps(); ++tap) {
        dw[m * g.taps() + tap] = direct_weight(g, x_channel0, dy_channel0, tap, plane_finite);
      }
    }
  });
}

// "f32_convgradfilter_im2col_gemm_avx2fma_6x16": the scheme and the GEMM micro-kernel it runs.
template <class T, GemmIsa Isa>
const CpuKernel& gemm_path_kernel() {
  static const CpuKernel kernel = [] {
    const std::string_view micro = gemm_micro_kernel<T>(Isa).name;
    return CpuKernel{&run_gemm_path<T, Isa>, std::string(dtype_name(dtype_of<T>())) +
                                                 "_convgradfilter_im2col_" +
                                                 std::string(micro.substr(micro.find("gemm")))};
  }();
  return kernel;
}

template <class T>
const CpuKernel& fastest_gemm_path_kernel() {
  switch (best_gemm_isa()) {
    case GemmIsa::Generic:
      return gemm_path_kernel<T, GemmIsa::Generic>();
    case GemmIsa::Avx2Fma:
      return gemm_path_kernel<T, GemmIsa::Avx2Fma>();
    case GemmIsa::Avx512:
      return gemm_path_kernel<T, GemmIsa::Avx512>();
  }
  return gemm_path_kernel<T, GemmIsa::Generic>();  // unreachable: the switch is exhaustive
}

template <class T>
const CpuKernel& direct_path_kernel() {
  static const CpuKernel kernel{&run_direct_path<T>,
                                std::string(dtype_name(dtype_of<T>())) + "_convgradfilter_direct"};
  return kernel;
}

template <class T>
KernelChoice grad_filter_choice(const KernelQuery& query) {
  const AttrReader attrs(query.node);
  const Geometry g =
      grad_geometry(attrs, query.inputs[0]->shape, query.inputs[1]->shape, query.outputs[0].shape);
  // The direct kernel's worker scratch: one finite-or-not flag per image of a dY channel.
  if (g.group > 1 && g.channels_in == g.group) {
    return choice_of(direct_path_kernel<T>(), 0, g.batch);
  }
  const GradScratch s = grad_scratch(gemm_micro_kernel<T>(best_gemm_isa()), g);
  return choice_of(fastest_gemm_path_kernel<T>(), s.workspace_bytes, s.gemm.task_bytes);
}

KernelSelection select_grad_filter_kernel(const KernelQuery& query) {
  const DType dtype = query.outputs[0].dtype;
  if (dtype == DType::F32) return grad_filter_choice<float>(query);
  if (dtype == DType::F64) return grad_filter_choice<double>(query);
  return KernelUnsupported{"no " + std::string(dtype_name(dtype)) +
                           " kernel for ConvGradFilter (supported: f32, f64)"};
}

}  // namespace

void register_convolution_grad_filter_kernels(KernelTable& table) {
  table[static_cast<size_t>(op_index(OpKind::ConvGradFilter))] = {
      &select_grad_filter_kernel, kFloatTypes, KernelDeterminism::BitExact};
}

}  // namespace volta::cpu
