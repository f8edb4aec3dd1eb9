// `volta run`, `volta check`, `volta info` and `volta bench` on ONNX models.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iterator>
#include <map>
#include <optional>
#include <string>

#include "commands.h"
#include "volta/error.h"
#include "volta/ir/printer.h"
#include "volta/onnx/model.h"
#include "volta/onnx/session.h"
#include "volta/runtime/registry.h"

namespace volta::cli {
namespace {

struct ModelArgs {
  std::string model;
  std::map<std::string, std::string> inputs;  // name -> TensorProto file
  std::string output_dir;
  int threads = 1;
  DeterminismMode mode = DeterminismMode::Strict;
  std::string backend = "cpu";  // a name of the registry (make_backend)
  bool list_ops = false;
  int runs = 100;        // bench: timed runs
  int warmup = 10;       // bench: untimed runs first
  bool profile = false;  // bench: then time each step over --runs more runs
};

// The integer options and their ranges.
struct CountOption {
  std::string_view name;
  int min;
  int max;
  int ModelArgs::*field;
};
constexpr CountOption kCountOptions[] = {{"--threads", 1, 256, &ModelArgs::threads},
                                         {"--runs", 1, 1000000, &ModelArgs::runs},
                                         {"--warmup", 0, 1000000, &ModelArgs::warmup}};

// `text` as an integer in [min, max], or nullopt.
std::optional<int> bounded_int(const std::string& text, int min, int max) {
  try {
    size_t used = 0;
    const int v = std::stoi(text, &used);
    if (used == text.size() && v >= min && v <= max) return v;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

double milliseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// Parses the options `allowed` names; prints usage errors and returns nullopt on bad input.
std::optional<ModelArgs> parse(std::string_view command, std::span<const std::string_view> args,
                               std::string_view allowed) {
  ModelArgs out;
  auto bad = [&](const std::string& why) {
    std::fprintf(stderr, "volta %s: %s (options: %s)\n", std::string(command).c_str(), why.c_str(),
                 std::string(allowed).c_str());
    return std::nullopt;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string_view a = args[i];
    const bool has_value = i + 1 < args.size();
    auto takes = [&](std::string_view name) {
      return a == name && allowed.find(name) != allowed.npos;
    };
    if (takes("--input") && has_value) {
      const std::string_view spec = args[++i];
      const size_t eq = spec.find('=');
      if (eq == spec.npos || eq == 0)
        return bad("--input takes NAME=FILE.pb, got '" + std::string(spec) + "'");
      out.inputs[std::string(spec.substr(0, eq))] = std::string(spec.substr(eq + 1));
    } else if (takes("--output-dir") && has_value) {
      out.output_dir = std::string(args[++i]);
    } else if (const auto* count =
                   std::find_if(std::begin(kCountOptions), std::end(kCountOptions),
                                [&](const CountOption& o) { return takes(o.name) && has_value; });
               count != std::end(kCountOptions)) {
      const std::string n(args[++i]);
      const std::optional<int> v = bounded_int(n, count->min, count->max);
      if (!v) {
        return bad(std::string(count->name) + " takes " + std::to_string(count->min) + ".." +
                   std::to_string(count->max) + ", got '" + n + "'");
      }
      out.*(count->field) = *v;
    } else if (takes("--backend") && has_value) {
      out.backend = std::string(args[++i]);
    } else if (takes("--strict")) {
      out.mode = DeterminismMode::Strict;
    } else if (takes("--relaxed")) {
      out.mode = DeterminismMode::Relaxed;
    } else if (takes("--ops")) {
      out.list_ops = true;
    } else if (takes("--profile")) {
      out.profile = true;
    } else if (!a.starts_with("--") && out.model.empty()) {
      out.model = std::string(a);
    } else {
      return bad("unknown or incomplete option '" + std::string(a) + "'");
    }
  }
  if (out.model.empty() && !out.list_ops) return bad("no model given");
  return out;
}

// One tensor per model input, from --input files; every input must be given (or, with
// `zeros_for_static`, defaults to zeros when its shape is fully static).
std::vector<Tensor> load_inputs(const onnx::Model& model, const ModelArgs& args,
                                bool zeros_for_static) {
  std::vector<Tensor> tensors;
  std::map<std::string, std::string> unused = args.inputs;
  for (const onnx::ValueSpec& spec : model.inputs()) {
    if (!spec.dtype) {
      fail(ErrorCode::ImportUnsupported, "model input '" + spec.name + "' has type " + spec.type +
                                             "; supported: tensors of " +
                                             onnx::onnx_tensor_types());
    }
    if (const auto it = args.inputs.find(spec.name); it != args.inputs.end()) {
      tensors.push_back(onnx::read_tensor_file(it->second).tensor);
      unused.erase(spec.name);
      continue;
    }
    bool is_static = zeros_for_static && spec.dtype && spec.has_shape;
    for (int64_t d : spec.dims) is_static = is_static && d >= 0;
    if (!is_static) {
      fail(ErrorCode::InvalidArgument, "no value for model input '" + spec.name + "' (" +
                                           spec.type + "): pass --input " + spec.name + "=FILE.pb");
    }
    tensors.emplace_back(*spec.dtype, Shape(spec.dims));
  }
  if (!unused.empty()) {
    std::string names;
    for (const onnx::ValueSpec& spec : model.inputs()) names += " " + spec.name;
    fail(ErrorCode::InvalidArgument,
         "the model has no input '" + unused.begin()->first + "'; its inputs are:" + names);
  }
  return tensors;
}

void print_model_header(const onnx::Model& model) {
  std::printf("model: %s\nopset: %lld  ir_version: %lld  producer: %s  nodes: %d\n",
              model.source().c_str(), static_cast<long long>(model.opset()),
              static_cast<long long>(model.ir_version()), model.producer().c_str(),
              model.num_nodes());
  auto dims = [](const onnx::ValueSpec& s) {
    std::string text;
    for (int64_t d : s.dims) text += (text.empty() ? "" : ",") + (d < 0 ? "?" : std::to_string(d));
    return s.has_shape ? "[" + text + "]" : std::string("[unknown rank]");
  };
  for (const onnx::ValueSpec& s : model.inputs()) {
    std::printf("input  %s: %s%s\n", s.name.c_str(), s.type.c_str(), dims(s).c_str());
  }
  for (const onnx::ValueSpec& s : model.outputs()) {
    std::printf("output %s: %s%s\n", s.name.c_str(), s.type.c_str(), dims(s).c_str());
  }
}

}  // namespace

int check(std::span<const std::string_view> args) {
  const std::optional<ModelArgs> parsed = parse("check", args, "--ops, --backend NAME");
  if (!parsed) return 2;
  if (parsed->list_ops) {
    for (const std::string& op : onnx::supported_onnx_ops()) std::printf("%s\n", op.c_str());
    if (parsed->model.empty()) return 0;
  }
  const onnx::Model model = onnx::Model::load(parsed->model);
  const std::unique_ptr<Backend> backend = make_backend(parsed->backend);
  onnx::ImportOptions options;
  options.evaluator = make_backend_evaluator(*backend, DeterminismMode::Strict);
  const std::vector<onnx::ImportIssue> issues = model.check(options);
  for (const onnx::ImportIssue& issue : issues) {
    if (issue.node.empty()) {
      std::printf("model: %s\n", issue.message.c_str());
    } else {
      std::printf("node '%s' (%s): %s\n", issue.node.c_str(), issue.op_type.c_str(),
                  issue.message.c_str());
    }
  }
  std::printf("%s: %zu unsupported item%s\n", parsed->model.c_str(), issues.size(),
              issues.size() == 1 ? "" : "s");
  return issues.empty() ? 0 : 1;
}

int run(std::span<const std::string_view> args) {
  const std::optional<ModelArgs> parsed = parse(
      "run", args,
      "--input NAME=FILE.pb, --output-dir DIR, --threads N, --backend NAME, --strict, --relaxed");
  if (!parsed) return 2;
  const onnx::Model model = onnx::Model::load(parsed->model);
  const std::vector<Tensor> inputs = load_inputs(model, *parsed, false);
  const std::unique_ptr<Backend> backend = make_backend(parsed->backend);
  onnx::Session session(model, *backend, parsed->mode, parsed->threads);
  const auto start = std::chrono::steady_clock::now();
  const std::vector<Tensor> outputs = session.run(inputs);
  const double ms = milliseconds_since(start);
  if (!parsed->output_dir.empty()) std::filesystem::create_directories(parsed->output_dir);
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string& name = model.outputs()[i].name;
    std::printf("output %s: %s %s\n", name.c_str(),
                std::string(dtype_name(outputs[i].dtype())).c_str(),
                outputs[i].shape().str().c_str());
    if (!parsed->output_dir.empty()) {
      onnx::write_tensor_file(std::filesystem::path(parsed->output_dir) / (name + ".pb"),
                              outputs[i], name);
    }
  }
  const PlanCacheStats stats = session.cache_stats();
  std::printf(
      "ran %s on %s: mode=%s threads=%d, %.3f ms (import + compile + run), plan cache "
      "hits=%lld misses=%lld\n",
      parsed->model.c_str(), parsed->backend.c_str(),
      std::string(determinism_mode_name(parsed->mode)).c_str(), parsed->threads, ms,
      static_cast<long long>(stats.hits), static_cast<long long>(stats.misses));
  return 0;
}

// Nearest rank: the smallest of the ascending `sorted` times that q of them do not exceed.
double nearest_rank(const std::vector<double>& sorted, double q) {
  const auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::max<size_t>(rank, 1) - 1];
}

// How long each step of the session's plan takes: `runs` more runs, with a step observer that
// stamps the host clock after each step. A step's time is its stamp minus the one before; the
// first step's is from the start of run(), so it carries the run's set-up (binding inputs, the
// arena). Printed: the time by op, then the slowest steps, as medians over the runs. Only a
// backend whose kernels have finished when they return can be timed so.
void print_step_profile(onnx::Session& session, std::span<const Tensor> inputs, int runs) {
  const ExecutionPlan& plan = session.plan_for(inputs);
  const size_t steps = plan.steps.size();
  std::vector<std::vector<double>> times(steps, std::vector<double>(static_cast<size_t>(runs)));
  auto stamp = std::chrono::steady_clock::now();
  int run = 0;
  // The observer goes with the profile, however the runs end.
  struct ObserverScope {
    ExecutionContext& ctx;
    ~ObserverScope() { ctx.set_step_observer({}); }
  } scope{session.context()};
  session.context().set_step_observer(
      [&](int step, const Node&, const KernelChoice&, std::span<const TensorView> outputs) {
        for (const TensorView& out : outputs) {
          if (out.space == MemorySpace::Host) continue;
          fail(ErrorCode::InvalidArgument,
               "--profile times steps on the host clock, but backend '" + plan.backend +
                   "' runs its kernels on a device, asynchronously: profile it with its own "
                   "tools (e.g. nsys for cuda)");
        }
        times[static_cast<size_t>(step)][static_cast<size_t>(run)] = milliseconds_since(stamp);
        stamp = std::chrono::steady_clock::now();
      });
  for (; run < runs; ++run) {
    stamp = std::chrono::steady_clock::now();
    session.run(inputs);
  }
  std::vector<double> step_ms(steps);
  double total = 0;
  for (size_t s = 0; s < steps; ++s) {
    std::sort(times[s].begin(), times[s].end());
    total += step_ms[s] = nearest_rank(times[s], 0.5);
  }
  std::map<std::string, std::pair<double, int>> by_op;
  for (size_t s = 0; s < steps; ++s) {
    auto& [ms, count] = by_op[std::string(op_name(plan.graph.node(plan.steps[s].node).op))];
    ms += step_ms[s];
    ++count;
  }
  std::vector<std::pair<std::string, std::pair<double, int>>> ops(by_op.begin(), by_op.end());
  std::stable_sort(ops.begin(), ops.end(),
                   [](const auto& x, const auto& y) { return x.second.first > y.second.first; });
  const auto share = [&](double ms) { return total > 0 ? 100.0 * ms / total : 0.0; };
  std::printf(
      "profile: %d runs, each step's median; the medians sum to %.3f ms (step 0 includes "
      "the run's set-up)\nby op:\n",
      runs, total);
  for (const auto& [op, entry] : ops) {
    std::printf("  %-24s %8.3f ms %5.1f%%  %d step(s)\n", op.c_str(), entry.first,
                share(entry.first), entry.second);
  }
  std::vector<size_t> order(steps);
  for (size_t s = 0; s < steps; ++s) order[s] = s;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return step_ms[x] > step_ms[y]; });
  constexpr size_t kSlowest = 15;
  std::printf("slowest steps:\n");
  for (size_t i = 0; i < std::min(kSlowest, steps); ++i) {
    const PlannedStep& step = plan.steps[order[i]];
    const Node& node = plan.graph.node(step.node);
    std::printf("  step %zu %s '%s' kernel=%s %.3f ms %.1f%%\n", order[i],
                std::string(op_name(node.op)).c_str(), node.name.c_str(),
                step.kernel.variant.c_str(), step_ms[order[i]], share(step_ms[order[i]]));
  }
}

