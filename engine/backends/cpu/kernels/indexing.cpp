// GatherElements, GatherND, ScatterElements, ScatterND, TopK, OneHot and Trilu on the CPU.
//
// Gathers, OneHot and Trilu write fixed chunks of their output; TopK sorts fixed runs of
// rows. Scatters first copy data, then apply updates so that every output element sees its
// updates in index order: ScatterElements splits the work by lines along the axis (distinct
// lines write distinct elements), ScatterND by fixed column ranges of the slice (each task
// runs every update over its columns in order). Nothing depends on the thread count.
// Indices are checked before anything is read through them: a bad one is an
// R-KERNEL-FAILURE naming its position, never a wild read or write.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "dtype_kernels.h"
#include "movement.h"

namespace volta::cpu {
namespace {

using movement::element_size_prefix;
using movement::for_each_row_piece;
using movement::kCopyChunk;
using movement::visit_element_size;

int64_t product(const Shape& shape, int first, int last) {
  int64_t p = 1;
  for (int a = first; a < last; ++a) p *= shape[a];
  return p;
}

// Shape inference checked the attributes; this guards kernels run on unverified graphs.
int checked_axis(int64_t axis, int rank) {
  const std::optional<int> a = normalize_axis(axis, rank);
  if (!a) {
    fail(ErrorCode::KernelFailure,
         "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  }
  return *a;
}

// "[1,2]": the multi-index of flat position `flat` in `shape`.
std::string position_str(int64_t flat, const Shape& shape) {
  std::vector<int64_t> index(static_cast<size_t>(shape.rank()));
  for (int a = shape.rank() - 1; a >= 0; --a) {
    index[static_cast<size_t>(a)] = flat % shape[a];
    flat /= shape[a];
  }
  return Shape(index).str();
}

[[noreturn]] void index_fail(int64_t value, int64_t flat, const Shape& indices,
                             const std::string& target, int64_t dim) {
  fail(ErrorCode::KernelFailure, "index " + std::to_string(value) + " at indices position " +
                                     position_str(flat, indices) + " is out of range for " +
                                     target + " of size " + std::to_string(dim) + " (valid: [" +
                                     std::to_string(-dim) + ", " + std::to_string(dim - 1) + "])");
}

// Checks every index against one axis extent. Chunks are checked in parallel; the pool
// rethrows the lowest failing chunk's error, so the message names the first bad index.
template <class I>
void check_axis_indices(ThreadPool& pool, const ConstTensorView& indices, int axis, int64_t dim) {
  const I* idx = indices.as<I>();
  pool.parallel_chunks(indices.numel(), kCopyChunk, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const int64_t v = idx[p];
      if (v < -dim || v >= dim)
        index_fail(v, p, indices.shape, "data axis " + std::to_string(axis), dim);
    }
  });
}

// GatherND / ScatterND: the data offset of each index tuple (the last axis of indices holds
// k leading indices after `batch_dims` batch axes), checked component by component.
// The offsets live in the planned workspace: tuple_count of them (declared at selection).
int64_t tuple_count(const Shape& indices) {
  const int64_t k = indices[indices.rank() - 1];
  return k == 0 ? 0 : indices.numel() / k;
}

template <class I>
std::span<const int64_t> tuple_offsets(const KernelArgs& args, const ConstTensorView& indices,
                                       const Shape& data, int batch_dims) {
  ThreadPool& pool = args.pool;
  const int64_t k = indices.shape[indices.shape.rank() - 1];
  const int64_t tuples = tuple_count(indices.shape);
  const std::vector<int64_t> strides = data.strides();
  const I* idx = indices.as<I>();
  const std::span<int64_t> offsets(workspace_part<int64_t>(args.workspace, 0, tuples, args.node),
                                   static_cast<size_t>(tuples));
  pool.parallel_chunks(tuples, kCopyChunk, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      int64_t offset = 0;
      for (int64_t j = 0; j < k; ++j) {
        const int axis = batch_dims + static_cast<int>(j);
        const int64_t dim = data[axis];
        const int64_t v = idx[t * k + j];
        if (v < -dim || v >= dim) {
          index_fail(v, t * k + j, indices.shape, "data axis " + std::to_string(axis), dim);
        }
        offset += (v < 0 ? v + dim : v) * strides[static_cast<size_t>(axis)];
      }
      offsets[static_cast<size_t>(t)] = offset;
    }
  });
  return offsets;
}

