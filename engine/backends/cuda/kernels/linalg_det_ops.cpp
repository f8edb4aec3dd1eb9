// Det on the CUDA backend (f32, f64): a second list of OpFamily::Linalg beside linalg_ops.cpp.
// Each matrix is factored by one thread in a slot of the workspace, as the CPU factors it
// (kernels/linalg_det_kernel.cuh); the device code is kernels/linalg_det.cu. Einsum has no
// CUDA kernel yet.

#include <cstdint>
#include <string>

#include "../cuda_kernel.h"
#include "launch.h"

namespace volta::cuda {
namespace {

inline constexpr DTypeSet kFloats{DType::F32, DType::F64};

void det(const CudaKernelArgs& args) {
  const ConstTensorView& x = args.inputs[0];
  const TensorView& out = args.outputs[0];
  const int64_t matrices = out.numel();
  if (matrices == 0) return;
  const int64_t m = x.shape[x.shape.rank() - 1];
  check_launch(launch_det(element_type(x.dtype), x.data, matrices, m, args.workspace.data, out.data,
                          args.stream),
               args.node);
}

constexpr CudaKernel kDet[] = {{det, "f32_det_lu_partial_pivot_cuda"},
                               {det, "f64_det_lu_partial_pivot_cuda"}};

// The workspace holds a copy of every matrix, factored in place.
KernelSelection select_det(const CudaKernelQuery& query) {
  if (auto refused = refuse_dtype(query, kFloats)) return *refused;
  const TypeInfo& x = *query.inputs[0];
  return choice_of(kDet[x.dtype == DType::F32 ? 0 : 1],
                   x.shape.numel() * static_cast<int64_t>(dtype_size(x.dtype)));
}

using E = CrossBackendExactness;
const CudaOpKernels kOps[] = {
    {{OpKind::Det, kFloats, E::BitwiseExceptNanPayload,
      "the CPU's LU with partial pivoting operation for operation in the input type (no FMA), "
      "one thread per matrix; a NaN from inf - inf is the GPU's canonical NaN"},
     select_det},
};

}  // namespace

std::span<const CudaOpKernels> linalg_det_op_kernels() { return kOps; }

}  // namespace volta::cuda
