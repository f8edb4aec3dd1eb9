#pragma once
// Internal to the CPU backend: how kernels are declared and registered. The kernel files in
// kernels/ are named by op family, kernels/<family>[_<part>].cpp, like the op table, reference,
// ONNX lowering and parity case files, and each registers the ops of its family only; the
// backend's table is indexed by OpKind.

#include <array>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "volta/backends/cpu/thread_pool.h"
#include "volta/error.h"
#include "volta/ir/graph.h"
#include "volta/ir/op_schema.h"
#include "volta/runtime/backend.h"

namespace volta::cpu {

struct KernelArgs {
  const Node& node;
  AttrReader attrs;
  std::span<const ConstTensorView> inputs;  // absent optional inputs: data == nullptr
  std::span<const TensorView> outputs;
  std::span<std::byte> workspace;  // the planned scratch the kernel declared at selection
  ThreadPool& pool;
};

// The data of optional input i, or nullptr when the node leaves it out.
template <class T>
const T* optional_input_data(const KernelArgs& args, size_t i) {
  return i < args.inputs.size() && args.inputs[i].present() ? args.inputs[i].as<T>() : nullptr;
}

using KernelFn = void (*)(const KernelArgs& args);

// A concrete kernel: function, name (what it is: dtype, op, ISA, tile) and guarantee.
struct CpuKernel {
  KernelFn fn = nullptr;
  std::string variant;
  KernelDeterminism determinism = KernelDeterminism::BitExact;
};

// What a selector sees: the node and the types of its inputs and outputs.
struct KernelQuery {
  const Node& node;
  std::span<const std::optional<TypeInfo>> inputs;
  std::span<const TypeInfo> outputs;
};

// Picks the kernel for an exact node, or says why there is none. Selected kernels must
// outlive the backend: selectors return pointers into static storage.
using KernelSelector = KernelSelection (*)(const KernelQuery& query);

struct OpKernels {
  KernelSelector select = nullptr;
  DTypeSet dtypes;  // dtypes of the op's primary type parameter this backend covers
  KernelDeterminism determinism = KernelDeterminism::BitExact;  // the weakest variant's
};
using KernelTable = std::array<OpKernels, kOpCount>;

// One registrar per op family: register_<family>_kernels, in kernels/<family>.cpp, registers
// the kernels of that family's ops and no other. A family in several files also calls the
// registrars of its other files, kernels/<family>_<part>.cpp.
void register_elementwise_kernels(KernelTable& table);    // kernels/elementwise.cpp
void register_activation_kernels(KernelTable& table);     // kernels/activation.cpp
void register_logical_kernels(KernelTable& table);        // kernels/logical.cpp
void register_linalg_kernels(KernelTable& table);         // kernels/linalg.cpp
void register_normalization_kernels(KernelTable& table);  // kernels/normalization.cpp
void register_reduction_kernels(KernelTable& table);      // kernels/reduction.cpp
void register_movement_kernels(KernelTable& table);       // kernels/movement.cpp
void register_convolution_kernels(KernelTable& table);    // kernels/convolution.cpp
void register_pooling_kernels(KernelTable& table);        // kernels/pooling.cpp
void register_indexing_kernels(KernelTable& table);       // kernels/indexing.cpp
void register_loss_kernels(KernelTable& table);           // kernels/loss.cpp
void register_resampling_kernels(KernelTable& table);     // kernels/resampling.cpp

// The registrars of a family's other files, called by its registrar only:
// register_<family>_<part>_kernels, in kernels/<family>_<part>.cpp.
void register_elementwise_math_kernels(KernelTable& table);
void register_elementwise_cast_kernels(KernelTable& table);
void register_elementwise_where_kernels(KernelTable& table);
void register_linalg_einsum_kernels(KernelTable& table);
void register_linalg_det_kernels(KernelTable& table);
void register_linalg_fused_matmul_kernels(KernelTable& table);
void register_linalg_permuted_matmul_kernels(KernelTable& table);
void register_convolution_grad_filter_kernels(KernelTable& table);
void register_movement_layout_kernels(KernelTable& table);
void register_resampling_grid_sample_kernels(KernelTable& table);

// A family's registrar, as the backend's table lists it.
struct KernelFamilyFile {
  OpFamily family;
  void (*add)(KernelTable& table);
};

// The kernel table of the given registrars (cpu_backend.cpp lists one per family). Throws
// std::logic_error naming the op, its family and the registrar when a registrar registers an
// op of another family, or an op another registrar has registered.
KernelTable build_kernel_table(std::span<const KernelFamilyFile> files);

// Builds a KernelChoice pointing at a kernel with static storage duration, with the scratch it
// needs for the exact node: planned workspace and per-worker scratch (see KernelChoice).
inline KernelChoice choice_of(const CpuKernel& k, int64_t workspace_bytes = 0,
                              int64_t worker_scratch_bytes = 0) {
  return KernelChoice{k.variant, k.determinism, &k, workspace_bytes, worker_scratch_bytes};
}

// Carves a kernel's planned workspace into aligned parts. Selection and run build the same
// layout from the node's shapes: selection declares bytes(), the kernel finds each part at the
// offset add() gave it.
class WorkspaceLayout {
 public:
  int64_t add_bytes(int64_t bytes) {
    const int64_t at = bytes_;
    const auto align = static_cast<int64_t>(kTensorAlignment);
    bytes_ += (bytes + align - 1) / align * align;
    return at;
  }
  template <class T>
  int64_t add(int64_t elements) {
    return add_bytes(elements * static_cast<int64_t>(sizeof(T)));
  }
  int64_t bytes() const { return bytes_; }