// Walks row-major positions of `shape` from a flat start, keeping the offset of the current
// position in another layout (`strides`, one per axis; 0 drops an axis).
class StridedWalk {
 public:
  StridedWalk(const Shape& shape, std::vector<int64_t> strides, int64_t flat)
      : shape_(shape), strides_(std::move(strides)), index_(static_cast<size_t>(shape.rank())) {
    for (int a = shape.rank() - 1; a >= 0; --a) {
      index_[static_cast<size_t>(a)] = flat % shape[a];
      flat /= shape[a];
      offset_ += index_[static_cast<size_t>(a)] * strides_[static_cast<size_t>(a)];
    }
  }
  int64_t offset() const { return offset_; }
  int64_t index(int axis) const { return index_[static_cast<size_t>(axis)]; }
  void next() {
    for (int a = shape_.rank() - 1; a >= 0; --a) {
      const auto s = static_cast<size_t>(a);
      offset_ += strides_[s];
      if (++index_[s] < shape_[a]) return;
      offset_ -= strides_[s] * shape_[a];
      index_[s] = 0;
    }
  }

 private:
  const Shape& shape_;
  std::vector<int64_t> strides_;
  std::vector<int64_t> index_;
  int64_t offset_ = 0;
};

// ---- GatherElements: out[p] = data[p with p[axis] = indices[p]] -------------------------

template <class U, class I>
void gather_elements(const KernelArgs& args) {
  const ConstTensorView& data = args.inputs[0];
  const ConstTensorView& indices = args.inputs[1];
  const TensorView& out = args.outputs[0];
  const int axis = checked_axis(args.attrs.get_int("axis"), data.shape.rank());
  const int64_t dim = data.shape[axis];
  check_axis_indices<I>(args.pool, indices, axis, dim);
  std::vector<int64_t> strides = data.shape.strides();
  const int64_t axis_stride = strides[static_cast<size_t>(axis)];
  strides[static_cast<size_t>(axis)] = 0;  // the index supplies this coordinate
  const U* src = data.as<U>();
  const I* idx = indices.as<I>();
  U* dst = out.as<U>();
  args.pool.parallel_chunks(out.numel(), kCopyChunk, [&](int64_t begin, int64_t end) {
    StridedWalk walk(indices.shape, strides, begin);
    for (int64_t p = begin; p < end; ++p, walk.next()) {
      const int64_t v = idx[p];
      dst[p] = src[walk.offset() + (v < 0 ? v + dim : v) * axis_stride];
    }
  });
}

// ---- GatherND: output rows are data slices at index tuples -----------------------------

template <class U, class I>
void gather_nd(const KernelArgs& args) {
  const ConstTensorView& data = args.inputs[0];
  const ConstTensorView& indices = args.inputs[1];
  const TensorView& out = args.outputs[0];
  const int b = static_cast<int>(args.attrs.get_int("batch_dims"));
  const int64_t k = indices.shape[indices.shape.rank() - 1];
  const std::span<const int64_t> offsets = tuple_offsets<I>(args, indices, data.shape, b);
  const int64_t tuples_per_batch = product(indices.shape, b, indices.shape.rank() - 1);
  const int64_t batch_stride = product(data.shape, b, data.shape.rank());
  const int64_t slice = product(data.shape, b + static_cast<int>(k), data.shape.rank());
  const U* src = data.as<U>();
  U* dst = out.as<U>();
  args.pool.parallel_chunks(out.numel(), kCopyChunk, [&](int64_t begin, int64_t end) {
    for_each_row_piece(begin, end, slice,
                       [&](int64_t row, int64_t col, int64_t count, int64_t flat) {
                         const U* from = src + (row / tuples_per_batch) * batch_stride +
                                         offsets[static_cast<size_t>(row)] + col;
                         std::memcpy(dst + flat, from, static_cast<size_t>(count) * sizeof(U));
                       });
  });
}

// ---- Scatters ------------------------------------------------------------------------------

enum class Reduction { None, Add, Mul, Max, Min };