// Steady-state latency, as onnxruntime_perf_test reports it: the first run (import, compile,
// run) apart, --warmup untimed runs, then --runs runs timed one by one through the same Session
// (its plan cached) with the same inputs.
int bench(std::span<const std::string_view> args) {
  const std::optional<ModelArgs> parsed =
      parse("bench", args,
            "--input NAME=FILE.pb, --threads N, --runs N, --warmup N, --backend NAME, --strict, "
            "--relaxed, --profile");
  if (!parsed) return 2;
  const onnx::Model model = onnx::Model::load(parsed->model);
  const std::vector<Tensor> inputs = load_inputs(model, *parsed, true);
  const std::unique_ptr<Backend> backend = make_backend(parsed->backend);
  onnx::Session session(model, *backend, parsed->mode, parsed->threads);
  auto start = std::chrono::steady_clock::now();
  session.run(inputs);
  const double first = milliseconds_since(start);
  for (int i = 0; i < parsed->warmup; ++i) session.run(inputs);
  std::vector<double> ms(static_cast<size_t>(parsed->runs));
  for (double& t : ms) {
    start = std::chrono::steady_clock::now();
    session.run(inputs);
    t = milliseconds_since(start);
  }
  double mean = 0;
  for (const double t : ms) mean += t / static_cast<double>(ms.size());
  std::sort(ms.begin(), ms.end());
  const auto quantile = [&](double q) { return nearest_rank(ms, q); };
  const PlanCacheStats stats = session.cache_stats();
  std::printf("bench %s on %s: mode=%s threads=%d\n", parsed->model.c_str(),
              parsed->backend.c_str(), std::string(determinism_mode_name(parsed->mode)).c_str(),
              parsed->threads);
  std::printf("first run %.3f ms (import + compile + run); %d warm-up runs; %d timed runs\n", first,
              parsed->warmup, parsed->runs);
  std::printf("latency ms: median %.3f  p90 %.3f  min %.3f  max %.3f  mean %.3f\n", quantile(0.5),
              quantile(0.9), ms.front(), ms.back(), mean);
  std::printf("plan cache hits=%lld misses=%lld\n", static_cast<long long>(stats.hits),
              static_cast<long long>(stats.misses));
  if (parsed->profile) print_step_profile(session, inputs, parsed->runs);
  return 0;
}

