// The movement family on the CUDA backend, every dtype (kernels by element size): the reshape
// family (Reshape Squeeze Unsqueeze Flatten Identity: nothing when the planner aliased the
// output to the input, else one device copy), Transpose Slice Expand (one strided-copy kernel,
// described as the CPU's strided-copy engine describes them), Concat Split (block copies) and
// Gather (indices checked before anything is copied, the first bad one reported as the CPU
// reports it). Selection, launch and claims; the device code is kernels/movement.cu.

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "../cuda_kernel.h"
#include "launch.h"
#include "volta/ir/op_helpers.h"

namespace volta::cuda {
namespace {

int element_bytes(DType dtype) { return static_cast<int>(dtype_size(dtype)); }

// "x8", "x32", "x64": the element-size prefix of a variant name, as on the CPU.
size_t size_slot(DType dtype) {
  const size_t bytes = dtype_size(dtype);
  return bytes == 1 ? 0 : (bytes == 4 ? 1 : 2);
}

int checked_axis(int64_t axis, int rank) {
  const std::optional<int> a = normalize_axis(axis, rank);
  if (!a) {
    fail(ErrorCode::KernelFailure, "axis " + std::to_string(axis) + " is out of range for rank " +
                                       std::to_string(rank) + " (valid: [" + std::to_string(-rank) +
                                       ", " + std::to_string(rank - 1) + "])");
  }
  return *a;
}

int64_t product(const Shape& shape, int first, int last) {
  int64_t p = 1;
  for (int a = first; a < last; ++a) p *= shape[a];
  return p;
}

// ---- The reshape family ----

// The output holds input 0's bytes in the same order; these ops declare
// Aliasing::ViewOfInput0, so when the planner gave the output the input's buffer there is
// nothing to do.
void view_or_copy(const CudaKernelArgs& args) {
  const ConstTensorView& in = args.inputs[0];
  const TensorView& out = args.outputs[0];
  if (out.data == in.data || out.numel() == 0) return;
  check_launch(
      cudaMemcpyAsync(out.data, in.data, static_cast<size_t>(out.numel()) * dtype_size(out.dtype),
                      cudaMemcpyDeviceToDevice, args.stream),
      args.node);
}

template <OpKind kOp>
KernelSelection select_view(const CudaKernelQuery&) {
  static const std::string kName = [] {
    std::string name(op_name(kOp));
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return name + "_alias_or_copy_cuda";
  }();
  static const CudaKernel kKernel{view_or_copy, kName};
  return choice_of(kKernel);
}

// ---- Transpose, Slice, Expand ----

struct CopyAxis {
  int64_t dim;
  int64_t src_stride;
};

// The CPU's description (movement_strided.cpp): output axes with the input stride each walks,
// and where output element 0 is read.
std::vector<CopyAxis> describe(OpKind op, const Node& node, const Shape& in, const Shape& out,
                               int64_t& offset) {
  const AttrReader attrs(node);
  const std::vector<int64_t> strides = in.strides();
  std::vector<CopyAxis> axes;
  if (op == OpKind::Transpose) {
    for (int p : resolve_perm(attrs, in.rank())) {
      axes.push_back({in[p], strides[static_cast<size_t>(p)]});
    }
  } else if (op == OpKind::Slice) {
    const std::vector<SliceRange> ranges = resolve_slice(attrs, in);
    for (size_t a = 0; a < ranges.size(); ++a) {
      axes.push_back({ranges[a].count, strides[a] * ranges[a].step});
      offset += ranges[a].start * strides[a];
    }
  } else {  // Expand
    const std::vector<int64_t> expanded = broadcast_strides(in, out);
    for (int a = 0; a < out.rank(); ++a) {
      axes.push_back({out[a], expanded[static_cast<size_t>(a)]});
    }
  }
  // Size-1 axes never move the read position; an axis continuing the next one merges into it.
  std::vector<CopyAxis> simple;
  for (const CopyAxis& a : axes) {
    if (a.dim == 1) continue;
    if (!simple.empty() && simple.back().src_stride == a.src_stride * a.dim) {
      simple.back() = {simple.back().dim * a.dim, a.src_stride};
    } else {
      simple.push_back(a);
    }
  }
  if (simple.empty()) simple.push_back({1, 1});
  return simple;
}

std::optional<StridedCopyGeometry> strided_geometry(OpKind op, const Node& node, const Shape& in,
                                                    const Shape& out, size_t& axes_needed) {
  StridedCopyGeometry g;
  const std::vector<CopyAxis> axes = describe(op, node, in, out, g.src_offset);
  axes_needed = axes.size();
  if (axes.size() > static_cast<size_t>(kMaxCopyAxes)) return std::nullopt;
  g.rank = static_cast<int>(axes.size());
  g.numel = out.numel();
  for (size_t a = 0; a < axes.size(); ++a) {
    g.dims[a] = axes[a].dim;
    g.src_strides[a] = axes[a].src_stride;
  }
  return g;
}

void strided_copy(const CudaKernelArgs& args) {
  const TensorView& out = args.outputs[0];
  if (out.numel() == 0) return;
  size_t axes = 0;
  const std::optional<StridedCopyGeometry> g =
      strided_geometry(args.node.op, args.node, args.inputs[0].shape, out.shape, axes);
  if (!g) fail(ErrorCode::KernelFailure, "the copy has more axes than its selection allowed");
  check_launch(
      launch_strided_copy(element_bytes(out.dtype), *g, args.inputs[0].data, out.data, args.stream),
      args.node);
}

constexpr CudaKernel kTranspose[] = {{strided_copy, "x8_transpose_cuda_strided"},
                                     {strided_copy, "x32_transpose_cuda_strided"},
                                     {strided_copy, "x64_transpose_cuda_strided"}};
constexpr CudaKernel kSlice[] = {{strided_copy, "x8_slice_cuda_strided"},
                                 {strided_copy, "x32_slice_cuda_strided"},
                                 {strided_copy, "x64_slice_cuda_strided"}};
constexpr CudaKernel kExpand[] = {{strided_copy, "x8_expand_cuda_strided"},
                                  {strided_copy, "x32_expand_cuda_strided"},
                                  {strided_copy, "x64_expand_cuda_strided"}};

template <const CudaKernel* kBySize>
KernelSelection select_strided(const CudaKernelQuery& query) {
  size_t axes = 0;
  if (!strided_geometry(query.node.op, query.node, query.inputs[0]->shape, query.outputs[0].shape,
                        axes)) {
    return KernelUnsupported{std::string(op_name(query.node.op)) + " of " +
                             query.inputs[0]->shape.str() + " walks " + std::to_string(axes) +
                             " axes that cannot be merged; the CUDA kernel takes at most " +
                             std::to_string(kMaxCopyAxes)};
  }
  return choice_of(kBySize[size_slot(query.outputs[0].dtype)]);
}

// ---- Concat and Split ----

// Both see their tensors as [outer, axis * inner]: along the axis each piece owns one
// contiguous segment of every row of the joined tensor.
void concat(const CudaKernelArgs& args) {
  const TensorView& out = args.outputs[0];
  if (out.numel() == 0) return;
  const int rank = out.shape.rank();
  const int axis = checked_axis(AttrReader(args.node).get_int("axis"), rank);
  const int64_t inner = product(out.shape, axis + 1, rank);
  const int64_t outer = product(out.shape, 0, axis);
  const int64_t row = out.shape[axis] * inner;
  int64_t start = 0;
  for (const ConstTensorView& in : args.inputs) {
    const int64_t segment = in.shape[axis] * inner;
    if (segment > 0) {
      const BlockCopy block{outer, segment, 0, segment, start, row};
      check_launch(
          launch_block_copy(element_bytes(out.dtype), block, in.data, out.data, args.stream),
          args.node);
    }
    start += segment;
  }
}

void split(const CudaKernelArgs& args) {
  const ConstTensorView& in = args.inputs[0];
  const int rank = in.shape.rank();
  const int axis = checked_axis(AttrReader(args.node).get_int("axis"), rank);
  const int64_t inner = product(in.shape, axis + 1, rank);
  const int64_t outer = product(in.shape, 0, axis);
  const int64_t row = in.shape[axis] * inner;
  int64_t start = 0;
  for (const TensorView& out : args.outputs) {
    const int64_t segment = out.shape[axis] * inner;
    if (segment > 0 && outer > 0) {
      const BlockCopy block{outer, segment, start, row, 0, segment};
      check_launch(
          launch_block_copy(element_bytes(in.dtype), block, in.data, out.data, args.stream),
          args.node);
    }
    start += segment;
  }
}

constexpr CudaKernel kConcat{concat, "concat_cuda_segments"};
constexpr CudaKernel kSplit{split, "split_cuda_segments"};

KernelSelection select_concat(const CudaKernelQuery&) { return choice_of(kConcat); }
KernelSelection select_split(const CudaKernelQuery&) { return choice_of(kSplit); }

// ---- Gather ----

// The CPU's check, with the CPU's words: the first index (in index order) outside
// [-dim, dim). The device finds its position; the run waits for that answer, so a bad index
// fails this node, before anything is gathered.
void check_indices(const CudaKernelArgs& args, int axis, int64_t dim) {
  const ConstTensorView& indices = args.inputs[1];
  const int64_t n = indices.numel();
  if (n == 0) return;
  const auto index_bytes = static_cast<int>(dtype_size(indices.dtype));
  const std::optional<int64_t> bad = first_flagged(args, [&](unsigned long long* word) {
    return launch_find_bad_index(index_bytes, indices.data, n, dim, word, args.stream);
  });
  if (!bad) return;
  const int64_t i = *bad;
  int64_t value = 0;
  if (index_bytes == 4) {
    int32_t v = 0;
    copy_to_host_now(&v, static_cast<const int32_t*>(indices.data) + i, sizeof v, args);
    value = v;
  } else {
    copy_to_host_now(&value, static_cast<const int64_t*>(indices.data) + i, sizeof value, args);
  }
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

void gather(const CudaKernelArgs& args) {
  const ConstTensorView& data = args.inputs[0];
  const ConstTensorView& indices = args.inputs[1];
  const TensorView& out = args.outputs[0];
  const int rank = data.shape.rank();
  const int axis = checked_axis(AttrReader(args.node).get_int("axis"), rank);
  const GatherGeometry g{product(data.shape, 0, axis), data.shape[axis], indices.numel(),
                         product(data.shape, axis + 1, rank)};
  check_indices(args, axis, g.dim);
  if (out.numel() == 0) return;
  check_launch(launch_gather(element_bytes(data.dtype), static_cast<int>(dtype_size(indices.dtype)),
                             g, data.data, indices.data, out.data, args.stream),
               args.node);
}

// By element size, then index type (i32, i64).
constexpr CudaKernel kGather[3][2] = {
    {{gather, "x8_gather_i32_indices_cuda", true}, {gather, "x8_gather_i64_indices_cuda", true}},
    {{gather, "x32_gather_i32_indices_cuda", true}, {gather, "x32_gather_i64_indices_cuda", true}},
    {{gather, "x64_gather_i32_indices_cuda", true}, {gather, "x64_gather_i64_indices_cuda", true}}};

KernelSelection select_gather(const CudaKernelQuery& query) {
  const DType index_type = query.inputs[1]->dtype;
  if (!kIndexTypes.contains(index_type)) {
    return KernelUnsupported{"Gather indices must be i32 or i64, got " +
                             std::string(dtype_name(index_type))};
  }
  KernelChoice choice =
      choice_of(kGather[size_slot(query.outputs[0].dtype)][index_type == DType::I32 ? 0 : 1]);
  choice.workspace_bytes = kCheckWorkspaceBytes;
  return choice;
}

using E = CrossBackendExactness;
constexpr std::string_view kCopies = "element bytes copied, NaN payloads included";
const CudaOpKernels kOps[] = {
    {{OpKind::Reshape, kCoreTypes, E::Bitwise, kCopies}, select_view<OpKind::Reshape>},
    {{OpKind::Transpose, kCoreTypes, E::Bitwise, kCopies}, select_strided<kTranspose>},
    {{OpKind::Concat, kCoreTypes, E::Bitwise, kCopies}, select_concat},
    {{OpKind::Split, kCoreTypes, E::Bitwise, kCopies}, select_split},
    {{OpKind::Slice, kCoreTypes, E::Bitwise, kCopies}, select_strided<kSlice>},
    {{OpKind::Gather, kCoreTypes, E::Bitwise,
      "element bytes copied; an out-of-range index fails the run as on the CPU, naming the "
      "first one"},
     select_gather},
    {{OpKind::Expand, kCoreTypes, E::Bitwise, kCopies}, select_strided<kExpand>},
    {{OpKind::Squeeze, kCoreTypes, E::Bitwise, kCopies}, select_view<OpKind::Squeeze>},
    {{OpKind::Unsqueeze, kCoreTypes, E::Bitwise, kCopies}, select_view<OpKind::Unsqueeze>},
    {{OpKind::Flatten, kCoreTypes, E::Bitwise, kCopies}, select_view<OpKind::Flatten>},
    {{OpKind::Identity, kCoreTypes, E::Bitwise, kCopies}, select_view<OpKind::Identity>},
};

}  // namespace

std::span<const CudaOpKernels> movement_op_kernels() { return kOps; }

}  // namespace volta::cuda
