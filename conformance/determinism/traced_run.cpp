#include "traced_run.h"

#include <cstring>
#include <optional>

#include "volta/ir/printer.h"

namespace volta::conformance {

std::string hash_outputs(const std::vector<Tensor>& outputs) {
  return hash_hex(hash_tensors(outputs));
}

std::string plan_fingerprint(const ExecutionPlan& plan) {
  std::string passes;
  for (const PassRecord& p : plan.passes) {
    passes += (passes.empty() ? "" : ",") + p.pass + ":" + hash_hex(p.ir_hash);
  }
  return "plan=" + hash_hex(plan.plan_hash) + " ir=" + hash_hex(plan.ir_hash) +
         " schedule=" + hash_hex(plan.schedule_hash) +
         " allocation=" + hash_hex(plan.allocation_hash) +
         " passes=" + (passes.empty() ? "none" : passes);
}

TracedRun run_plan(const ExecutionPlan& plan, const Backend& backend, ExecutionContext& ctx,
                   const std::vector<Tensor>& inputs, bool trace, const std::string& subject,
                   const std::string& frontend) {
  TracedRun run;
  if (trace) {
    ctx.set_step_observer([&](int step_index, const Node& node, const KernelChoice& kernel,
                              std::span<const TensorView> outputs) {
      for (size_t o = 0; o < outputs.size(); ++o) {
        const TensorView& out = outputs[o];
        const size_t bytes = static_cast<size_t>(out.numel()) * dtype_size(out.dtype);
        // A device backend's output is read through the backend: a copy after the step ran.
        std::optional<Tensor> copied;
        if (out.space != MemorySpace::Host) copied = backend.export_tensor(ctx, out);
        const void* data = copied ? copied->data() : out.data;
        StableHasher h;
        h.bytes(data, bytes);
        NodeTraceRow row;
        row.subject = subject;
        row.step = step_index;
        row.node = node.name;
        row.op = std::string(op_name(node.op));
        row.kernel = kernel.variant;
        row.determinism = std::string(kernel_determinism_name(kernel.determinism));
        row.origin = node.origin.empty() ? frontend : "pass " + node.origin;
        row.output = static_cast<int>(o);
        row.dtype = std::string(dtype_name(out.dtype));
        row.shape = out.shape.str();
        row.hash = hash_hex(h.digest());
        if (static_cast<int64_t>(bytes) <= kTraceDataCap) {
          row.data.emplace(bytes);
          if (bytes != 0) std::memcpy(row.data->data(), data, bytes);
        }
        run.trace.push_back(std::move(row));
      }
    });
  }
  const std::vector<Tensor> outputs = execute(plan, backend, ctx, inputs);
  ctx.set_step_observer({});
  run.hash = hash_outputs(outputs);
  return run;
}

}  // namespace volta::conformance
