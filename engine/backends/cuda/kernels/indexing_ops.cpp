// The indexing family on the CUDA backend: GatherElements, GatherND, ScatterElements and
// ScatterND (every dtype, i32 or i64 indices, data of rank <= kMaxIndexRank), Trilu and OneHot
// (every dtype) and TopK (f32, f64, i32, i64). Indices are checked on the device before
// anything is read through them, and the first bad one fails the run in the CPU's words. The
// scatters apply updates in the CPU's order, per line or slice column; reduction "none" with
// long runs of updates finds each element's last update by an integer atomicMax instead.
// Selection, launch and claims; the device code is kernels/indexing.cu.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "../cuda_kernel.h"
#include "../indexing_geometry.h"
#include "launch.h"

namespace volta::cuda {
namespace {

inline constexpr DTypeSet kNumeric{DType::F32, DType::F64, DType::I32, DType::I64};

int element_bytes(DType dtype) { return static_cast<int>(dtype_size(dtype)); }
int index_bytes(const ConstTensorView& indices) { return element_bytes(indices.dtype); }

// "x8", "x32", "x64": the slot of a dtype's element size in a kernel table.
size_t size_slot(DType dtype) {
  const size_t bytes = dtype_size(dtype);
  return bytes == 1 ? 0 : (bytes == 4 ? 1 : 2);
}
size_t index_slot(DType index_type) { return index_type == DType::I32 ? 0 : 1; }

int checked_axis(int64_t axis, int rank) {
  const std::optional<int> a = normalize_axis(axis, rank);
  if (!a) {
    fail(ErrorCode::KernelFailure,
         "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  }
  return *a;
}

// ---- Index checks ----

// The CPU's index_fail for the first bad index the device found: its value, its position in
// indices and the data axis it indexes.
void check_tuples(const CudaKernelArgs& args, const ConstTensorView& indices,
                  const IndexTuples& tuples, int first_axis) {
  if (tuples.tuples * tuples.k == 0) return;
  const std::optional<int64_t> bad = first_flagged(args, [&](unsigned long long* word) {
    return launch_find_bad_tuple_index(index_bytes(indices), tuples, indices.data, word,
                                       args.stream);
  });
  if (!bad) return;
  const int64_t p = *bad;
  int64_t value = 0;
  if (index_bytes(indices) == 4) {
    int32_t v = 0;
    copy_to_host_now(&v, static_cast<const int32_t*>(indices.data) + p, sizeof v, args);
    value = v;
  } else {
    copy_to_host_now(&value, static_cast<const int64_t*>(indices.data) + p, sizeof value, args);
  }
  std::vector<int64_t> position(static_cast<size_t>(indices.shape.rank()));
  for (int64_t rest = p, a = indices.shape.rank() - 1; a >= 0; --a) {
    position[static_cast<size_t>(a)] = rest % indices.shape[static_cast<int>(a)];
    rest /= indices.shape[static_cast<int>(a)];
  }
  const int64_t dim = tuples.dims[p % tuples.k];
  fail(ErrorCode::KernelFailure, "index " + std::to_string(value) + " at indices position " +
                                     Shape(position).str() + " is out of range for data axis " +
                                     std::to_string(first_axis + p % tuples.k) + " of size " +
                                     std::to_string(dim) + " (valid: [" + std::to_string(-dim) +
                                     ", " + std::to_string(dim - 1) + "])");
}

std::optional<KernelUnsupported> refuse_index_type(const CudaKernelQuery& query, int operand) {
  const DType index_type = query.inputs[static_cast<size_t>(operand)]->dtype;
  if (kIndexTypes.contains(index_type)) return std::nullopt;
  return KernelUnsupported{std::string(op_name(query.node.op)) +
                           " indices must be i32 or i64, got " +
                           std::string(dtype_name(index_type))};
}

std::optional<KernelUnsupported> refuse_rank(const CudaKernelQuery& query) {
  const int rank = query.inputs[0]->shape.rank();
  if (rank <= kMaxIndexRank) return std::nullopt;
  return KernelUnsupported{std::string(op_name(query.node.op)) + " of data " +
                           query.inputs[0]->shape.str() + " (rank " + std::to_string(rank) +
                           "): the CUDA kernel takes data of rank at most " +
                           std::to_string(kMaxIndexRank)};
}

// A kernel with the check word as its workspace.
KernelSelection checked_choice(const CudaKernel& kernel) {
  return choice_of(kernel, kCheckWorkspaceBytes);
}

// ---- GatherElements and ScatterElements ----

// Checks the indices against the axis; returns the geometry.
ElementsGeometry checked_elements(const CudaKernelArgs& args) {
  const ConstTensorView& data = args.inputs[0];
  const ConstTensorView& indices = args.inputs[1];
  const int axis = checked_axis(AttrReader(args.node).get_int("axis"), data.shape.rank());
  const ElementsGeometry g = elements_geometry(data.shape, indices.shape, axis);
  check_tuples(args, indices, axis_tuples(g), axis);
  return g;
}

void gather_elements(const CudaKernelArgs& args) {
  const ElementsGeometry g = checked_elements(args);
  if (g.numel == 0) return;
  check_launch(launch_gather_elements(element_bytes(args.inputs[0].dtype),
                                      index_bytes(args.inputs[1]), g, args.inputs[0].data,
                                      args.inputs[1].data, args.outputs[0].data, args.stream),
               args.node);
}

// ---- GatherND and ScatterND ----

void gather_nd(const CudaKernelArgs& args) {
  const ConstTensorView& data = args.inputs[0];
  const ConstTensorView& indices = args.inputs[1];
  const int b = static_cast<int>(AttrReader(args.node).get_int("batch_dims"));
  const IndexTuples t = nd_tuples(data.shape, indices.shape, b);
  check_tuples(args, indices, t, b);
  if (t.tuples * t.slice == 0) return;
  check_launch(launch_gather_nd(element_bytes(data.dtype), index_bytes(indices), t, data.data,
                                indices.data, args.outputs[0].data, args.stream),
               args.node);
}

// ---- Scatters ----

ScatterReduction reduction_of(const Node& node) {
  const std::string& r = AttrReader(node).get_string("reduction");
  if (r == "none") return ScatterReduction::None;
  if (r == "add") return ScatterReduction::Add;
  if (r == "mul") return ScatterReduction::Mul;
  if (r == "max") return ScatterReduction::Max;
  if (r == "min") return ScatterReduction::Min;
  fail(ErrorCode::KernelFailure, "reduction \"" + r +
                                     "\" is not supported (supported: \"none\", \"add\", "
                                     "\"mul\", \"max\", \"min\")");
}

// The CPU's unaliased: the planner never lets the output (which may be data's buffer) share
// bytes with indices or updates; a scatter reading what it overwrites would be wrong on both.
void check_unaliased(const CudaKernelArgs& args, const ConstTensorView& in,
                     std::string_view operand) {
  const TensorView& out = args.outputs[0];
  const auto in_begin = reinterpret_cast<uintptr_t>(in.data);
  const auto out_begin = reinterpret_cast<uintptr_t>(out.data);
  const auto in_end = in_begin + static_cast<uintptr_t>(in.numel()) * dtype_size(in.dtype);
  const auto out_end = out_begin + static_cast<uintptr_t>(out.numel()) * dtype_size(out.dtype);
  if (in_begin == in_end || out_begin == out_end || in_end <= out_begin || out_end <= in_begin) {
    return;
  }
  fail(ErrorCode::KernelFailure, std::string(op_name(args.node.op)) + " node '" + args.node.name +
                                     "': " + std::string(operand) +
                                     " share bytes with the output, which the memory planner "
                                     "never plans");
}

// The output starts as data; with Aliasing::InPlaceInput0 it may already be data's buffer.
void copy_data(const CudaKernelArgs& args) {
  const ConstTensorView& data = args.inputs[0];
  const TensorView& out = args.outputs[0];
  if (out.data == data.data || data.numel() == 0) return;
  check_launch(cudaMemcpyAsync(out.data, data.data,
                               static_cast<size_t>(data.numel()) * dtype_size(data.dtype),
                               cudaMemcpyDeviceToDevice, args.stream),
               args.node);
}

// Slots of the last-writer table when reduction "none" goes by last writer (a thread would
// otherwise apply more than kSerialScatterUpdates updates in a row), else 0. Selection and
// launch both ask, so the workspace declared is the one used.
int64_t last_writer_slots(const Node& node, const Shape& data, const Shape& indices) {
  const AttrReader attrs(node);
  if (attrs.get_string("reduction") != "none" || indices.numel() == 0) return 0;
  if (node.op == OpKind::ScatterElements) {
    const int axis = checked_axis(attrs.get_int("axis"), data.rank());
    return indices[axis] > kSerialScatterUpdates ? data.numel() : 0;
  }
  const IndexTuples t = nd_tuples(data, indices, 0);
  return t.tuples > kSerialScatterUpdates && t.slice > 0 ? data.numel() / t.slice : 0;
}

long long* last_writer_table(const CudaKernelArgs& args) {
  return reinterpret_cast<long long*>(static_cast<std::byte*>(args.workspace.data) +
                                      kCheckWorkspaceBytes);
}

void scatter_elements(const CudaKernelArgs& args) {
  const ScatterReduction reduction = reduction_of(args.node);
  const ElementsGeometry g = checked_elements(args);
  check_unaliased(args, args.inputs[1], "indices");
  check_unaliased(args, args.inputs[2], "updates");
  copy_data(args);
  if (g.numel == 0) return;
  const ConstTensorView& data = args.inputs[0];
  const int64_t slots = last_writer_slots(args.node, data.shape, args.inputs[1].shape);
  if (slots > 0) {
    check_launch(
        launch_scatter_elements_last_writer(
            element_bytes(data.dtype), index_bytes(args.inputs[1]), g, args.inputs[1].data,
            args.inputs[2].data, args.outputs[0].data, last_writer_table(args), slots, args.stream),
        args.node);
    return;
  }
  check_launch(launch_scatter_elements(element_type(data.dtype), index_bytes(args.inputs[1]),
                                       reduction, g, args.inputs[1].data, args.inputs[2].data,
                                       args.outputs[0].data, args.stream),
               args.node);
}

void scatter_nd(const CudaKernelArgs& args) {
  const ScatterReduction reduction = reduction_of(args.node);
  const ConstTensorView& data = args.inputs[0];
  const ConstTensorView& indices = args.inputs[1];
  const IndexTuples t = nd_tuples(data.shape, indices.shape, 0);
  check_tuples(args, indices, t, 0);
  check_unaliased(args, indices, "indices");
  check_unaliased(args, args.inputs[2], "updates");
  copy_data(args);
  if (t.tuples * t.slice == 0) return;
  const int64_t slots = last_writer_slots(args.node, data.shape, indices.shape);
  if (slots > 0) {
    check_launch(
        launch_scatter_nd_last_writer(element_bytes(data.dtype), index_bytes(indices), t,
                                      indices.data, args.inputs[2].data, args.outputs[0].data,
                                      last_writer_table(args), slots, args.stream),
        args.node);
    return;
  }
  check_launch(
      launch_scatter_nd(element_type(data.dtype), index_bytes(indices), reduction, t, indices.data,
                        args.inputs[2].data, args.outputs[0].data, args.stream),
      args.node);
}

// ---- Trilu, OneHot, TopK ----

void trilu(const CudaKernelArgs& args) {
  const ConstTensorView& x = args.inputs[0];
  const AttrReader attrs(args.node);
  const TriluGeometry g = trilu_geometry(x.shape, attrs.get_int("upper") != 0, attrs.get_int("k"));
  if (g.numel == 0) return;
  check_launch(launch_trilu(element_bytes(x.dtype), g, x.data, args.outputs[0].data, args.stream),
               args.node);
}

void one_hot(const CudaKernelArgs& args) {
  const TensorView& out = args.outputs[0];
  const int axis = checked_axis(AttrReader(args.node).get_int("axis"), out.shape.rank());
  const OneHotGeometry g = one_hot_geometry(out.shape, axis);
  if (g.numel == 0) return;
  check_launch(launch_one_hot(element_bytes(out.dtype), element_type(args.inputs[0].dtype), g,
                              args.inputs[0].data, args.inputs[1].data, out.data, args.stream),
               args.node);
}

void top_k(const CudaKernelArgs& args) {
  const ConstTensorView& x = args.inputs[0];
  const AttrReader attrs(args.node);
  const int axis = checked_axis(attrs.get_int("axis"), x.shape.rank());
  const TopKGeometry g =
      top_k_geometry(x.shape, axis, args.outputs[0].shape[axis], attrs.get_int("largest") != 0);
  if (g.k == 0 || g.rows == 0) return;
  check_launch(launch_top_k(element_type(x.dtype), g, x.data, args.outputs[0].data,
                            static_cast<int64_t*>(args.outputs[1].data), args.stream),
               args.node);
}

// ---- Kernels and selection ----

// By element size (x8, x32, x64), then index type (i32, i64).
constexpr CudaKernel kGatherElements[3][2] = {
    {{gather_elements, "x8_gatherelements_i32_indices_cuda", true},
     {gather_elements, "x8_gatherelements_i64_indices_cuda", true}},
    {{gather_elements, "x32_gatherelements_i32_indices_cuda", true},
     {gather_elements, "x32_gatherelements_i64_indices_cuda", true}},
    {{gather_elements, "x64_gatherelements_i32_indices_cuda", true},
     {gather_elements, "x64_gatherelements_i64_indices_cuda", true}}};
constexpr CudaKernel kGatherNd[3][2] = {{{gather_nd, "x8_gathernd_i32_indices_cuda", true},
                                         {gather_nd, "x8_gathernd_i64_indices_cuda", true}},
                                        {{gather_nd, "x32_gathernd_i32_indices_cuda", true},
                                         {gather_nd, "x32_gathernd_i64_indices_cuda", true}},
                                        {{gather_nd, "x64_gathernd_i32_indices_cuda", true},
                                         {gather_nd, "x64_gathernd_i64_indices_cuda", true}}};

// By dtype (ElementType order: f32, f64, i32, i64, bool), then index type.
constexpr CudaKernel kScatterElements[5][2] = {
    {{scatter_elements, "f32_scatterelements_i32_indices_cuda_by_line", true},
     {scatter_elements, "f32_scatterelements_i64_indices_cuda_by_line", true}},
    {{scatter_elements, "f64_scatterelements_i32_indices_cuda_by_line", true},
     {scatter_elements, "f64_scatterelements_i64_indices_cuda_by_line", true}},
    {{scatter_elements, "i32_scatterelements_i32_indices_cuda_by_line", true},
     {scatter_elements, "i32_scatterelements_i64_indices_cuda_by_line", true}},
    {{scatter_elements, "i64_scatterelements_i32_indices_cuda_by_line", true},
     {scatter_elements, "i64_scatterelements_i64_indices_cuda_by_line", true}},
    {{scatter_elements, "bool_scatterelements_i32_indices_cuda_by_line", true},
     {scatter_elements, "bool_scatterelements_i64_indices_cuda_by_line", true}}};
constexpr CudaKernel kScatterNd[5][2] = {
    {{scatter_nd, "f32_scatternd_i32_indices_cuda_by_column", true},
     {scatter_nd, "f32_scatternd_i64_indices_cuda_by_column", true}},
    {{scatter_nd, "f64_scatternd_i32_indices_cuda_by_column", true},
     {scatter_nd, "f64_scatternd_i64_indices_cuda_by_column", true}},
    {{scatter_nd, "i32_scatternd_i32_indices_cuda_by_column", true},
     {scatter_nd, "i32_scatternd_i64_indices_cuda_by_column", true}},
    {{scatter_nd, "i64_scatternd_i32_indices_cuda_by_column", true},
     {scatter_nd, "i64_scatternd_i64_indices_cuda_by_column", true}},
    {{scatter_nd, "bool_scatternd_i32_indices_cuda_by_column", true},
     {scatter_nd, "bool_scatternd_i64_indices_cuda_by_column", true}}};

// Reduction "none" by last writer: by element size (x8, x32, x64), then index type.
constexpr CudaKernel kScatterElementsLast[3][2] = {
    {{scatter_elements, "x8_scatterelements_i32_indices_cuda_last_writer", true},
     {scatter_elements, "x8_scatterelements_i64_indices_cuda_last_writer", true}},
    {{scatter_elements, "x32_scatterelements_i32_indices_cuda_last_writer", true},
     {scatter_elements, "x32_scatterelements_i64_indices_cuda_last_writer", true}},
    {{scatter_elements, "x64_scatterelements_i32_indices_cuda_last_writer", true},
     {scatter_elements, "x64_scatterelements_i64_indices_cuda_last_writer", true}}};
constexpr CudaKernel kScatterNdLast[3][2] = {
    {{scatter_nd, "x8_scatternd_i32_indices_cuda_last_writer", true},
     {scatter_nd, "x8_scatternd_i64_indices_cuda_last_writer", true}},
    {{scatter_nd, "x32_scatternd_i32_indices_cuda_last_writer", true},
     {scatter_nd, "x32_scatternd_i64_indices_cuda_last_writer", true}},
    {{scatter_nd, "x64_scatternd_i32_indices_cuda_last_writer", true},
     {scatter_nd, "x64_scatternd_i64_indices_cuda_last_writer", true}}};

constexpr CudaKernel kTrilu[3] = {
    {trilu, "x8_trilu_cuda"}, {trilu, "x32_trilu_cuda"}, {trilu, "x64_trilu_cuda"}};
// By value size, then index type (f32, f64, i32, i64).
constexpr CudaKernel kOneHot[3][4] = {{{one_hot, "x8_onehot_f32_indices_cuda"},
                                       {one_hot, "x8_onehot_f64_indices_cuda"},
                                       {one_hot, "x8_onehot_i32_indices_cuda"},
                                       {one_hot, "x8_onehot_i64_indices_cuda"}},
                                      {{one_hot, "x32_onehot_f32_indices_cuda"},
                                       {one_hot, "x32_onehot_f64_indices_cuda"},
                                       {one_hot, "x32_onehot_i32_indices_cuda"},
                                       {one_hot, "x32_onehot_i64_indices_cuda"}},
                                      {{one_hot, "x64_onehot_f32_indices_cuda"},
                                       {one_hot, "x64_onehot_f64_indices_cuda"},
                                       {one_hot, "x64_onehot_i32_indices_cuda"},
                                       {one_hot, "x64_onehot_i64_indices_cuda"}}};
constexpr CudaKernel kTopK[4] = {{top_k, "f32_topk_cuda_rank_count"},
                                 {top_k, "f64_topk_cuda_rank_count"},
                                 {top_k, "i32_topk_cuda_rank_count"},
                                 {top_k, "i64_topk_cuda_rank_count"}};

size_t type_slot(DType dtype) { return static_cast<size_t>(element_type(dtype)); }

KernelSelection select_gather_elements(const CudaKernelQuery& query) {
  if (auto refusal = refuse_index_type(query, 1)) return *refusal;
  if (auto refusal = refuse_rank(query)) return *refusal;
  return checked_choice(
      kGatherElements[size_slot(query.outputs[0].dtype)][index_slot(query.inputs[1]->dtype)]);
}

KernelSelection select_gather_nd(const CudaKernelQuery& query) {
  if (auto refusal = refuse_index_type(query, 1)) return *refusal;
  if (auto refusal = refuse_rank(query)) return *refusal;
  return checked_choice(
      kGatherNd[size_slot(query.outputs[0].dtype)][index_slot(query.inputs[1]->dtype)]);
}

template <const CudaKernel (*kByType)[2], const CudaKernel (*kLastBySize)[2]>
KernelSelection select_scatter(const CudaKernelQuery& query) {
  if (auto refusal = refuse_index_type(query, 1)) return *refusal;
  if (auto refusal = refuse_rank(query)) return *refusal;
  const DType dtype = query.outputs[0].dtype;
  const size_t index = index_slot(query.inputs[1]->dtype);
  const int64_t slots =
      last_writer_slots(query.node, query.inputs[0]->shape, query.inputs[1]->shape);
  if (slots > 0) {
    return choice_of(kLastBySize[size_slot(dtype)][index],
                     kCheckWorkspaceBytes + slots * static_cast<int64_t>(sizeof(long long)));
  }
  return checked_choice(kByType[type_slot(dtype)][index]);
}

KernelSelection select_trilu(const CudaKernelQuery& query) {
  return choice_of(kTrilu[size_slot(query.outputs[0].dtype)]);
}

KernelSelection select_one_hot(const CudaKernelQuery& query) {
  const DType index_type = query.inputs[0]->dtype;
  if (!kNumeric.contains(index_type)) {
    return KernelUnsupported{"OneHot indices must be f32, f64, i32 or i64, got " +
                             std::string(dtype_name(index_type))};
  }
  return choice_of(kOneHot[size_slot(query.outputs[0].dtype)][type_slot(index_type)]);
}

KernelSelection select_top_k(const CudaKernelQuery& query) {
  if (auto refusal = refuse_dtype(query, kNumeric)) return *refusal;
  return choice_of(kTopK[type_slot(query.inputs[0]->dtype)]);
}

using E = CrossBackendExactness;
const CudaOpKernels kOps[] = {
    {{OpKind::GatherElements, kCoreTypes, E::Bitwise,
      "element bytes copied; an out-of-range index fails the run as on the CPU, naming the "
      "first one"},
     select_gather_elements},
    {{OpKind::GatherND, kCoreTypes, E::Bitwise,
      "element bytes copied; an out-of-range index fails the run as on the CPU, naming the "
      "first one"},
     select_gather_nd},
    {{OpKind::ScatterElements, kCoreTypes, E::BitwiseExceptNanPayload,
      "data copied, then each line's updates applied in index order as on the CPU (one IEEE "
      "add or multiply each, integers wrapping); reduction none: the last of duplicate "
      "indices wins (long lines: found by an integer atomicMax)"},
     select_scatter<kScatterElements, kScatterElementsLast>},
    {{OpKind::ScatterND, kCoreTypes, E::BitwiseExceptNanPayload,
      "data copied, then every tuple's update applied to each slice column in index order as "
      "on the CPU (one IEEE add or multiply each, integers wrapping); reduction none: the last "
      "of duplicate tuples wins (many tuples: found by an integer atomicMax)"},
     select_scatter<kScatterNd, kScatterNdLast>},
    {{OpKind::TopK, kNumeric, E::Bitwise,
      "each element placed by its rank in the CPU's strict order (NaN first, equal values by "
      "index), which is unique; element bytes copied"},
     select_top_k},
    {{OpKind::OneHot, kCoreTypes, E::Bitwise,
      "the CPU's class test (float indices truncated in double), off / on bytes copied"},
     select_one_hot},
    {{OpKind::Trilu, kCoreTypes, E::Bitwise,
      "element bytes copied or zeroed by the CPU's column bounds"},
     select_trilu},
};

}  // namespace

std::span<const CudaOpKernels> indexing_op_kernels() { return kOps; }

}  // namespace volta::cuda
