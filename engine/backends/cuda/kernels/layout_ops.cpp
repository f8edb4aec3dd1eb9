// The movement family's layout ops on the CUDA backend, every dtype (kernels by element size):
// Tile, Pad (constant, reflect, edge; negative pads crop), DepthToSpace (DCR, CRD), SpaceToDepth,
// ReverseSequence (its lengths checked before anything is copied, the first bad one reported as
// the CPU reports it) and Constant (the value attribute copied into the output). A second list
// of OpFamily::Movement beside movement_ops.cpp; the device code is kernels/layout.cu.

#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "../cuda_context.h"
#include "../cuda_kernel.h"
#include "launch.h"
#include "layout_launch.h"
#include "volta/ir/op_helpers.h"

namespace volta::cuda {

std::optional<LayoutAxes> layout_axes(const Node& node, const Shape& in, const Shape& out) {
  const bool pad = node.op == OpKind::Pad;
  const std::vector<int64_t> pads =
      pad ? AttrReader(node).get_ints("pads") : std::vector<int64_t>{};
  LayoutAxes g;
  g.numel = out.numel();
  const std::vector<int64_t> strides = in.strides();
  for (int a = 0; a < in.rank(); ++a) {
    if (!pad && out[a] == 1) continue;
    if (g.rank == kMaxLayoutRank) return std::nullopt;
    g.out_dims[g.rank] = out[a];
    g.in_dims[g.rank] = in[a];
    g.in_strides[g.rank] = strides[static_cast<size_t>(a)];
    g.before[g.rank] = pad ? pads[static_cast<size_t>(a)] : 0;
    ++g.rank;
  }
  return g;
}

PadMode pad_mode(const Node& node) {
  const std::string& mode = AttrReader(node).get_string("mode");
  if (mode == "reflect") return PadMode::Reflect;
  if (mode == "edge") return PadMode::Edge;
  return PadMode::Constant;
}

SpaceDepthOp space_depth_op(const Node& node) {
  if (node.op == OpKind::SpaceToDepth) return SpaceDepthOp::SpaceToDepth;
  return AttrReader(node).get_string("mode") == "CRD" ? SpaceDepthOp::DepthToSpaceCrd
                                                      : SpaceDepthOp::DepthToSpaceDcr;
}

SpaceDepthGeometry space_depth_geometry(const Node& node, const Shape& in, const Shape& out) {
  return {in[1],      in[2], in[3], out[1], out[2], out[3], AttrReader(node).get_int("blocksize"),
          out.numel()};
}

ReverseSequenceGeometry reverse_sequence_geometry(const Node& node, const Shape& in) {
  ReverseSequenceGeometry g;
  g.batch_first = AttrReader(node).get_int("batch_axis") == 0;
  g.d0 = in[0];
  g.d1 = in[1];
  for (int a = 2; a < in.rank(); ++a) g.inner *= in[a];
  return g;
}

namespace {

int element_bytes(DType dtype) { return static_cast<int>(dtype_size(dtype)); }

// The variant-name slot of an element size: x8, x32, x64.
size_t size_slot(DType dtype) {
  const size_t bytes = dtype_size(dtype);
  return bytes == 1 ? 0 : (bytes == 4 ? 1 : 2);
}

KernelUnsupported too_many_axes(OpKind op, const Shape& in) {
  return KernelUnsupported{std::string(op_name(op)) + " of " + in.str() + " walks " +
                           std::to_string(in.rank()) + " axes; the CUDA kernel takes at most " +
                           std::to_string(kMaxLayoutRank)};
}

// ---- Tile and Pad ----

void tile_or_pad(const CudaKernelArgs& args) {
  const ConstTensorView& x = args.inputs[0];
  const TensorView& out = args.outputs[0];
  if (out.numel() == 0) return;
  const std::optional<LayoutAxes> g = layout_axes(args.node, x.shape, out.shape);
  if (!g) fail(ErrorCode::KernelFailure, "the copy has more axes than its selection allowed");
  const int bytes = element_bytes(out.dtype);
  if (args.node.op == OpKind::Tile) {
    check_launch(launch_tile(bytes, *g, x.data, out.data, args.stream), args.node);
    return;
  }
  const void* value = args.inputs.size() > 1 ? args.inputs[1].data : nullptr;
  check_launch(launch_pad(bytes, pad_mode(args.node), *g, x.data, value, out.data, args.stream),
               args.node);
}

constexpr CudaKernel kTile[] = {
    {tile_or_pad, "x8_tile_cuda"}, {tile_or_pad, "x32_tile_cuda"}, {tile_or_pad, "x64_tile_cuda"}};
constexpr CudaKernel kPad[] = {
    {tile_or_pad, "x8_pad_cuda"}, {tile_or_pad, "x32_pad_cuda"}, {tile_or_pad, "x64_pad_cuda"}};

template <const CudaKernel* kBySize>
KernelSelection select_tile_or_pad(const CudaKernelQuery& query) {
  const AttrReader attrs(query.node);
  const Shape& in = query.inputs[0]->shape;
  if (query.node.op == OpKind::Pad) {
    const std::string& mode = attrs.get_string("mode");
    if (mode != "constant" && mode != "reflect" && mode != "edge") {
      return KernelUnsupported{"Pad mode \"" + mode +
                               "\" has no CUDA kernel (supported: \"constant\", \"reflect\", "
                               "\"edge\")"};
    }
  }
  if (!layout_axes(query.node, in, query.outputs[0].shape)) {
    return too_many_axes(query.node.op, in);
  }
  return choice_of(kBySize[size_slot(query.outputs[0].dtype)]);
}

// ---- DepthToSpace and SpaceToDepth ----

void space_depth(const CudaKernelArgs& args) {
  const TensorView& out = args.outputs[0];
  if (out.numel() == 0) return;
  check_launch(launch_space_depth(element_bytes(out.dtype), space_depth_op(args.node),
                                  space_depth_geometry(args.node, args.inputs[0].shape, out.shape),
                                  args.inputs[0].data, out.data, args.stream),
               args.node);
}

// By mode (DCR, CRD), then element size.
constexpr CudaKernel kDepthToSpace[2][3] = {{{space_depth, "x8_depthtospace_dcr_cuda"},
                                             {space_depth, "x32_depthtospace_dcr_cuda"},
                                             {space_depth, "x64_depthtospace_dcr_cuda"}},
                                            {{space_depth, "x8_depthtospace_crd_cuda"},
                                             {space_depth, "x32_depthtospace_crd_cuda"},
                                             {space_depth, "x64_depthtospace_crd_cuda"}}};
constexpr CudaKernel kSpaceToDepth[] = {{space_depth, "x8_spacetodepth_cuda"},
                                        {space_depth, "x32_spacetodepth_cuda"},
                                        {space_depth, "x64_spacetodepth_cuda"}};

KernelSelection select_depth_to_space(const CudaKernelQuery& query) {
  const std::string& mode = AttrReader(query.node).get_string("mode");
  if (mode != "DCR" && mode != "CRD") {
    return KernelUnsupported{"DepthToSpace mode \"" + mode +
                             "\" has no CUDA kernel (supported: \"DCR\", \"CRD\")"};
  }
  return choice_of(kDepthToSpace[mode == "CRD" ? 1 : 0][size_slot(query.outputs[0].dtype)]);
}

KernelSelection select_space_to_depth(const CudaKernelQuery& query) {
  return choice_of(kSpaceToDepth[size_slot(query.outputs[0].dtype)]);
}

// ---- ReverseSequence ----

// The CPU's check in its words: the first length (in batch order) outside [0, steps]. The
// device finds its position; the run waits for it, so a bad length fails this node before
// anything is copied.
void check_lengths(const CudaKernelArgs& args, int time_axis, int64_t steps) {
  const ConstTensorView& lens = args.inputs[1];
  const int64_t n = lens.numel();
  if (n == 0) return;
  const auto length_bytes = static_cast<int>(dtype_size(lens.dtype));
  const std::optional<int64_t> bad = first_flagged(args, [&](unsigned long long* word) {
    return launch_find_bad_length(length_bytes, lens.data, n, steps, word, args.stream);
  });
  if (!bad) return;
  int64_t value = 0;
  if (length_bytes == 4) {
    int32_t v = 0;
    copy_to_host_now(&v, static_cast<const int32_t*>(lens.data) + *bad, sizeof v, args);
    value = v;
  } else {
    copy_to_host_now(&value, static_cast<const int64_t*>(lens.data) + *bad, sizeof value, args);
  }
  fail(ErrorCode::KernelFailure,
       "sequence_lens[" + std::to_string(*bad) + "] = " + std::to_string(value) +
           " is out of range for time axis " + std::to_string(time_axis) + " of size " +
           std::to_string(steps) + " (valid: [0, " + std::to_string(steps) + "])");
}

void reverse_sequence(const CudaKernelArgs& args) {
  const ConstTensorView& x = args.inputs[0];
  const TensorView& out = args.outputs[0];
  const ReverseSequenceGeometry g = reverse_sequence_geometry(args.node, x.shape);
  const int time_axis = g.batch_first ? 1 : 0;
  check_lengths(args, time_axis, x.shape[time_axis]);
  if (out.numel() == 0) return;
  check_launch(launch_reverse_sequence(element_bytes(out.dtype),
                                       static_cast<int>(dtype_size(args.inputs[1].dtype)), g,
                                       x.data, args.inputs[1].data, out.data, args.stream),
               args.node);
}

// By element size, then length type (i32, i64).
constexpr CudaKernel kReverseSequence[3][2] = {
    {{reverse_sequence, "x8_reversesequence_i32_lens_cuda", true},
     {reverse_sequence, "x8_reversesequence_i64_lens_cuda", true}},
    {{reverse_sequence, "x32_reversesequence_i32_lens_cuda", true},
     {reverse_sequence, "x32_reversesequence_i64_lens_cuda", true}},
    {{reverse_sequence, "x64_reversesequence_i32_lens_cuda", true},
     {reverse_sequence, "x64_reversesequence_i64_lens_cuda", true}}};

KernelSelection select_reverse_sequence(const CudaKernelQuery& query) {
  const DType length_type = query.inputs[1]->dtype;
  if (!kIndexTypes.contains(length_type)) {
    return KernelUnsupported{"ReverseSequence sequence_lens must be i32 or i64, got " +
                             std::string(dtype_name(length_type))};
  }
  KernelChoice choice = choice_of(
      kReverseSequence[size_slot(query.outputs[0].dtype)][length_type == DType::I32 ? 0 : 1]);
  choice.workspace_bytes = kCheckWorkspaceBytes;
  return choice;
}

// ---- Constant ----

// The value attribute's bytes copied from the host into the output, on the run's stream and
// counted by the context (a host-to-device copy each run, like an input's; nothing allocated).
void constant(const CudaKernelArgs& args) {
  if (args.context == nullptr) {
    fail(ErrorCode::KernelFailure,
         "node '" + args.node.name + "' (Constant) was run without its context to copy from");
  }
  const Tensor& value = AttrReader(args.node).get_tensor("value");
  args.context->copy_to_device(args.outputs[0].data, value.data(),
                               static_cast<int64_t>(value.nbytes()));
}

constexpr CudaKernel kConstant{constant, "constant_upload_cuda", true};
KernelSelection select_constant(const CudaKernelQuery&) { return choice_of(kConstant); }

using E = CrossBackendExactness;
constexpr std::string_view kCopies = "element bytes copied, NaN payloads included";
const CudaOpKernels kOps[] = {
    {{OpKind::Constant, kCoreTypes, E::Bitwise, "the value's bytes copied to the device"},
     select_constant},
    {{OpKind::Tile, kCoreTypes, E::Bitwise, kCopies}, select_tile_or_pad<kTile>},
    {{OpKind::Pad, kCoreTypes, E::Bitwise,
      "element bytes copied, the constant's included, NaN payloads too"},
     select_tile_or_pad<kPad>},
    {{OpKind::DepthToSpace, kCoreTypes, E::Bitwise, kCopies}, select_depth_to_space},
    {{OpKind::SpaceToDepth, kCoreTypes, E::Bitwise, kCopies}, select_space_to_depth},
    {{OpKind::ReverseSequence, kCoreTypes, E::Bitwise,
      "element bytes copied; an out-of-range length fails the run as on the CPU, naming the "
      "first one"},
     select_reverse_sequence},
};

}  // namespace

std::span<const CudaOpKernels> layout_op_kernels() { return kOps; }

}  // namespace volta::cuda
