// Data-movement kernels: the reshape family, Constant, Concat, Split and Gather. Transpose,
// Slice and Expand share the strided-copy engine in movement_strided.cpp. Every kernel
// splits its output into fixed chunks of kCopyChunk elements and only copies bytes, so
// results are bit-identical for any thread count and NaN payloads pass through unchanged.
// register_movement_kernels also registers the layout ops of movement_layout.cpp.

#include "movement.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace volta::cpu::movement {

std::string lowercase_op_name(OpKind op) {
  std::string name(op_name(op));
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return name;
}

namespace {

const std::byte* bytes_of(const ConstTensorView& v) {
  return static_cast<const std::byte*>(v.data);
}
std::byte* bytes_of(const TensorView& v) { return static_cast<std::byte*>(v.data); }

int64_t product(const Shape& shape, int first, int last) {
  int64_t p = 1;
  for (int a = first; a < last; ++a) p *= shape[a];
  return p;
}

// Axis attributes are checked by shape inference; this guards kernels run on a graph that
// skipped the verifier.
int checked_axis(int64_t axis, int rank) {
  const std::optional<int> a = normalize_axis(axis, rank);
  if (!a) {
    fail(ErrorCode::KernelFailure, "axis " + std::to_string(axis) + " is out of range for rank " +
                                       std::to_string(rank) + " (valid: [" + std::to_string(-rank) +
                                       ", " + std::to_string(rank - 1) + "])");
  }
  return *a;
}

// Copies `bytes` in fixed chunks, so large copies use every thread.
void parallel_memcpy(ThreadPool& pool, std::byte* dst, const std::byte* src, int64_t bytes) {
  pool.parallel_chunks(bytes, kMemcpyChunkBytes, [&](int64_t begin, int64_t end) {
    std::memcpy(dst + begin, src + begin, static_cast<size_t>(end - begin));
  });
}

// Reshape, Squeeze, Unsqueeze, Flatten, Identity: the output holds input 0's bytes in the
// same order. These ops declare Aliasing::ViewOfInput0, so when the planner gave the output
// the input's buffer there is nothing left to do.
void view_or_copy(const KernelArgs& args) {
  const ConstTensorView& in = args.inputs[0];
  const TensorView& out = args.outputs[0];
  if (out.data == in.data) return;
  parallel_memcpy(args.pool, bytes_of(out), bytes_of(in),
                  out.numel() * static_cast<int64_t>(dtype_size(out.dtype)));
}

void constant(const KernelArgs& args) {
  const Tensor& value = args.attrs.get_tensor("value");
  parallel_memcpy(args.pool, bytes_of(args.outputs[0]), static_cast<const std::byte*>(value.data()),
                  static_cast<int64_t>(value.nbytes()));
}

// Concat and Split see their tensors as [outer, axis * inner]: along the joined axis, each
// piece owns one contiguous segment of every output (Concat) or input (Split) row.
// segment_starts[k] is where piece k's segment begins within such a row, in elements.
std::vector<int64_t> segment_starts(const std::vector<int64_t>& axis_sizes, int64_t inner) {
  std::vector<int64_t> starts{0};
  for (int64_t size : axis_sizes) starts.push_back(starts.back() + size * inner);
  return starts;
}

void concat(const KernelArgs& args) {
  const TensorView& out = args.outputs[0];
  const int rank = out.shape.rank();
  const int axis = checked_axis(args.attrs.get_int("axis"), rank);
  const int64_t inner = product(out.shape, axis + 1, rank);
  std::vector<int64_t> axis_sizes;
  for (const ConstTensorView& in : args.inputs) axis_sizes.push_back(in.shape[axis]);
  const std::vector<int64_t> starts = segment_starts(axis_sizes, inner);
  const int64_t row_len = starts.back();
  const auto element = static_cast<int64_t>(dtype_size(out.dtype));

  args.pool.parallel_chunks(out.numel(), kCopyChunk, [&](int64_t begin, int64_t end) {
    for_each_row_piece(
        begin, end, row_len, [&](int64_t row, int64_t col, int64_t count, int64_t flat) {
          // The last input whose segment starts at or before `col`: empty inputs, whose
          // segments start where the next one does, are skipped.
          auto k = static_cast<size_t>(std::upper_bound(starts.begin(), starts.end(), col) -
                                       starts.begin() - 1);
          for (; count > 0; ++k) {
            const int64_t run = std::min(count, starts[k + 1] - col);
            if (run == 0) continue;
            const int64_t in_row_len = starts[k + 1] - starts[k];
            std::memcpy(bytes_of(out) + flat * element,
                        bytes_of(args.inputs[k]) + (row * in_row_len + col - starts[k]) * element,
                        static_cast<size_t>(run * element));
            col += run;
            flat += run;
            count -= run;
          }
        });
  });
}

void split(const KernelArgs& args) {
  const ConstTensorView& in = args.inputs[0];
  const int rank = in.shape.rank();
  const int axis = checked_axis(args.attrs.get_int("axis"), rank);
  const int64_t inner = product(in.shape, axis + 1, rank);
  std::vector<int64_t> axis_sizes;
  for (const TensorView& out : args.outputs) axis_sizes.push_back(out.shape[axis]);
  const std::vector<int64_t> starts = segment_starts(axis_sizes, inner);
  const int64_t in_row_len = starts.back();
  const auto element = static_cast<int64_t>(dtype_size(in.dtype));

  for (size_t k = 0; k < args.outputs.size(); ++k) {
    const TensorView& out = args.outputs[k];
    const int64_t out_row_len = starts[k + 1] - starts[k];
    args.pool.parallel_chunks(out.numel(), kCopyChunk, [&](int64_t begin, int64_t end) {
      for_each_row_piece(
          begin, end, out_row_len, [&](int64_t row, int64_t col, int64_t count, int64_t flat) {
            std::memcpy(bytes_of(out) + flat * element,
                        bytes_of(in) + (row * in_row_len + starts[k] + col) * element,
                        static_cast<size_t>(count * element));
          });
    });
  }
}

// Checked before anything is copied, in index order, so the error names the first bad index.
template <class I>
void check_gather_indices(const ConstTensorView& indices, int axis, int64_t dim) {
  const I* idx = indices.as<I>();
  for (int64_t i = 0; i < indices.numel(); ++i) {
    const int64_t value = idx[i];
    if (value >= -dim && value < dim) continue;
    std::vector<int64_t> position(static_cast<size_t>(indices.shape.rank()));
    for (int64_t rest = i, a = indices.shape.rank() - 1; a >= 0; --a) {
      position[static_cast<size_t>(a)] = rest % indices.shape[static_cast<int>(a)];
      rest /= indices.shape[static_cast<int>(a)];
    }
    fail(ErrorCode::KernelFailure, "index " + std::to_string(value) + " at indices position " +
                                       Shape(position).str() + " is out of range for data axis " +
                                       std::to_string(axis) + " of size " + std::to_string(dim) +
                                       " (valid: [" + std::to_string(-dim) + ", " +
                                       std::to_string(dim - 1) + "])");
  }
}

// Gather sees data as [outer, dim, inner] and the output as [outer, num_indices, inner]:
// output row (o, k) is data row (o, indices[k]), wrapped once if negative.
template <class U, class I>
void gather(const KernelArgs& args) {
  const ConstTensorView& data = args.inputs[0];
  const ConstTensorView& indices = args.inputs[1];
  const TensorView& out = args.outputs[0];
  const int rank = data.shape.rank();
  const int axis = checked_axis(args.attrs.get_int("axis"), rank);
  const int64_t dim = data.shape[axis];
  const int64_t inner = product(data.shape, axis + 1, rank);
  const int64_t num_indices = indices.numel();
  check_gather_indices<I>(indices, axis, dim);

  const U* src = data.as<U>();
  const I* idx = indices.as<I>();
  U* dst = out.as<U>();
  args.pool.parallel_chunks(out.numel(), kCopyChunk, [&](int64_t begin, int64_t end) {
    for_each_row_piece(
        begin, end, inner, [&](int64_t row, int64_t col, int64_t count, int64_t flat) {
          const int64_t outer = row / num_indices;
          const int64_t index = idx[row % num_indices];
          const int64_t data_row = outer * dim + (index < 0 ? index + dim : index);
          const U* from = src + data_row * inner + col;
          if (count == 1) {
            dst[flat] = *from;  // gathers along the innermost axis copy single elements
          } else {
            std::memcpy(dst + flat, from, static_cast<size_t>(count) * sizeof(U));
          }
        });
  });
}

template <class U, class I>
const CpuKernel& gather_kernel() {
  static const CpuKernel kKernel{
      &gather<U, I>,
      element_size_prefix<U>() + "_gather_" + std::string(dtype_name(dtype_of<I>())) + "_indices",
      KernelDeterminism::BitExact};
  return kKernel;
}

KernelSelection select_gather(const KernelQuery& query) {
  const DType index_type = query.inputs[1]->dtype;
  if (!kIndexTypes.contains(index_type)) {
    return KernelUnsupported{"Gather indices must be i32 or i64, got " +
                             std::string(dtype_name(index_type))};
  }
  return visit_element_size(query.outputs[0].dtype, [&](auto tag) {
    using U = typename decltype(tag)::type;
    return KernelSelection(choice_of(index_type == DType::I32 ? gather_kernel<U, int32_t>()
                                                              : gather_kernel<U, int64_t>()));
  });
}

// The reshape family moves the same bytes for every dtype: one kernel per op.
template <OpKind Op>
KernelSelection select_view(const KernelQuery&) {
  static const CpuKernel kKernel{&view_or_copy, lowercase_op_name(Op) + "_alias_or_memcpy"};
  return choice_of(kKernel);
}

KernelSelection select_constant(const KernelQuery&) {
  static const CpuKernel kKernel{&constant, "constant_memcpy"};
  return choice_of(kKernel);
}

KernelSelection select_concat(const KernelQuery&) {
  static const CpuKernel kKernel{&concat, "concat_memcpy_segments"};
  return choice_of(kKernel);
}

KernelSelection select_split(const KernelQuery&) {
  static const CpuKernel kKernel{&split, "split_memcpy_segments"};
  return choice_of(kKernel);
}

}  // namespace
}  // namespace volta::cpu::movement

namespace volta::cpu {

void register_movement_kernels(KernelTable& table) {
  auto add = [&](OpKind op, KernelSelector select) {
    table[static_cast<size_t>(op_index(op))] = {select, kAllTypes, KernelDeterminism::BitExact};
  };
  add(OpKind::Reshape, &movement::select_view<OpKind::Reshape>);
  add(OpKind::Squeeze, &movement::select_view<OpKind::Squeeze>);
  add(OpKind::Unsqueeze, &movement::select_view<OpKind::Unsqueeze>);
  add(OpKind::Flatten, &movement::select_view<OpKind::Flatten>);
  add(OpKind::Identity, &movement::select_view<OpKind::Identity>);
  add(OpKind::Constant, &movement::select_constant);
  add(OpKind::Concat, &movement::select_concat);
  add(OpKind::Split, &movement::select_split);
  add(OpKind::Gather, &movement::select_gather);
  add(OpKind::Transpose, &movement::select_strided_copy);
  add(OpKind::Slice, &movement::select_strided_copy);
  add(OpKind::Expand, &movement::select_strided_copy);
  register_movement_layout_kernels(table);
}

}  // namespace volta::cpu