Reduction reduction_of(const AttrReader& attrs) {
  const std::string& r = attrs.get_string("reduction");
  if (r == "none") return Reduction::None;
  if (r == "add") return Reduction::Add;
  if (r == "mul") return Reduction::Mul;
  if (r == "max") return Reduction::Max;
  if (r == "min") return Reduction::Min;
  fail(ErrorCode::KernelFailure, "reduction \"" + r +
                                     "\" is not supported (supported: \"none\", \"add\", "
                                     "\"mul\", \"max\", \"min\")");
}

// numpy.maximum / numpy.minimum, as ONNX's reference combines: a NaN operand propagates (the
// current one first), and of equal values the current one stays.
template <class T>
T max_of(T current, T update) {
  if (current != current) return current;
  return update != update || update > current ? update : current;
}
template <class T>
T min_of(T current, T update) {
  if (current != current) return current;
  return update != update || update < current ? update : current;
}

// Integers wrap around (two's complement) instead of overflowing.
template <class T>
T reduce_into(Reduction r, T current, T update) {
  if constexpr (std::is_same_v<T, bool>) {  // bool: only "none" passes shape inference
    return update;
  } else if constexpr (kIsHalf<T>) {  // in f32, rounded once
    return T(reduce_into(r, static_cast<float>(current), static_cast<float>(update)));
  } else if constexpr (std::is_integral_v<T>) {
    using W = std::common_type_t<unsigned, std::make_unsigned_t<T>>;  // no int promotion
    if (r == Reduction::Add)
      return static_cast<T>(static_cast<W>(current) + static_cast<W>(update));
    if (r == Reduction::Mul)
      return static_cast<T>(static_cast<W>(current) * static_cast<W>(update));
    if (r == Reduction::Max) return max_of(current, update);
    if (r == Reduction::Min) return min_of(current, update);
    return update;
  } else {
    if (r == Reduction::Add) return current + update;
    if (r == Reduction::Mul) return current * update;
    if (r == Reduction::Max) return max_of(current, update);
    if (r == Reduction::Min) return min_of(current, update);
    return update;
  }
}

// The output starts as data; with Aliasing::InPlaceInput0 it may already be data's buffer.
void copy_data(const KernelArgs& args) {
  const ConstTensorView& data = args.inputs[0];
  const TensorView& out = args.outputs[0];
  if (out.data == data.data) return;
  const auto* from = static_cast<const std::byte*>(data.data);
  auto* to = static_cast<std::byte*>(out.data);
  const int64_t bytes = data.numel() * static_cast<int64_t>(dtype_size(data.dtype));
  args.pool.parallel_chunks(bytes, movement::kMemcpyChunkBytes, [&](int64_t begin, int64_t end) {
    std::memcpy(to + begin, from + begin, static_cast<size_t>(end - begin));
  });
}

// The elements of `in`, which must not share bytes with the output. The planner gives the
// output data's buffer (Aliasing::InPlaceInput0) only when no other operand of the node is
// data itself (may_write_over_operand), and an aliasing chain's earlier values are dead by
// then, so a scatter never reads updates or indices that it overwrites.
template <class V>
const V* unaliased(const ConstTensorView& in, const TensorView& out, const Node& node,
                   std::string_view operand) {
  const auto in_begin = reinterpret_cast<uintptr_t>(in.data);
  const auto out_begin = reinterpret_cast<uintptr_t>(out.data);
  const auto in_end = in_begin + static_cast<uintptr_t>(in.numel()) * sizeof(V);
  const auto out_end = out_begin + static_cast<uintptr_t>(out.numel()) *
                                       static_cast<uintptr_t>(dtype_size(out.dtype));
  if (in_begin == in_end || out_begin == out_end || in_end <= out_begin || out_end <= in_begin) {
    return in.as<V>();
  }
  fail(ErrorCode::KernelFailure, std::string(op_name(node.op)) + " node '" + node.name +
                                     "': " + std::string(operand) +
                                     " share bytes with the output, which the memory planner "
                                     "never plans");
}

