#pragma once
// A backend that forwards every call to another: the base of test-only backends that change
// one kernel (a planted defect, a plan-only kernel) and run everything else on the backend
// they wrap, through the same registry-made backend a user would get. Its contexts are the
// wrapped backend's.

#include <memory>
#include <string>
#include <utility>

#include "volta/runtime/backend.h"

namespace volta {

class ForwardingBackend : public Backend {
 public:
  // `name` empty: the wrapped backend's.
  explicit ForwardingBackend(std::unique_ptr<Backend> inner, std::string name = {})
      : inner_(std::move(inner)), name_(std::move(name)) {}

  std::string_view name() const override { return name_.empty() ? inner_->name() : name_; }
  Capabilities capabilities() const override { return inner_->capabilities(); }
  KernelSelection select_kernel(const Graph& graph, const Node& node) const override {
    return inner_->select_kernel(graph, node);
  }
  std::unique_ptr<ExecutionContext> make_context(const ContextOptions& options) const override {
    return inner_->make_context(options);
  }
  MemoryRegion arena(ExecutionContext& ctx, int64_t bytes) const override {
    return inner_->arena(ctx, bytes);
  }
  void reserve_worker_scratch(ExecutionContext& ctx, int64_t bytes) const override {
    inner_->reserve_worker_scratch(ctx, bytes);
  }
  ConstTensorView import_parameter(ExecutionContext& ctx,
                                   const std::shared_ptr<const Tensor>& data) const override {
    return inner_->import_parameter(ctx, data);
  }
  ConstTensorView import_tensor(ExecutionContext& ctx, const Tensor& host) const override {
    return inner_->import_tensor(ctx, host);
  }
  Tensor export_tensor(ExecutionContext& ctx, const ConstTensorView& value) const override {
    return inner_->export_tensor(ctx, value);
  }
  TensorView bind_state(ExecutionContext& ctx, Tensor& state) const override {
    return inner_->bind_state(ctx, state);
  }
  void store_state(ExecutionContext& ctx, const ConstTensorView& bound,
                   Tensor& state) const override {
    inner_->store_state(ctx, bound, state);
  }
  void synchronize(ExecutionContext& ctx) const override { inner_->synchronize(ctx); }
  void run_kernel(const KernelChoice& kernel, const Node& node,
                  std::span<const ConstTensorView> inputs, std::span<const TensorView> outputs,
                  MemoryRegion workspace, ExecutionContext& ctx) const override {
    inner_->run_kernel(kernel, node, inputs, outputs, workspace, ctx);
  }

 protected:
  const Backend& inner() const { return *inner_; }

 private:
  std::unique_ptr<Backend> inner_;
  std::string name_;
};

}  // namespace volta