namespace {

int64_t value_bytes(const Graph& g, ValueId v) {
  const Value& value = g.value(v);
  return value.shape.numel() * static_cast<int64_t>(dtype_size(value.dtype));
}

int64_t total_bytes(const Graph& g, std::span<const ValueId> values) {
  int64_t total = 0;
  for (ValueId v : values) total += value_bytes(g, v);
  return total;
}

// A device backend's copies per run and memory by class, from the plan: what the context
// copies in (inputs, states) and out (outputs, states) on every run, what it keeps (weights,
// uploaded once per context; the arena of temporaries). Copies go straight from and to the
// caller's tensors: no host staging buffers.
std::string describe_device_traffic(const ExecutionPlan& plan) {
  const Graph& g = plan.graph;
  const int64_t inputs = total_bytes(g, g.inputs());
  const int64_t states = total_bytes(g, g.states());
  const int64_t outputs = total_bytes(g, g.outputs());
  const int64_t parameters = total_bytes(g, g.parameters());
  const auto n = [](std::span<const ValueId> v) { return std::to_string(v.size()); };
  return "copies per run on " + plan.backend + ": host->device " + std::to_string(inputs + states) +
         " bytes (" + n(g.inputs()) + " inputs, " + n(g.states()) + " states), device->host " +
         std::to_string(outputs + states) + " bytes (" + n(g.outputs()) + " outputs, " +
         n(g.states()) + " states)\nmemory on " + plan.backend + ": device state " +
         std::to_string(parameters + states) + " bytes (" + n(g.parameters()) +
         " parameters, uploaded once per context, and the states), device temporaries " +
         std::to_string(plan.memory.arena_bytes) +
         " bytes (the arena), host staging 0 bytes (copies use the caller's tensors)\n";
}

}  // namespace