 private:
  int64_t bytes_ = 0;
};

// `elements` of T at byte `offset` of a scratch region (`what`: "workspace", the plan's, or
// "worker scratch", the calling thread's). A KernelFailure when the region is shorter: the
// kernel's selection declared less than its run uses.
template <class T>
T* scratch_part(std::span<std::byte> region, std::string_view what, int64_t offset,
                int64_t elements, const Node& node) {
  if (elements <= 0) return nullptr;
  const int64_t end = offset + elements * static_cast<int64_t>(sizeof(T));
  if (end > static_cast<int64_t>(region.size())) {
    fail(ErrorCode::KernelFailure, "kernel for node '" + node.name + "' needs " +
                                       std::to_string(end) + " bytes of " + std::string(what) +
                                       ", it was given " + std::to_string(region.size()) +
                                       ": its selection declared less than it uses");
  }
  return reinterpret_cast<T*>(region.data() + offset);
}

// The planned workspace's part, and the calling worker's (ThreadPool::worker_scratch).
template <class T>
T* workspace_part(std::span<std::byte> workspace, int64_t offset, int64_t elements,
                  const Node& node) {
  return scratch_part<T>(workspace, "workspace", offset, elements, node);
}
template <class T>
T* worker_part(ThreadPool& pool, int64_t offset, int64_t elements, const Node& node) {
  return scratch_part<T>(pool.worker_scratch(), "worker scratch", offset, elements, node);
}

// A selection with the scratch of its exact node (see KernelChoice); unsupported stays so.
inline KernelSelection with_scratch(KernelSelection selection, int64_t workspace_bytes,
                                    int64_t worker_scratch_bytes) {
  if (auto* choice = std::get_if<KernelChoice>(&selection)) {
    choice->workspace_bytes = workspace_bytes;
    choice->worker_scratch_bytes = worker_scratch_bytes;
  }
  return selection;
}

// Work-splitting constants shared by kernels. They are fixed by the problem, never by the
// thread count, which is what makes the CPU backend thread-count invariant.
inline constexpr int64_t kElementwiseChunk = 16384;  // elements per task
inline constexpr int64_t kReductionChunk = 4096;     // elements per fixed-tree leaf

}  // namespace volta::cpu
