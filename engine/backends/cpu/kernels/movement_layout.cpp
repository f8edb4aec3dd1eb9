// Tile, Pad, DepthToSpace, SpaceToDepth and ReverseSequence on the CPU. Each output element
// is a copy of one input element (or Pad's constant), so kernels are chosen by element size
// and write their output in fixed chunks of rows (the innermost axis), copying contiguous
// runs where the layout has them. Results never depend on the thread count.

#include <algorithm>
#include <cstring>
#include <vector>

#include "movement.h"

namespace volta::cpu {
namespace {

using movement::element_size_prefix;
using movement::for_each_row_piece;
using movement::kCopyChunk;
using movement::visit_element_size;

// Scalars (rank 0) have one element and no rows: every kernel below copies it as is.
template <class U>
bool copied_scalar(const KernelArgs& args) {
  if (args.outputs[0].shape.rank() != 0) return false;
  args.outputs[0].as<U>()[0] = args.inputs[0].as<U>()[0];
  return true;
}

// ---- Tile: out[p] = x[p mod dims] --------------------------------------------------------

template <class U>
void tile(const KernelArgs& args) {
  if (copied_scalar<U>(args)) return;
  const ConstTensorView& x = args.inputs[0];
  const TensorView& out = args.outputs[0];
  const int rank = x.shape.rank();
  const int64_t in_len = x.shape[rank - 1];
  const int64_t out_len = out.shape[rank - 1];
  const std::vector<int64_t> strides = x.shape.strides();
  const U* src = x.as<U>();
  U* dst = out.as<U>();
  args.pool.parallel_chunks(out.numel(), kCopyChunk, [&](int64_t begin, int64_t end) {
    for_each_row_piece(
        begin, end, out_len, [&](int64_t row, int64_t col, int64_t count, int64_t flat) {
          int64_t offset = 0;
          for (int64_t rest = row, a = rank - 2; a >= 0; --a) {
            const int axis = static_cast<int>(a);
            offset += rest % out.shape[axis] % x.shape[axis] * strides[static_cast<size_t>(a)];
            rest /= out.shape[axis];
          }
          const U* line = src + offset;
          // Copy runs of the input row, wrapping at its end.
          for (int64_t c = col; c < col + count;) {
            const int64_t from = c % in_len;
            const int64_t run = std::min(in_len - from, col + count - c);
            std::memcpy(dst + flat + (c - col), line + from, static_cast<size_t>(run) * sizeof(U));
            c += run;
          }
        });
  });
}

// ---- Pad -----------------------------------------------------------------------------------

enum class PadMode { Constant, Reflect, Edge };

PadMode pad_mode(const AttrReader& attrs) {
  const std::string& mode = attrs.get_string("mode");
  if (mode == "constant") return PadMode::Constant;
  if (mode == "reflect") return PadMode::Reflect;
  if (mode == "edge") return PadMode::Edge;
  fail(ErrorCode::KernelFailure, "Pad mode \"" + mode +
                                     "\" is not supported (supported: \"constant\", \"reflect\", "
                                     "\"edge\")");
}

// The input index output index `o` reads along an axis of `dim` elements padded by `before`,
// or -1 for the constant. Reflect mirrors without repeating the edge, with period
// 2 * (dim - 1), as numpy's "reflect" does for pads longer than the axis.
int64_t pad_source(int64_t o, int64_t before, int64_t dim, PadMode mode) {
  const int64_t i = o - before;
  if (i >= 0 && i < dim) return i;
  switch (mode) {
    case PadMode::Constant:
      return -1;
    case PadMode::Edge:
      return std::clamp<int64_t>(i, 0, dim - 1);
    case PadMode::Reflect: {
      if (dim == 1) return 0;
      const int64_t period = 2 * (dim - 1);
      const int64_t m = ((i % period) + period) % period;
      return m < dim ? m : period - m;
    }
  }
  return -1;
}

template <class U>
void pad(const KernelArgs& args) {
  if (copied_scalar<U>(args)) return;
  const ConstTensorView& x = args.inputs[0];
  const TensorView& out = args.outputs[0];
  const PadMode mode = pad_mode(args.attrs);
  const std::vector<int64_t>& pads = args.attrs.get_ints("pads");
  const int rank = x.shape.rank();
  const U value = args.inputs.size() > 1 && args.inputs[1].data != nullptr
                      ? args.inputs[1].as<U>()[0]
                      : U{0};  // zero bits: 0, 0.0 or false
  const std::vector<int64_t> strides = x.shape.strides();
  const int64_t in_len = x.shape[rank - 1];
  const int64_t out_len = out.shape[rank - 1];
  const int64_t before = pads[static_cast<size_t>(rank - 1)];
  // Output columns [lo, hi) read input columns [lo - before, hi - before) in one run.
  const int64_t lo = std::clamp<int64_t>(before, 0, out_len);
  const int64_t hi = std::clamp<int64_t>(before + in_len, lo, out_len);
  const U* src = x.as<U>();
  U* dst = out.as<U>();
  args.pool.parallel_chunks(out.numel(), kCopyChunk, [&](int64_t begin, int64_t end) {
    for_each_row_piece(
        begin, end, out_len, [&](int64_t row, int64_t col, int64_t count, int64_t flat) {
          int64_t offset = 0;
          for (int64_t rest = row, a = rank - 2; a >= 0; --a) {
            const int axis = static_cast<int>(a);
            const int64_t s = pad_source(rest % out.shape[axis], pads[static_cast<size_t>(a)],
                                         x.shape[axis], mode);
            if (s < 0) {  // the whole row lies in the constant border
              std::fill(dst + flat, dst + flat + count, value);
              return;
            }
            offset += s * strides[static_cast<size_t>(a)];
            rest /= out.shape[axis];
          }
          const U* line = src + offset;
          const int64_t stop = col + count;
          for (int64_t c = col; c < stop;) {
            if (c >= lo && c < hi) {
              const int64_t run = std::min(hi, stop) - c;
              std::memcpy(dst + flat + (c - col), line + (c - before),
                          static_cast<size_t>(run) * sizeof(U));
              c += run;
              continue;
            }
            const int64_t s = pad_source(c, before, in_len, mode);
            dst[flat + (c - col)] = s < 0 ? value : line[s];
            ++c;
          }
        });
  });
}

// ---- DepthToSpace / SpaceToDepth -----------------------------------------------------------

// Output row (n, c, y) of DepthToSpace reads input rows (n, channel(i, j), y / b) with
// i = y % b, and output column x = w * b + j from input column w.
template <class U>
void depth_to_space(const KernelArgs& args) {
  const ConstTensorView& x = args.inputs[0];
  const TensorView& out = args.outputs[0];
  const int64_t b = args.attrs.get_int("blocksize");
  const bool crd = args.attrs.get_string("mode") == "CRD";
  const int64_t channels = x.shape[1], height = x.shape[2], width = x.shape[3];
  const int64_t out_c = out.shape[1], out_h = out.shape[2], out_w = out.shape[3];
  const U* src = x.as<U>();
  U* dst = out.as<U>();
  args.pool.parallel_chunks(out.numel(), kCopyChunk, [&](int64_t begin, int64_t end) {
    for_each_row_piece(
        begin, end, out_w, [&](int64_t row, int64_t col, int64_t count, int64_t flat) {
          const int64_t y = row % out_h;
          const int64_t c = row / out_h % out_c;
          const int64_t n = row / out_h / out_c;
          const int64_t i = y % b, h = y / b;
          for (int64_t xo = col; xo < col + count; ++xo) {
            const int64_t j = xo % b, w = xo / b;
            const int64_t ch = crd ? (c * b + i) * b + j : (i * b + j) * out_c + c;
            dst[flat + (xo - col)] = src[((n * channels + ch) * height + h) * width + w];
          }
        });
  });
}

// Output channel ch = (i * b + j) * C + c of SpaceToDepth holds input (n, c, h * b + i,
// w * b + j): output row (n, ch, h) reads every b-th element of one input row.
template <class U>
void space_to_depth(const KernelArgs& args) {
  const ConstTensorView& x = args.inputs[0];
  const TensorView& out = args.outputs[0];
  const int64_t b = args.attrs.get_int("blocksize");
  const int64_t channels = x.shape[1], height = x.shape[2], width = x.shape[3];
  const int64_t out_c = out.shape[1], out_h = out.shape[2], out_w = out.shape[3];
  const U* src = x.as<U>();
  U* dst = out.as<U>();
  args.pool.parallel_chunks(out.numel(), kCopyChunk, [&](int64_t begin, int64_t end) {
    for_each_row_piece(
        begin, end, out_w, [&](int64_t row, int64_t col, int64_t count, int64_t flat) {
          const int64_t h = row % out_h;
          const int64_t ch = row / out_h % out_c;
          const int64_t n = row / out_h / out_c;
          const int64_t c = ch % channels, block = ch / channels;
          const int64_t i = block / b, j = block % b;
          const U* line = src + ((n * channels + c) * height + h * b + i) * width + j;
          for (int64_t w = col; w < col + count; ++w) dst[flat + (w - col)] = line[w * b];
        });
  });
}

// ---- ReverseSequence -----------------------------------------------------------------------

// The input is [d0, d1, inner] with batch and time on axes 0 and 1: output row (a0, a1)
// reads time step len - 1 - t when t < len of its batch entry, else t itself.
template <class U, class I>
void reverse_sequence(const KernelArgs& args) {
  const ConstTensorView& x = args.inputs[0];
  const ConstTensorView& lens = args.inputs[1];
  const TensorView& out = args.outputs[0];
  const bool batch_first = args.attrs.get_int("batch_axis") == 0;
  const int time_axis = batch_first ? 1 : 0;
  const int64_t steps = x.shape[time_axis];
  const I* len = lens.as<I>();
  for (int64_t e = 0; e < lens.numel(); ++e) {
    if (len[e] < 0 || len[e] > steps) {
      fail(ErrorCode::KernelFailure,
           "sequence_lens[" + std::to_string(e) + "] = " + std::to_string(len[e]) +
               " is out of range for time axis " + std::to_string(time_axis) + " of size " +
               std::to_string(steps) + " (valid: [0, " + std::to_string(steps) + "])");
    }
  }
  const int64_t d1 = x.shape[1];
  int64_t inner = 1;
  for (int a = 2; a < x.shape.rank(); ++a) inner *= x.shape[a];
  const U* src = x.as<U>();
  U* dst = out.as<U>();
  args.pool.parallel_chunks(out.numel(), kCopyChunk, [&](int64_t begin, int64_t end) {
    for_each_row_piece(begin, end, inner,
                       [&](int64_t row, int64_t col, int64_t count, int64_t flat) {
                         const int64_t a0 = row / d1, a1 = row % d1;
                         const int64_t batch = batch_first ? a0 : a1;
                         const int64_t t = batch_first ? a1 : a0;
                         const int64_t n = len[batch];
                         const int64_t from_t = t < n ? n - 1 - t : t;
                         const int64_t from_row = batch_first ? a0 * d1 + from_t : from_t * d1 + a1;
                         std::memcpy(dst + flat, src + from_row * inner + col,
                                     static_cast<size_t>(count) * sizeof(U));
                       });
  });
}

// ---- Selection -----------------------------------------------------------------------------

template <void (*Kernel)(const KernelArgs&)>
const CpuKernel& named_kernel(const std::string& name) {
  static const CpuKernel kKernel{Kernel, name};
  return kKernel;
}

// One kernel per element size for ops whose only typed operand is the data.
template <template <class> class Op>
KernelSelection select_by_size(const KernelQuery& q) {
  return visit_element_size(q.outputs[0].dtype, [&](auto tag) -> KernelSelection {
    using U = typename decltype(tag)::type;
    return choice_of(named_kernel<&Op<U>::run>(element_size_prefix<U>() + "_" + Op<U>::kName));
  });
}

template <class U>
struct TileOp {
  static constexpr const char* kName = "tile_row_runs";
  static void run(const KernelArgs& args) { tile<U>(args); }
};
template <class U>
struct PadOp {
  static constexpr const char* kName = "pad_row_runs";
  static void run(const KernelArgs& args) { pad<U>(args); }
};
template <class U>
struct DepthToSpaceOp {
  static constexpr const char* kName = "depthtospace_rows";
  static void run(const KernelArgs& args) { depth_to_space<U>(args); }
};
template <class U>
struct SpaceToDepthOp {
  static constexpr const char* kName = "spacetodepth_strided_rows";
  static void run(const KernelArgs& args) { space_to_depth<U>(args); }
};

KernelSelection select_reverse_sequence(const KernelQuery& q) {
  const DType index_type = q.inputs[1]->dtype;
  if (!kIndexTypes.contains(index_type)) {
    return KernelUnsupported{"ReverseSequence sequence_lens must be i32 or i64, got " +
                             std::string(dtype_name(index_type))};
  }
  return visit_element_size(q.outputs[0].dtype, [&](auto tag) -> KernelSelection {
    using U = typename decltype(tag)::type;
    const std::string name = element_size_prefix<U>() + "_reversesequence_" +
                             std::string(dtype_name(index_type)) + "_lens_memcpy_rows";
    if (index_type == DType::I32)
      return choice_of(named_kernel<&reverse_sequence<U, int32_t>>(name));
    return choice_of(named_kernel<&reverse_sequence<U, int64_t>>(name));
  });
}

}  // namespace

void register_movement_layout_kernels(KernelTable& table) {
  auto add = [&](OpKind op, KernelSelector select) {
    table[static_cast<size_t>(op_index(op))] = {select, kAllTypes, KernelDeterminism::BitExact};
  };
  add(OpKind::Tile, &select_by_size<TileOp>);
  add(OpKind::Pad, &select_by_size<PadOp>);
  add(OpKind::DepthToSpace, &select_by_size<DepthToSpaceOp>);
  add(OpKind::SpaceToDepth, &select_by_size<SpaceToDepthOp>);
  add(OpKind::ReverseSequence, &select_reverse_sequence);
}

}  // namespace volta::cpu