int info_model(std::span<const std::string_view> args) {
  const std::optional<ModelArgs> parsed =
      parse("info", args, "--input NAME=FILE.pb, --backend NAME, --strict, --relaxed");
  if (!parsed) return 2;
  const onnx::Model model = onnx::Model::load(parsed->model);
  print_model_header(model);
  const std::vector<Tensor> inputs = load_inputs(model, *parsed, true);
  const std::unique_ptr<Backend> backend = make_backend(parsed->backend);
  onnx::ImportOptions options;
  options.evaluator = make_backend_evaluator(*backend, parsed->mode);
  onnx::ImportedGraph imported = model.import_for(inputs, options);
  std::printf("\nimported graph: nodes=%d values=%d parameters=%zu ir_hash=%s\n\n%s\n",
              imported.graph.num_nodes(), imported.graph.num_values(),
              imported.graph.parameters().size(), hash_hex(ir_hash(imported.graph)).c_str(),
              to_text(imported.graph).c_str());
  const ExecutionPlan plan = compile(std::move(imported.graph), *backend, parsed->mode);
  std::fputs(describe_plan(plan).c_str(), stdout);
  if (plan.backend != "cpu") std::fputs(describe_device_traffic(plan).c_str(), stdout);
  return 0;
}

}  // namespace volta::cli