// Updates of one line (all coordinates but the axis fixed) land on one line of the output,
// and distinct lines on distinct ones: tasks take fixed runs of lines, each line in order.
template <class T, class I>
void scatter_elements(const KernelArgs& args) {
  const ConstTensorView& data = args.inputs[0];
  const ConstTensorView& indices = args.inputs[1];
  const ConstTensorView& updates = args.inputs[2];
  const TensorView& out = args.outputs[0];
  const Reduction reduction = reduction_of(args.attrs);
  const int axis = checked_axis(args.attrs.get_int("axis"), data.shape.rank());
  const int64_t dim = data.shape[axis];
  check_axis_indices<I>(args.pool, indices, axis, dim);
  const I* idx = unaliased<I>(indices, out, args.node, "indices");
  const T* upd = unaliased<T>(updates, out, args.node, "updates");
  copy_data(args);

  const Shape& shape = indices.shape;
  const int64_t length = shape[axis];
  if (length == 0 || shape.numel() == 0) return;
  const int64_t inner = product(shape, axis + 1, shape.rank());
  const int64_t lines = shape.numel() / length;
  // Line l of indices is position (l / inner, *, l % inner); its output line starts at the
  // offset of that position (axis coordinate 0) in data's layout.
  Shape line_shape = shape;
  line_shape[axis] = 1;
  const std::vector<int64_t> strides = data.shape.strides();
  const int64_t axis_stride = strides[static_cast<size_t>(axis)];
  T* dst = out.as<T>();
  const int64_t lines_per_task = std::max<int64_t>(1, kCopyChunk / length);
  args.pool.parallel_chunks(lines, lines_per_task, [&](int64_t begin, int64_t end) {
    StridedWalk walk(line_shape, strides, begin);
    for (int64_t l = begin; l < end; ++l, walk.next()) {
      const int64_t first = (l / inner) * length * inner + l % inner;
      for (int64_t j = 0; j < length; ++j) {
        const int64_t p = first + j * inner;
        const int64_t v = idx[p];
        T& target = dst[walk.offset() + (v < 0 ? v + dim : v) * axis_stride];
        target = reduce_into(reduction, target, upd[p]);
      }
    }
  });
}

// Columns of the slice per task: every task applies all updates, in index order, to its
// own columns, so an element's updates never race and always come in order.
inline constexpr int64_t kScatterColumns = 4096;

template <class T, class I>
void scatter_nd(const KernelArgs& args) {
  const ConstTensorView& data = args.inputs[0];
  const ConstTensorView& indices = args.inputs[1];
  const ConstTensorView& updates = args.inputs[2];
  const TensorView& out = args.outputs[0];
  const Reduction reduction = reduction_of(args.attrs);
  const std::span<const int64_t> offsets = tuple_offsets<I>(args, indices, data.shape, 0);
  const T* upd = unaliased<T>(updates, out, args.node, "updates");
  copy_data(args);
  const int64_t k = indices.shape[indices.shape.rank() - 1];
  const int64_t slice = product(data.shape, static_cast<int>(k), data.shape.rank());
  T* dst = out.as<T>();
  args.pool.parallel_chunks(slice, kScatterColumns, [&](int64_t begin, int64_t end) {
    for (size_t n = 0; n < offsets.size(); ++n) {
      T* target = dst + offsets[n];
      const T* source = upd + static_cast<int64_t>(n) * slice;
      for (int64_t c = begin; c < end; ++c)
        target[c] = reduce_into(reduction, target[c], source[c]);
    }
  });
}

// ---- TopK ------------------------------------------------------------------------------

// The order TopK ranks by: larger (largest=1) or smaller (largest=0) first, NaN above every
// number, equal values by index. A strict total order on positions, so partial_sort's
// result is unique.
template <class T>
struct TopKOrder {
  const T* row;
  bool largest;
  bool operator()(int64_t a, int64_t b) const {
    const T x = row[a], y = row[b];
    if constexpr (std::is_floating_point_v<T>) {
      const bool nx = std::isnan(x), ny = std::isnan(y);
      if (nx || ny) return nx == ny ? a < b : nx == largest;
    }
    if (x != y) return largest ? x > y : x < y;
    return a < b;
  }
};

// A task's buffers for one row: its values and the positions it sorts.
struct TopKScratch {
  int64_t row_offset = 0;
  int64_t order_offset = 0;
  int64_t bytes = 0;
};

TopKScratch top_k_scratch(int64_t n, int64_t element_bytes) {
  WorkspaceLayout layout;
  TopKScratch t;
  t.row_offset = layout.add_bytes(n * element_bytes);
  t.order_offset = layout.add<int64_t>(n);
  t.bytes = layout.bytes();
  return t;
}

