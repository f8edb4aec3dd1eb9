#include "checks.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "traced_run.h"
#include "volta/conformance/first_divergence.h"
#include "volta/ir/printer.h"

namespace volta::conformance {
namespace {

ExecutionPlan compile_subject(const Subject& subject, const Backend& backend, bool passes) {
  return compile(subject.graph, backend, DeterminismMode::Strict, {.optimize = passes});
}

// Why two traced runs differ: the first divergent node, or (when every node output agrees,
// which a correct trace never shows) that only the final copy differed.
std::string explain(const TracedRun& a, const TracedRun& b) {
  if (const std::optional<Divergence> d = first_divergence(a.trace, b.trace)) return describe(*d);
  return "every traced node output agrees; the outputs differ after the last step";
}

// Sample `sample`'s bytes of `t`, whose axis 0 holds `batch` samples.
std::span<const std::byte> sample_bytes(const Tensor& t, int64_t batch, int64_t sample) {
  const size_t per = t.nbytes() / static_cast<size_t>(batch);
  return {static_cast<const std::byte*>(t.data()) + per * static_cast<size_t>(sample), per};
}

// Sample `sample` of `t` (axis 0 of extent `batch`) as a batch of one.
Tensor sample_of(const Tensor& t, int64_t batch, int64_t sample) {
  std::vector<int64_t> dims = t.shape().dims();
  dims[0] = 1;
  Tensor out(t.dtype(), Shape(std::move(dims)));
  const std::span<const std::byte> bytes = sample_bytes(t, batch, sample);
  if (!bytes.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

// Throws unless axis 0 of `t` (`what`, e.g. "output 0 'logits'", of `where`) holds `batch`.
void require_batch_axis(const Tensor& t, int64_t batch, std::string_view where,
                        std::string_view what) {
  if (t.shape().rank() > 0 && t.shape()[0] == batch) return;
  fail(ErrorCode::InvalidArgument, std::string(where) + ": " + std::string(what) + " has shape " +
                                       t.shape().str() +
                                       ": axis 0 of a batch subject's inputs and outputs holds "
                                       "the batch of " +
                                       std::to_string(batch));
}

// "output 1 'logits'"
std::string output_label(const Graph& graph, size_t output) {
  std::string label = "output " + std::to_string(output) + " '";
  label += graph.value(graph.outputs()[output]).name;
  label += "'";
  return label;
}

// "0.125 (0x3e000000)": an element's value and bits.
std::string element_text(const Tensor& t, int64_t index) {
  const size_t width = dtype_size(t.dtype());
  uint64_t bits = 0;
  std::memcpy(&bits, static_cast<const std::byte*>(t.data()) + static_cast<size_t>(index) * width,
              std::min(width, sizeof bits));
  char text[96];
  std::snprintf(text, sizeof text, "%.*g (0x%0*" PRIx64 ")", width <= 4 ? 9 : 17,
                t.get_double(index), static_cast<int>(2 * width), bits);
  return text;
}

// Appends the comma-separated variants of `more` that `all` does not list yet.
void add_variants(std::string& all, const std::string& more) {
  std::vector<std::string> have;
  for (size_t at = 0; at < all.size();) {
    const size_t end = std::min(all.find(',', at), all.size());
    have.push_back(all.substr(at, end - at));
    at = end + 1;
  }
  for (size_t at = 0; at < more.size();) {
    const size_t end = std::min(more.find(',', at), more.size());
    std::string variant = more.substr(at, end - at);
    at = end + 1;
    if (variant.empty() || std::ranges::find(have, variant) != have.end()) continue;
    all += (all.empty() ? "" : ",") + variant;
    have.push_back(std::move(variant));
  }
}

// The first node whose output differs between a sample run alone and its slice of a batch run
// (both traced): each step output of the batch run whose size is `batch` times the alone run's
// is cut to the sample's slice along axis 0, and one of the same size (a batch-independent
// value) is compared whole; an output traced by hash only cannot be cut and is not compared.
std::string explain_slice(const TracedRun& alone, const TracedRun& batched, int64_t batch,
                          int64_t sample) {
  std::vector<NodeTraceRow> slice = batched.trace;
  for (size_t i = 0; i < slice.size() && i < alone.trace.size(); ++i) {
    NodeTraceRow& row = slice[i];
    const NodeTraceRow& one = alone.trace[i];
    if (row.step != one.step || row.node != one.node || row.output != one.output) break;
    const size_t size = one.data ? one.data->size() : 0;
    if (row.data && one.data && row.data->size() == size * static_cast<size_t>(batch)) {
      const auto begin = row.data->begin() + static_cast<std::ptrdiff_t>(size) * sample;
      row.data = std::vector<std::byte>(begin, begin + static_cast<std::ptrdiff_t>(size));
      StableHasher h;
      h.bytes(row.data->data(), size);
      row.hash = hash_hex(h.digest());
      row.shape = one.shape;
    } else if (!row.data || !one.data || row.data->size() != size) {
      row.data = one.data;
      row.hash = one.hash;
      row.shape = one.shape;
    }
  }
  const std::optional<Divergence> d = first_divergence(alone.trace, slice);
  if (!d) {
    return "no traced node output differs in the sample's slice (outputs above the trace cap "
           "are traced by hash only and cannot be cut)";
  }
  return "first divergent node (run A: sample " + std::to_string(sample) +
         " alone, run B: its slice of the batch of " + std::to_string(batch) + "): " + describe(*d);
}

}  // namespace

CheckResult check_replay(const Subject& subject, const Backend& backend, int runs, int threads,
                         std::span<const ProcessReport> processes) {
  CheckResult result;
  const ExecutionPlan plan = compile_subject(subject, backend, true);
  result.kernels = kernel_variants(plan);
  const std::unique_ptr<ExecutionContext> ctx_context = backend.make_context({.threads = threads});
  ExecutionContext& ctx = *ctx_context;
  TracedRun first =
      run_plan(plan, backend, ctx, subject.inputs, true, subject.name, subject.frontend);
  int differing = 0;
  for (int run = 2; run <= runs; ++run) {
    const TracedRun again =
        run_plan(plan, backend, ctx, subject.inputs, true, subject.name, subject.frontend);
    if (again.hash == first.hash) continue;
    if (differing++ == 0) {
      result.summary = "run " + std::to_string(run) + " of " + std::to_string(runs) +
                       " differs from run 1 (output hash " + again.hash + " vs " + first.hash +
                       "): " + explain(first, again);
    }
  }
  if (differing > 0) {
    result.identical = false;
    result.summary = std::to_string(differing) + " of " + std::to_string(runs - 1) +
                     " repeated runs differ from run 1; first: " + result.summary;
  }
  for (size_t p = 0; p < processes.size() && result.identical; ++p) {
    const ProcessReport& report = processes[p];
    if (!report.error.empty() || report.output_hash != first.hash) {
      result.identical = false;
      result.summary = "fresh process " + std::to_string(p + 1) + " of " +
                       std::to_string(processes.size()) + " " +
                       (report.error.empty() ? "gave output hash " + report.output_hash +
                                                   ", this process " + first.hash
                                             : "failed: " + report.error);
    }
  }
  result.hash = first.hash;
  result.params = "runs=" + std::to_string(runs) +
                  " processes=" + std::to_string(processes.size()) +
                  " threads=" + std::to_string(threads);
  if (result.identical) {
    result.summary = std::to_string(runs) + " runs in one process at " + std::to_string(threads) +
                     " threads and " + std::to_string(processes.size()) +
                     " fresh processes: identical outputs (hash " + first.hash + ")";
  }
  result.trace = std::move(first.trace);
  return result;
}

CheckResult check_configurations(const Subject& subject, const Backend& backend,
                                 const ConfigMatrix& matrix) {
  CheckResult result;
  auto run_config = [&](const ExecutionConfig& config, const ExecutionPlan& plan) {
    const std::unique_ptr<ExecutionContext> ctx_context =
        backend.make_context({.threads = config.threads, .schedule = config.schedule});
    ExecutionContext& ctx = *ctx_context;
    return run_plan(plan, backend, ctx, subject.inputs, true, subject.name, subject.frontend);
  };
  const ExecutionPlan plan = compile_subject(subject, backend, matrix.baseline.passes);
  result.kernels = kernel_variants(plan);
  const TracedRun baseline = run_config(matrix.baseline, plan);
  std::string names;
  int differing = 0;
  for (const ConfigFile& variation : matrix.variations) {
    names += (names.empty() ? "" : ",") + variation.name;
    std::optional<ExecutionPlan> own;  // only a change of passes changes the plan
    if (variation.config.passes != matrix.baseline.passes) {
      own = compile_subject(subject, backend, variation.config.passes);
    }
    const TracedRun run = run_config(variation.config, own ? *own : plan);
    if (run.hash == baseline.hash) continue;
    if (differing++ == 0) {
      result.summary = variation.name + " (" + variation.setting +
                       " changed: " + describe(variation.config) + ") differs from the baseline (" +
                       describe(matrix.baseline) + "), output hash " + run.hash + " vs " +
                       baseline.hash + ": " + explain(baseline, run);
    }
  }
  result.hash = baseline.hash;
  result.params = "baseline=" + describe(matrix.baseline) + " variations=" + names;
  if (differing > 0) {
    result.identical = false;
    result.summary = std::to_string(differing) + " of " + std::to_string(matrix.variations.size()) +
                     " configurations differ from the baseline; first: " + result.summary;
  } else {
    result.summary = "baseline and " + std::to_string(matrix.variations.size()) +
                     " configurations (" + names + "): identical outputs (hash " + baseline.hash +
                     ")";
  }
  return result;
}

CheckResult check_plan(const Subject& subject, const Backend& backend,
                       const std::function<void(Graph&)>& before_compile,
                       std::span<const ProcessReport> processes) {
  CheckResult result;
  // Both graphs are alive at once, so nothing in the second compile can reuse an address of
  // the first: a plan that depends on addresses shows up here, not only across processes.
  Graph graphs[2] = {subject.graph, subject.graph};
  if (before_compile) {
    for (Graph& g : graphs) before_compile(g);
  }
  const ExecutionPlan first = compile(graphs[0], backend, DeterminismMode::Strict);
  const ExecutionPlan second = compile(graphs[1], backend, DeterminismMode::Strict);
  result.kernels = kernel_variants(first);
  result.hash = plan_fingerprint(first);
  const std::string again = plan_fingerprint(second);
  if (again != result.hash) {
    result.identical = false;
    result.summary = "two compiles in one process differ: " + result.hash + " vs " + again;
  }
  for (size_t p = 0; p < processes.size() && result.identical; ++p) {
    const ProcessReport& report = processes[p];
    if (!report.error.empty() || report.plan_fingerprint != result.hash) {
      result.identical = false;
      result.summary = "fresh process " + std::to_string(p + 1) + " of " +
                       std::to_string(processes.size()) + " " +
                       (report.error.empty() ? "compiled " + report.plan_fingerprint +
                                                   ", this process " + result.hash
                                             : "failed: " + report.error);
    }
  }
  result.params = "compiles=2 processes=" + std::to_string(processes.size());
  if (result.identical) {
    result.summary = "2 compiles in one process and " + std::to_string(processes.size()) +
                     " fresh processes: identical plans (" + result.hash + ")";
  }
  return result;
}

CheckResult check_batch(const std::function<Subject(int64_t batch)>& build, const Backend& backend,
                        std::span<const int64_t> batches, int threads) {
  if (batches.empty() || std::ranges::min(batches) < 1) {
    fail(ErrorCode::InvalidArgument, "check_batch needs positive batch sizes");
  }
  CheckResult result;
  const int64_t samples = std::ranges::max(batches);
  const Subject widest = build(samples);
  const std::string widest_at = widest.name + " at batch " + std::to_string(samples);
  for (size_t i = 0; i < widest.inputs.size(); ++i) {
    require_batch_axis(widest.inputs[i], samples, widest_at, "input " + std::to_string(i));
  }
  const Subject single = build(1);
  const ExecutionPlan alone_plan = compile(single.graph, backend, DeterminismMode::Strict);
  result.kernels = kernel_variants(alone_plan);
  const std::unique_ptr<ExecutionContext> ctx_context = backend.make_context({.threads = threads});
  ExecutionContext& ctx = *ctx_context;
  auto alone_inputs = [&](int64_t sample) {
    std::vector<Tensor> inputs;
    for (const Tensor& input : widest.inputs) inputs.push_back(sample_of(input, samples, sample));
    return inputs;
  };
  // Each sample's outputs run alone, computed once and compared with every batch holding it.
  std::vector<std::vector<Tensor>> alone;
  std::vector<Tensor> every_alone_output;
  for (int64_t sample = 0; sample < samples; ++sample) {
    alone.push_back(execute(alone_plan, backend, ctx, alone_inputs(sample)));
    for (const Tensor& out : alone.back()) every_alone_output.push_back(out);
  }
  result.hash = hash_outputs(every_alone_output);

  std::string sizes;
  int64_t slices = 0;
  int64_t differing = 0;
  for (const int64_t batch : batches) {
    sizes += (sizes.empty() ? "" : ",") + std::to_string(batch);
    const Subject subject = build(batch);
    const std::string at = subject.name + " at batch " + std::to_string(batch);
    for (size_t i = 0; i < subject.inputs.size(); ++i) {
      require_batch_axis(subject.inputs[i], batch, at, "input " + std::to_string(i));
      for (int64_t sample = 0; sample < batch; ++sample) {
        if (std::ranges::equal(sample_bytes(subject.inputs[i], batch, sample),
                               sample_bytes(widest.inputs[i], samples, sample))) {
          continue;
        }
        std::string why = at;
        why += ": sample " + std::to_string(sample) + "'s input " + std::to_string(i);
        why += " differs from the same sample's at batch " + std::to_string(samples);
        why += "; a batch subject's inputs are a pure function of the sample index";
        fail(ErrorCode::InvalidArgument, why);
      }
    }
    const ExecutionPlan plan = compile(subject.graph, backend, DeterminismMode::Strict);
    add_variants(result.kernels, kernel_variants(plan));
    const std::vector<Tensor> outputs = execute(plan, backend, ctx, subject.inputs);
    for (size_t o = 0; o < outputs.size(); ++o) {
      require_batch_axis(outputs[o], batch, at, output_label(subject.graph, o));
      if (outputs[o].nbytes() != alone[0][o].nbytes() * static_cast<size_t>(batch)) {
        std::string why = at;
        why += ": " + output_label(subject.graph, o) + " has shape " + outputs[o].shape().str();
        why += ", the sample alone " + alone[0][o].shape().str();
        why += ": a sample's slice must have the shape of its outputs alone";
        fail(ErrorCode::InvalidArgument, why);
      }
    }
    for (int64_t sample = 0; sample < batch; ++sample) {
      const std::vector<Tensor>& sample_alone = alone[static_cast<size_t>(sample)];
      for (size_t o = 0; o < outputs.size(); ++o) {
        ++slices;
        const std::span<const std::byte> got = sample_bytes(outputs[o], batch, sample);
        const std::span<const std::byte> want = sample_bytes(sample_alone[o], 1, 0);
        if (std::ranges::equal(got, want) || differing++ > 0) continue;
        const auto [differs, unused] = std::ranges::mismatch(got, want);
        const int64_t element =
            (differs - got.begin()) / static_cast<std::ptrdiff_t>(dtype_size(outputs[o].dtype()));
        const int64_t per_sample = outputs[o].numel() / batch;
        const TracedRun batched =
            run_plan(plan, backend, ctx, subject.inputs, true, subject.name, subject.frontend);
        const TracedRun one = run_plan(alone_plan, backend, ctx, alone_inputs(sample), true,
                                       subject.name, subject.frontend);
        std::string& first = result.summary;
        first = "batch " + std::to_string(batch) + ", sample " + std::to_string(sample) + ", ";
        first += output_label(subject.graph, o) + " " + outputs[o].shape().str();
        first += ": element " + std::to_string(element) + " of the sample's slice is ";
        first += element_text(outputs[o], sample * per_sample + element);
        first += " in the batch, " + element_text(sample_alone[o], element) + " alone; ";
        first += explain_slice(one, batched, batch, sample);
      }
    }
  }
  result.params = "batches=" + sizes + " threads=" + std::to_string(threads);
  if (differing > 0) {
    result.identical = false;
    result.summary =
        std::to_string(differing) + " of " + std::to_string(slices) +
        " sample output slices differ from the sample run alone; first: " + result.summary;
  } else {
    result.summary = "batches " + sizes + " at " + std::to_string(threads) + " threads: all " +
                     std::to_string(slices) +
                     " sample output slices equal the sample run alone, bit for bit (alone "
                     "outputs of samples 0-" +
                     std::to_string(samples - 1) + ": hash " + result.hash + ")";
  }
  return result;
}

}  // namespace volta::conformance
