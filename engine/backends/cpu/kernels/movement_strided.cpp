// The strided-copy engine behind Transpose, Slice and Expand. Each op is described as
// "output element at index (i0, ..., ik) reads the input at offset + sum(i_a * stride_a)":
// Transpose permutes the input strides, Slice scales them by its steps (negative steps give
// negative strides) and offsets them by its starts, Expand zeroes them on broadcast axes.
// The description is then simplified (size-1 axes dropped, axes that stay adjacent merged)
// and the innermost axis decides how rows are moved: memcpy, fill or a strided loop, or a
// tiled 2-D transpose when the input's contiguous axis is not the output's innermost one.

#include <algorithm>
#include <array>
#include <cassert>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "movement.h"
#include "volta/ir/op_helpers.h"

namespace volta::cpu::movement {
namespace {

enum class CopyPath : uint8_t {
  MemcpyRows,   // the innermost axis is contiguous in the input: one memcpy per run
  FillRows,     // the innermost axis is broadcast: each run repeats one element
  StridedRows,  // the innermost axis has any other stride: an element loop per run
  Tiled2D,      // an outer output axis is the input's contiguous one: tiled transpose
};
inline constexpr int kCopyPathCount = 4;

// Square tile of the 2-D transpose: 32x32 elements keep the source and destination lines a
// tile touches in L1 even for 8-byte elements (2 x 8 KiB).
inline constexpr int64_t kTransposeTile = 32;

struct CopyAxis {
  int64_t dim;
  int64_t src_stride;  // elements; 0 on broadcast axes, negative for reversed slices
};

struct StridedCopy {
  std::vector<CopyAxis> axes;  // the output's axes, simplified; never empty
  int64_t src_offset = 0;      // where output element 0 is read
  int64_t numel = 0;
  CopyPath path = CopyPath::MemcpyRows;
  int tile_axis = -1;  // Tiled2D: the output axis along which the input is contiguous
};

std::vector<CopyAxis> transpose_axes(const AttrReader& attrs, const Shape& in) {
  const std::vector<int> perm = resolve_perm(attrs, in.rank());
  const std::vector<int64_t> strides = in.strides();
  std::vector<CopyAxis> axes;
  axes.reserve(perm.size());
  for (int p : perm) axes.push_back({in[p], strides[static_cast<size_t>(p)]});
  return axes;
}

std::vector<CopyAxis> slice_axes(const AttrReader& attrs, const Shape& in, int64_t& offset) {
  const std::vector<SliceRange> ranges = resolve_slice(attrs, in);
  const std::vector<int64_t> strides = in.strides();
  std::vector<CopyAxis> axes;
  axes.reserve(ranges.size());
  for (size_t a = 0; a < ranges.size(); ++a) {
    axes.push_back({ranges[a].count, strides[a] * ranges[a].step});
    offset += ranges[a].start * strides[a];
  }
  return axes;
}

std::vector<CopyAxis> expand_axes(const Shape& in, const Shape& out) {
  const std::vector<int64_t> strides = broadcast_strides(in, out);
  std::vector<CopyAxis> axes;
  axes.reserve(strides.size());
  for (int a = 0; a < out.rank(); ++a) axes.push_back({out[a], strides[static_cast<size_t>(a)]});
  return axes;
}

// Size-1 axes never move the read position; an axis whose stride equals the next axis's
// stride times that axis's size continues it, so the two are one axis. Fewer, longer axes
// mean longer runs per memcpy and fewer index updates.
std::vector<CopyAxis> simplify(const std::vector<CopyAxis>& axes) {
  std::vector<CopyAxis> out;
  for (const CopyAxis& a : axes) {
    if (a.dim == 1) continue;
    if (!out.empty() && out.back().src_stride == a.src_stride * a.dim) {
      out.back() = {out.back().dim * a.dim, a.src_stride};
    } else {
      out.push_back(a);
    }
  }
  if (out.empty()) out.push_back({1, 1});  // a single element: one run of length 1
  return out;
}

StridedCopy describe_copy(OpKind op, const AttrReader& attrs, const Shape& in, const Shape& out) {
  StridedCopy copy;
  std::vector<CopyAxis> axes;
  switch (op) {
    case OpKind::Transpose:
      axes = transpose_axes(attrs, in);
      break;
    case OpKind::Slice:
      axes = slice_axes(attrs, in, copy.src_offset);
      break;
    case OpKind::Expand:
      axes = expand_axes(in, out);
      break;
    default:
      fail(ErrorCode::InvalidArgument,
           "the strided-copy engine has no rule for " + std::string(op_name(op)));
  }
  copy.numel = out.numel();
  copy.axes = simplify(axes);
  const int64_t inner_stride = copy.axes.back().src_stride;
  if (copy.numel == 0 || inner_stride == 1) {
    copy.path = CopyPath::MemcpyRows;
  } else if (inner_stride == 0) {
    copy.path = CopyPath::FillRows;
  } else {
    const auto contiguous = std::find_if(copy.axes.begin(), copy.axes.end() - 1,
                                         [](const CopyAxis& a) { return a.src_stride == 1; });
    if (contiguous != copy.axes.end() - 1) {
      copy.path = CopyPath::Tiled2D;
      copy.tile_axis = static_cast<int>(contiguous - copy.axes.begin());
    } else {
      copy.path = CopyPath::StridedRows;
    }
  }
  return copy;
}

// The input offset of consecutive output rows (all axes but the innermost), advanced like
// an odometer so a row costs one addition instead of a division per axis.
class RowCursor {
 public:
  RowCursor(std::span<const CopyAxis> outer_axes, int64_t row)
      : axes_(outer_axes), index_(outer_axes.size(), 0) {
    for (size_t a = axes_.size(); a-- > 0;) {
      index_[a] = row % axes_[a].dim;
      row /= axes_[a].dim;
      offset_ += index_[a] * axes_[a].src_stride;
    }
  }
  int64_t offset() const { return offset_; }
  void next() {
    for (size_t a = axes_.size(); a-- > 0;) {
      offset_ += axes_[a].src_stride;
      if (++index_[a] < axes_[a].dim) return;
      offset_ -= axes_[a].src_stride * axes_[a].dim;
      index_[a] = 0;
    }
  }