template <class T>
void top_k(const KernelArgs& args) {
  const ConstTensorView& x = args.inputs[0];
  const TensorView& values = args.outputs[0];
  const TensorView& indices = args.outputs[1];
  const int axis = checked_axis(args.attrs.get_int("axis"), x.shape.rank());
  const bool largest = args.attrs.get_int("largest") != 0;
  const int64_t n = x.shape[axis];
  const int64_t k = values.shape[axis];
  const int64_t inner = product(x.shape, axis + 1, x.shape.rank());
  const int64_t rows = product(x.shape, 0, axis) * inner;
  if (k == 0 || rows == 0) return;
  const T* src = x.as<T>();
  T* out_values = values.as<T>();
  auto* out_indices = indices.as<int64_t>();
  const int64_t rows_per_task = std::max<int64_t>(1, kCopyChunk / n);
  const TopKScratch scratch = top_k_scratch(n, sizeof(T));
  args.pool.parallel_chunks(rows, rows_per_task, [&](int64_t begin, int64_t end) {
    const std::span<T> row(worker_part<T>(args.pool, scratch.row_offset, n, args.node),
                           static_cast<size_t>(n));
    const std::span<int64_t> order(
        worker_part<int64_t>(args.pool, scratch.order_offset, n, args.node),
        static_cast<size_t>(n));
    for (int64_t r = begin; r < end; ++r) {
      const int64_t o = r / inner, i = r % inner;
      const T* line = src + o * n * inner + i;
      for (int64_t j = 0; j < n; ++j) row[static_cast<size_t>(j)] = line[j * inner];
      for (int64_t j = 0; j < n; ++j) order[static_cast<size_t>(j)] = j;
      const TopKOrder<T> before{row.data(), largest};
      if (k == n) {
        std::sort(order.begin(), order.end(), before);
      } else {
        std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
      }
      const int64_t base = o * k * inner + i;
      for (int64_t j = 0; j < k; ++j) {
        const int64_t pick = order[static_cast<size_t>(j)];
        out_values[base + j * inner] = row[static_cast<size_t>(pick)];
        out_indices[base + j * inner] = pick;
      }
    }
  });
}

// ---- OneHot ------------------------------------------------------------------------------

// The class an index selects, or -1 when it selects none (out of range, NaN). Float indices
// truncate toward zero, as a cast to int64 would; negative ones count from depth.
template <class I>
int64_t one_hot_class(I value, int64_t depth) {
  if constexpr (std::is_floating_point_v<I>) {
    const double t = std::trunc(static_cast<double>(value));
    if (!(t >= static_cast<double>(-depth) && t < static_cast<double>(depth))) return -1;
    const auto v = static_cast<int64_t>(t);
    return v < 0 ? v + depth : v;
  } else {
    const auto v = static_cast<int64_t>(value);
    if (v < -depth || v >= depth) return -1;
    return v < 0 ? v + depth : v;
  }
}

// The output is [outer, depth, inner] around the new axis; indices are [outer, inner].
template <class U, class I>
void one_hot(const KernelArgs& args) {
  const ConstTensorView& indices = args.inputs[0];
  const TensorView& out = args.outputs[0];
  const int axis = checked_axis(args.attrs.get_int("axis"), out.shape.rank());
  const int64_t depth = out.shape[axis];
  const int64_t inner = product(out.shape, axis + 1, out.shape.rank());
  const I* idx = indices.as<I>();
  const U off = args.inputs[1].as<U>()[0];
  const U on = args.inputs[1].as<U>()[1];
  U* dst = out.as<U>();
  args.pool.parallel_chunks(out.numel(), kCopyChunk, [&](int64_t begin, int64_t end) {
    for_each_row_piece(begin, end, inner,
                       [&](int64_t row, int64_t col, int64_t count, int64_t flat) {
                         const int64_t o = row / depth, d = row % depth;
                         const I* line = idx + o * inner + col;
                         for (int64_t c = 0; c < count; ++c)
                           dst[flat + c] = one_hot_class(line[c], depth) == d ? on : off;
                       });
  });
}

// ---- Trilu ---------------------------------------------------------------------------------

