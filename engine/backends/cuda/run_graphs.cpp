#include "run_graphs.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <variant>

#include "cuda_check.h"
#include "volta/backends/cuda.h"
#include "volta/error.h"
#include "volta/runtime/backend.h"

namespace volta::cuda {
namespace {

// A kept launch's host-side checks fail at the end of the run, outside the runtime's step
// loop: the error names the step as the runtime's would.
void launch_kept(const DeferredLaunch& l, cudaStream_t stream) {
  try {
    l.kernel->fn(CudaKernelArgs{*l.node, l.inputs, l.outputs, stream, l.workspace, l.context});
  } catch (const VoltaError& e) {
    if (e.code() != ErrorCode::KernelFailure) throw;
    fail(ErrorCode::KernelFailure, node_ref(*l.node, kCudaBackend) + ": " + e.message());
  }
}

template <typename View>
bool same_views(const std::vector<View>& a, const std::vector<View>& b) {
  return std::ranges::equal(a, b, [](const View& x, const View& y) {
    return x.data == y.data && x.dtype == y.dtype && x.shape == y.shape;
  });
}

bool same_value(const AttrValue& a, const AttrValue& b) {
  if (a.index() != b.index()) return false;
  if (const auto* ta = std::get_if<Tensor>(&a)) {
    const Tensor& tb = std::get<Tensor>(b);
    return ta->dtype() == tb.dtype() && ta->shape() == tb.shape() &&
           std::memcmp(ta->data(), tb.data(), ta->nbytes()) == 0;
  }
  return std::visit(
      [&b](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Tensor>) {
          return false;  // handled above
        } else {
          return x == std::get<T>(b);
        }
      },
      a);
}

bool same_attributes(const Attributes& a, const Attributes& b) {
  return std::ranges::equal(a, b, [](const auto& x, const auto& y) {
    return x.first == y.first && same_value(x.second, y.second);
  });
}

}  // namespace

RunGraphs::~RunGraphs() { clear(); }

void RunGraphs::clear() {
  // Nothing to report to: a failure here means the context is already broken.
  for (const Captured& c : cache_) cudaGraphExecDestroy(c.exec);
  cache_.clear();
  pending_.clear();
}

void RunGraphs::launch_eagerly(cudaStream_t stream) {
  std::vector<DeferredLaunch> launches = std::move(pending_);
  pending_.clear();
  for (const DeferredLaunch& l : launches) launch_kept(l, stream);
}

bool RunGraphs::matches(const Captured& c) const {
  if (c.launches.size() != pending_.size()) return false;
  for (size_t i = 0; i < pending_.size(); ++i) {
    const DeferredLaunch& now = pending_[i];
    const DeferredLaunch& then = c.launches[i];
    if (now.kernel != then.kernel || now.node != then.node ||
        now.workspace.data != then.workspace.data || !same_views(now.inputs, then.inputs) ||
        !same_views(now.outputs, then.outputs) ||
        !same_attributes(now.node->attrs, c.attributes[i])) {
      return false;
    }
  }
  return true;
}

void RunGraphs::launch(cudaStream_t stream) {
  if (pending_.empty()) return;
  const auto hit = std::ranges::find_if(cache_, [this](const Captured& c) { return matches(c); });
  if (hit == cache_.end()) {
    capture(stream);
    return;
  }
  std::rotate(cache_.begin(), hit, hit + 1);
  check_cuda(cudaGraphLaunch(cache_.front().exec, stream), "launching the run's CUDA graph");
  ++replays_;
  pending_.clear();
}

void RunGraphs::capture(cudaStream_t stream) {
  std::vector<DeferredLaunch> launches = std::move(pending_);
  pending_.clear();
  // Thread-local: another thread's CUDA calls neither join nor break this capture.
  check_cuda(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal),
             "starting to capture the run as a CUDA graph");
  cudaGraph_t graph = nullptr;
  auto drop_capture = [&] {
    cudaStreamEndCapture(stream, &graph);
    if (graph != nullptr) cudaGraphDestroy(graph);
  };
  try {
    for (const DeferredLaunch& l : launches) launch_kept(l, stream);
  } catch (const HostExchangeInCapture&) {
    // A check not marked exchanges_with_host: nothing of the capture ran; launch one by one
    // instead.
    drop_capture();
    pending_ = std::move(launches);
    launch_eagerly(stream);
    return;
  } catch (...) {
    drop_capture();
    throw;
  }
  check_cuda(cudaStreamEndCapture(stream, &graph), "capturing the run as a CUDA graph");
  size_t nodes = 0;
  const cudaError_t counted = cudaGraphGetNodes(graph, nullptr, &nodes);
  cudaGraphExec_t exec = nullptr;
  const cudaError_t made =
      counted != cudaSuccess || nodes == 0 ? counted : cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  check_cuda(made, "instantiating the run's CUDA graph");
  if (exec == nullptr) return;  // every launch was empty: nothing to run or keep
  std::vector<Attributes> attributes;
  attributes.reserve(launches.size());
  for (const DeferredLaunch& l : launches) attributes.push_back(l.node->attrs);
  if (cache_.size() == kMaxGraphs) {
    cudaGraphExecDestroy(cache_.back().exec);
    cache_.pop_back();
  }
  cache_.insert(cache_.begin(), Captured{std::move(launches), std::move(attributes), exec});
  ++captures_;
  check_cuda(cudaGraphLaunch(exec, stream), "launching the run's CUDA graph");
}

}  // namespace volta::cuda