 private:
  std::span<const CopyAxis> axes_;
  std::vector<int64_t> index_;
  int64_t offset_ = 0;
};

template <CopyPath Path, class U>
void copy_rows(const StridedCopy& copy, const U* src, U* dst, ThreadPool& pool) {
  const CopyAxis inner = copy.axes.back();
  const std::span<const CopyAxis> outer(copy.axes.data(), copy.axes.size() - 1);
  pool.parallel_chunks(copy.numel, kCopyChunk, [&](int64_t begin, int64_t end) {
    RowCursor cursor(outer, begin / inner.dim);
    for_each_row_piece(
        begin, end, inner.dim, [&](int64_t, int64_t col, int64_t count, int64_t flat) {
          const U* from = src + copy.src_offset + cursor.offset() + col * inner.src_stride;
          U* to = dst + flat;
          if constexpr (Path == CopyPath::MemcpyRows) {
            std::memcpy(to, from, static_cast<size_t>(count) * sizeof(U));
          } else if constexpr (Path == CopyPath::FillRows) {
            std::fill_n(to, count, *from);
          } else {
            for (int64_t i = 0; i < count; ++i) to[i] = from[i * inner.src_stride];
          }
          cursor.next();
        });
  });
}

// The output as a batch of 2-D problems [rows = tile axis, cols = innermost axis]: the input
// walks rows with stride 1 and columns with the innermost axis's stride, the output the
// other way round. Tasks are fixed groups of square tiles, so both sides stay in cache.
template <class U>
void copy_tiled(const StridedCopy& copy, const U* src, U* dst, ThreadPool& pool) {
  const size_t last = copy.axes.size() - 1;
  const size_t tile_axis = static_cast<size_t>(copy.tile_axis);
  std::vector<int64_t> dims;
  for (const CopyAxis& a : copy.axes) dims.push_back(a.dim);
  const std::vector<int64_t> dst_strides = Shape(dims).strides();

  struct BatchAxis {
    int64_t dim, src_stride, dst_stride;
  };
  std::vector<BatchAxis> batch_axes;
  for (size_t a = 0; a < last; ++a) {
    if (a != tile_axis) batch_axes.push_back({dims[a], copy.axes[a].src_stride, dst_strides[a]});
  }
  const int64_t rows = dims[tile_axis];
  const int64_t cols = dims[last];
  const int64_t col_src_stride = copy.axes[last].src_stride;
  const int64_t row_dst_stride = dst_strides[tile_axis];
  const int64_t row_tiles = (rows + kTransposeTile - 1) / kTransposeTile;
  const int64_t col_tiles = (cols + kTransposeTile - 1) / kTransposeTile;
  const int64_t tiles_per_matrix = row_tiles * col_tiles;
  const int64_t num_tiles = copy.numel / (rows * cols) * tiles_per_matrix;
  const int64_t tiles_per_task =
      std::max<int64_t>(1, kCopyChunk / (kTransposeTile * kTransposeTile));

  pool.parallel_chunks(num_tiles, tiles_per_task, [&](int64_t first, int64_t end) {
    for (int64_t tile = first; tile < end; ++tile) {
      int64_t batch = tile / tiles_per_matrix;
      int64_t src_base = copy.src_offset;
      int64_t dst_base = 0;
      for (size_t a = batch_axes.size(); a-- > 0;) {
        const int64_t index = batch % batch_axes[a].dim;
        batch /= batch_axes[a].dim;
        src_base += index * batch_axes[a].src_stride;
        dst_base += index * batch_axes[a].dst_stride;
      }
      const int64_t row0 = tile % tiles_per_matrix / col_tiles * kTransposeTile;
      const int64_t col0 = tile % col_tiles * kTransposeTile;
      const int64_t row_end = std::min(rows, row0 + kTransposeTile);
      const int64_t col_end = std::min(cols, col0 + kTransposeTile);
      for (int64_t r = row0; r < row_end; ++r) {
        const U* from = src + src_base + r;
        U* to = dst + dst_base + r * row_dst_stride;
        for (int64_t c = col0; c < col_end; ++c) to[c] = from[c * col_src_stride];
      }
    }
  });
}

template <CopyPath Path, class U>
void strided_copy_kernel(const KernelArgs& args) {
  const StridedCopy copy =
      describe_copy(args.node.op, args.attrs, args.inputs[0].shape, args.outputs[0].shape);
  assert(copy.path == Path && "the kernel selected for this node took another path");
  if (copy.numel == 0) return;
  const U* src = args.inputs[0].as<U>();
  U* dst = args.outputs[0].as<U>();
  if constexpr (Path == CopyPath::Tiled2D) {
    copy_tiled<U>(copy, src, dst, args.pool);
  } else {
    copy_rows<Path, U>(copy, src, dst, args.pool);
  }
}

std::string_view path_name(CopyPath path) {
  switch (path) {
    case CopyPath::MemcpyRows:
      return "memcpy_rows";
    case CopyPath::FillRows:
      return "fill_rows";
    case CopyPath::StridedRows:
      return "strided_rows";
    case CopyPath::Tiled2D:
      return "tile32";
  }
  return "";
}

template <class U>
KernelFn kernel_fn(CopyPath path) {
  switch (path) {
    case CopyPath::MemcpyRows:
      return &strided_copy_kernel<CopyPath::MemcpyRows, U>;
    case CopyPath::FillRows:
      return &strided_copy_kernel<CopyPath::FillRows, U>;
    case CopyPath::StridedRows:
      return &strided_copy_kernel<CopyPath::StridedRows, U>;
    case CopyPath::Tiled2D:
      return &strided_copy_kernel<CopyPath::Tiled2D, U>;
  }
  return nullptr;
}

inline constexpr std::array<OpKind, 3> kStridedOps{OpKind::Transpose, OpKind::Slice,
                                                   OpKind::Expand};

// One kernel per (op, path) for element type U, named e.g. "x32_transpose_tile32".
template <class U>
const CpuKernel& strided_kernel(OpKind op, CopyPath path) {
  using PathKernels = std::array<CpuKernel, kCopyPathCount>;
  static const std::array<PathKernels, kStridedOps.size()> kKernels = [] {
    std::array<PathKernels, kStridedOps.size()> table;
    for (size_t o = 0; o < kStridedOps.size(); ++o) {
      const std::string op_part = lowercase_op_name(kStridedOps[o]);
      for (int p = 0; p < kCopyPathCount; ++p) {
        const auto path_p = static_cast<CopyPath>(p);
        table[o][static_cast<size_t>(p)] = CpuKernel{
            kernel_fn<U>(path_p),
            element_size_prefix<U>() + "_" + op_part + "_" + std::string(path_name(path_p)),
            KernelDeterminism::BitExact};
      }
    }
    return table;
  }();
  const size_t slot = static_cast<size_t>(std::find(kStridedOps.begin(), kStridedOps.end(), op) -
                                          kStridedOps.begin());
  return kKernels.at(slot)[static_cast<size_t>(path)];
}

}  // namespace

KernelSelection select_strided_copy(const KernelQuery& query) {
  const StridedCopy copy = describe_copy(query.node.op, AttrReader(query.node),
                                         query.inputs[0]->shape, query.outputs[0].shape);
  return visit_element_size(query.outputs[0].dtype, [&](auto tag) {
    using U = typename decltype(tag)::type;
    return KernelSelection(choice_of(strided_kernel<U>(query.node.op, copy.path)));
  });
}

}  // namespace volta::cpu::movement