// Row i of a [rows, cols] matrix keeps columns [lo, hi); the rest become zero bits (0, 0.0,
// false for every dtype).
template <class U>
void trilu(const KernelArgs& args) {
  const ConstTensorView& x = args.inputs[0];
  const TensorView& out = args.outputs[0];
  const int rank = x.shape.rank();
  const int64_t rows = x.shape[rank - 2];
  const int64_t cols = x.shape[rank - 1];
  const bool upper = args.attrs.get_int("upper") != 0;
  // |k| beyond rows + cols keeps or drops everything; clamping avoids overflow below.
  const int64_t k = std::clamp<int64_t>(args.attrs.get_int("k"), -(rows + cols), rows + cols);
  const U* src = x.as<U>();
  U* dst = out.as<U>();
  const bool in_place = out.data == x.data;
  args.pool.parallel_chunks(out.numel(), kCopyChunk, [&](int64_t begin, int64_t end) {
    for_each_row_piece(begin, end, cols,
                       [&](int64_t row, int64_t col, int64_t count, int64_t flat) {
                         const int64_t i = row % rows;
                         const int64_t lo = upper ? std::clamp<int64_t>(i + k, 0, cols) : 0;
                         const int64_t hi = upper ? cols : std::clamp<int64_t>(i + k + 1, 0, cols);
                         for (int64_t c = col; c < col + count; ++c) {
                           const bool keep = c >= lo && c < hi;
                           if (!keep) {
                             dst[flat + c - col] = U{0};
                           } else if (!in_place) {
                             dst[flat + c - col] = src[flat + c - col];
                           }
                         }
                       });
  });
}

// ---- Selection -----------------------------------------------------------------------------

// Kernels on element bits (gathers, OneHot's values, Trilu) are chosen by element size;
// the index operand by its own dtype.
template <class U, class I>
const CpuKernel& gather_elements_kernel() {
  static const CpuKernel kKernel{&gather_elements<U, I>,
                                 element_size_prefix<U>() + "_gatherelements_" +
                                     std::string(dtype_name(dtype_of<I>())) + "_indices"};
  return kKernel;
}
template <class U, class I>
const CpuKernel& gather_nd_kernel() {
  static const CpuKernel kKernel{&gather_nd<U, I>, element_size_prefix<U>() + "_gathernd_" +
                                                       std::string(dtype_name(dtype_of<I>())) +
                                                       "_indices_memcpy_slices"};
  return kKernel;
}
template <class T, class I>
const CpuKernel& scatter_elements_kernel() {
  static const CpuKernel kKernel{&scatter_elements<T, I>,
                                 std::string(dtype_name(dtype_of<T>())) + "_scatterelements_" +
                                     std::string(dtype_name(dtype_of<I>())) + "_indices_by_line"};
  return kKernel;
}
template <class T, class I>
const CpuKernel& scatter_nd_kernel() {
  static const CpuKernel kKernel{&scatter_nd<T, I>,
                                 std::string(dtype_name(dtype_of<T>())) + "_scatternd_" +
                                     std::string(dtype_name(dtype_of<I>())) + "_indices_by_column"};
  return kKernel;
}

KernelUnsupported bad_index_type(const Node& node, DType index_type) {
  return {std::string(op_name(node.op)) + " indices must be i32 or i64, got " +
          std::string(dtype_name(index_type))};
}

KernelSelection select_gather_elements(const KernelQuery& q) {
  const DType index_type = q.inputs[1]->dtype;
  if (!kIndexTypes.contains(index_type)) return bad_index_type(q.node, index_type);
  return visit_element_size(q.outputs[0].dtype, [&](auto tag) -> KernelSelection {
    using U = typename decltype(tag)::type;
    return choice_of(index_type == DType::I32 ? gather_elements_kernel<U, int32_t>()
                                              : gather_elements_kernel<U, int64_t>());
  });
}

KernelSelection select_gather_nd(const KernelQuery& q) {
  const DType index_type = q.inputs[1]->dtype;
  if (!kIndexTypes.contains(index_type)) return bad_index_type(q.node, index_type);
  const int64_t offsets_bytes = tuple_count(q.inputs[1]->shape) * 8;
  return visit_element_size(q.outputs[0].dtype, [&](auto tag) -> KernelSelection {
    using U = typename decltype(tag)::type;
    return choice_of(
        index_type == DType::I32 ? gather_nd_kernel<U, int32_t>() : gather_nd_kernel<U, int64_t>(),
        offsets_bytes);
  });
}

template <bool Nd>
KernelSelection select_scatter(const KernelQuery& q) {
  const DType index_type = q.inputs[1]->dtype;
  if (!kIndexTypes.contains(index_type)) return bad_index_type(q.node, index_type);
  return visit_dtype(q.outputs[0].dtype, [&](auto tag) -> KernelSelection {
    using T = typename decltype(tag)::type;
    if constexpr (Nd) {
      return choice_of(index_type == DType::I32 ? scatter_nd_kernel<T, int32_t>()
                                                : scatter_nd_kernel<T, int64_t>(),
                       tuple_count(q.inputs[1]->shape) * 8);
    } else {
      return choice_of(index_type == DType::I32 ? scatter_elements_kernel<T, int32_t>()
                                                : scatter_elements_kernel<T, int64_t>());
    }
  });
}

template <class T>
struct TopKKernel {
  static void run(const KernelArgs& args) { top_k<T>(args); }
};

const DTypeKernels& top_k_kernels() {
  static const DTypeKernels kKernels = kernels_for<TopKKernel>(
      ConcatTypes<NumericTypes, NarrowIntegerTypes>{}, "topk_stable_partial_sort");
  return kKernels;
}

KernelSelection select_top_k(const KernelQuery& q) {
  const TypeInfo& x = *q.inputs[0];
  const int axis =
      x.shape.rank() > 0 ? checked_axis(AttrReader(q.node).get_int("axis"), x.shape.rank()) : 0;
  const int64_t n = x.shape.rank() > 0 ? x.shape[axis] : 0;
  const int64_t bytes = top_k_scratch(n, static_cast<int64_t>(dtype_size(x.dtype))).bytes;
  return with_scratch(select_by_dtype(top_k_kernels(), q.node, x.dtype), 0, bytes);
}

template <class U, class I>
const CpuKernel& one_hot_kernel() {
  static const CpuKernel kKernel{
      &one_hot<U, I>,
      element_size_prefix<U>() + "_onehot_" + std::string(dtype_name(dtype_of<I>())) + "_indices"};
  return kKernel;
}

KernelSelection select_one_hot(const KernelQuery& q) {
  const DType index_type = q.inputs[0]->dtype;
  if (!kNumericTypes.contains(index_type)) {
    return KernelUnsupported{"OneHot indices must be f32, f64, i32 or i64, got " +
                             std::string(dtype_name(index_type))};
  }
  return visit_element_size(q.outputs[0].dtype, [&](auto tag) -> KernelSelection {
    using U = typename decltype(tag)::type;
    if (index_type == DType::F32) return choice_of(one_hot_kernel<U, float>());
    if (index_type == DType::F64) return choice_of(one_hot_kernel<U, double>());
    if (index_type == DType::I32) return choice_of(one_hot_kernel<U, int32_t>());
    return choice_of(one_hot_kernel<U, int64_t>());
  });
}

KernelSelection select_trilu(const KernelQuery& q) {
  return visit_element_size(q.outputs[0].dtype, [&](auto tag) -> KernelSelection {
    using U = typename decltype(tag)::type;
    static const CpuKernel kKernel{&trilu<U>, element_size_prefix<U>() + "_trilu_rows"};
    return choice_of(kKernel);
  });
}

}  // namespace

void register_indexing_kernels(KernelTable& table) {
  auto add = [&](OpKind op, KernelSelector select) {
    table[static_cast<size_t>(op_index(op))] = {select, op_schema(op).type_params[0].allowed,
                                                KernelDeterminism::BitExact};
  };
  add(OpKind::GatherElements, &select_gather_elements);
  add(OpKind::GatherND, &select_gather_nd);
  add(OpKind::ScatterElements, &select_scatter<false>);
  add(OpKind::ScatterND, &select_scatter<true>);
  add(OpKind::TopK, &select_top_k);
  add(OpKind::OneHot, &select_one_hot);
  add(OpKind::Trilu, &select_trilu);
}

}  // namespace volta::cpu
