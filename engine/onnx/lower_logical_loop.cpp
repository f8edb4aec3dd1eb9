// Lowerings of ONNX Loop and Scan by unrolling at import time: plans stay static, so the
// number of iterations must be known when the model is imported. Loop's trip count and
// condition come from constants or given graph inputs (the plan is then specialized on their
// values, as for Reshape's shape), and its body's condition output must be computable at
// import time too; Scan runs once per element of its (static) scan axis. Each iteration
// lowers the body graph again with the previous iteration's values, so the unrolled graph
// performs exactly the iterations' arithmetic in order.

#include <algorithm>
#include <limits>
#include <string>

#include "lowering.h"

namespace volta::onnx {
namespace {

// Unrolling copies the body per iteration: beyond this many, the plan would be too large.
constexpr int64_t kMaxIterations = 4096;

// The per-iteration values of a scan output stacked along `axis` of the stacked rank.
ValueId stack(LoweringContext& ctx, const std::vector<ValueId>& parts, int64_t axis) {
  std::vector<ValueId> lifted;
  lifted.reserve(parts.size());
  for (ValueId v : parts) lifted.push_back(ctx.add(OpKind::Unsqueeze, {v}, {{"axes", Ints{axis}}}));
  if (lifted.size() == 1) return lifted.front();
  return ctx.add(OpKind::Concat, std::move(lifted), {{"axis", axis}});
}

void check_iterations(LoweringContext& ctx, int64_t n) {
  if (n > kMaxIterations) {
    ctx.unsupported(std::to_string(n) + " iterations; supported: up to " +
                    std::to_string(kMaxIterations) + ", unrolled when the model is imported");
  }
}

// Loop(M, cond, v_initial...): body(iteration_num, cond, v...) -> (cond, v..., scan...).
void lower_loop(LoweringContext& ctx) {
  if (ctx.num_inputs() < 2) ctx.invalid("Loop takes M, cond and the loop-carried values");
  ctx.consume_attr("body");  // read once per iteration, and not at all when none runs
  const int carried = ctx.num_inputs() - 2;
  const int scans = ctx.num_outputs() - carried;
  if (scans < 0) {
    ctx.invalid("the node has " + std::to_string(ctx.num_outputs()) + " outputs for " +
                std::to_string(carried) + " loop-carried values");
  }
  // No M: as many iterations as the condition allows.
  const int64_t trip_count = ctx.has_input(0) ? ctx.constant_int(0, "the trip count M")
                                              : std::numeric_limits<int64_t>::max();
  bool running = true;
  if (ctx.has_input(1)) {
    const Tensor& cond = ctx.constant_input(1, "the loop condition");
    if (cond.numel() != 1) ctx.invalid("cond must hold one value; got " + cond.shape().str());
    running = cond.get_double(0) != 0.0;
  }
  if (!ctx.has_input(0) && !ctx.has_input(1)) {
    ctx.unsupported("a loop without a trip count or a condition (it never ends)");
  }
  std::vector<ValueId> state(static_cast<size_t>(carried));
  for (int i = 0; i < carried; ++i) state[static_cast<size_t>(i)] = ctx.input(2 + i);
  std::vector<std::vector<ValueId>> scanned(static_cast<size_t>(scans));
  for (int64_t i = 0; running && i < trip_count; ++i) {
    check_iterations(ctx, i + 1);
    std::vector<ValueId> inputs = {scalar_constant(ctx, DType::I64, static_cast<double>(i)),
                                   scalar_constant(ctx, DType::Bool, 1.0)};
    inputs.insert(inputs.end(), state.begin(), state.end());
    const std::vector<ValueId> outs = ctx.lower_graph_attr("body", inputs);
    if (static_cast<int>(outs.size()) != 1 + carried + scans) {
      ctx.invalid("the body has " + std::to_string(outs.size()) + " outputs; the node needs " +
                  std::to_string(1 + carried + scans) + " (cond, " + std::to_string(carried) +
                  " loop-carried, " + std::to_string(scans) + " scan outputs)");
    }
    const Tensor& cond = ctx.constant_value(outs[0], "the body's condition output");
    if (cond.numel() != 1) ctx.invalid("the body's condition must hold one value");
    running = cond.get_double(0) != 0.0;
    std::copy(outs.begin() + 1, outs.begin() + 1 + carried, state.begin());
    for (int k = 0; k < scans; ++k) {
      scanned[static_cast<size_t>(k)].push_back(outs[1 + static_cast<size_t>(carried + k)]);
    }
  }
  for (int i = 0; i < carried; ++i) ctx.set_output(i, state[static_cast<size_t>(i)]);
  for (int k = 0; k < scans; ++k) {
    if (!ctx.has_output(carried + k)) continue;
    if (scanned[static_cast<size_t>(k)].empty()) {
      ctx.unsupported("a scan output of a loop that runs no iteration (its shape is unknown)");
    }
    ctx.set_output(carried + k, stack(ctx, scanned[static_cast<size_t>(k)], 0));
  }
}

// An attribute of one entry per scan input or output (`count`), `fill` when absent.
Ints per_scan(LoweringContext& ctx, std::string_view name, int count) {
  Ints v = ctx.attr_ints(name, Ints(static_cast<size_t>(count), 0));
  if (v.size() != static_cast<size_t>(count)) {
    ctx.invalid(std::string(name) + " has " + std::to_string(v.size()) + " entries; expected " +
                std::to_string(count));
  }
  return v;
}

int normalized(LoweringContext& ctx, int64_t axis, int rank, std::string_view what) {
  const std::optional<int> a = normalize_axis(axis, rank);
  if (!a) {
    ctx.invalid(std::string(what) + " " + std::to_string(axis) + " is out of range for rank " +
                std::to_string(rank));
  }
  return *a;
}

// One Scan over `length` elements: the body's states start at `state`; scan input j is
// sliced along axes[j] (backwards where reversed[j]). The final states replace `state`; the
// result holds each scan output's per-iteration values, in iteration order.
std::vector<std::vector<ValueId>> unroll_scan(LoweringContext& ctx, std::vector<ValueId>& state,
                                              const std::vector<ValueId>& scanned_in,
                                              const std::vector<int>& axes,
                                              const std::vector<bool>& reversed, int64_t length,
                                              int scanned_out) {
  check_iterations(ctx, length);
  std::vector<std::vector<ValueId>> scanned(static_cast<size_t>(scanned_out));
  const size_t states = state.size();
  for (int64_t t = 0; t < length; ++t) {
    std::vector<ValueId> inputs = state;
    for (size_t j = 0; j < scanned_in.size(); ++j) {
      const int64_t at = reversed[j] ? length - 1 - t : t;
      const Ints axis = {axes[j]};
      const ValueId slice = ctx.add(OpKind::Slice, {scanned_in[j]},
                                    {{"starts", Ints{at}}, {"ends", Ints{at + 1}}, {"axes", axis}});
      inputs.push_back(ctx.add(OpKind::Squeeze, {slice}, {{"axes", axis}}));
    }
    const std::vector<ValueId> outs = ctx.lower_graph_attr("body", inputs);
    if (outs.size() != states + static_cast<size_t>(scanned_out)) {
      ctx.invalid("the body has " + std::to_string(outs.size()) + " outputs; the node needs " +
                  std::to_string(states + static_cast<size_t>(scanned_out)));
    }
    std::copy(outs.begin(), outs.begin() + static_cast<std::ptrdiff_t>(states), state.begin());
    for (size_t k = 0; k < scanned.size(); ++k) scanned[k].push_back(outs[states + k]);
  }
  return scanned;
}

// The length of the scan inputs along their scan axes, which must agree.
int64_t scan_length(LoweringContext& ctx, const std::vector<ValueId>& scanned_in,
                    const std::vector<int>& axes) {
  int64_t length = -1;
  for (size_t j = 0; j < scanned_in.size(); ++j) {
    const int64_t n = ctx.type_of(scanned_in[j]).shape[axes[j]];
    if (length >= 0 && n != length) {
      ctx.invalid("the scan inputs have different lengths along their scan axes: " +
                  std::to_string(length) + " and " + std::to_string(n));
    }
    length = n;
  }
  if (length == 0) ctx.unsupported("a scan over 0 elements (the outputs' shapes are unknown)");
  return length;
}

struct ScanForm {
  int states = 0;
  int scanned_in = 0;
  int scanned_out = 0;
};

// The counts of a Scan whose inputs from `first` on are its states and scan inputs.
ScanForm scan_form(LoweringContext& ctx, int first) {
  const int64_t inputs_scanned = ctx.attr_int("num_scan_inputs", std::nullopt);
  ScanForm f;
  f.scanned_in = static_cast<int>(inputs_scanned);
  f.states = ctx.num_inputs() - first - f.scanned_in;
  f.scanned_out = ctx.num_outputs() - f.states;
  if (inputs_scanned < 1 || f.states < 0 || f.scanned_out < 0) {
    ctx.invalid("num_scan_inputs " + std::to_string(inputs_scanned) + " with " +
                std::to_string(ctx.num_inputs()) + " inputs and " +
                std::to_string(ctx.num_outputs()) + " outputs");
  }
  return f;
}

std::vector<bool> directions(LoweringContext& ctx, std::string_view name, int count) {
  std::vector<bool> reversed;
  for (const int64_t d : per_scan(ctx, name, count)) reversed.push_back(d != 0);
  return reversed;
}

// Scan 9+ (state..., scan_input...): body(state..., slice...) -> (state..., scan_slice...),
// scanning along each input's axis and stacking each output along its own.
void lower_scan(LoweringContext& ctx) {
  const ScanForm f = scan_form(ctx, 0);
  const Ints in_axes = per_scan(ctx, "scan_input_axes", f.scanned_in);
  const std::vector<bool> in_reversed = directions(ctx, "scan_input_directions", f.scanned_in);
  const Ints out_axes = per_scan(ctx, "scan_output_axes", f.scanned_out);
  const std::vector<bool> out_reversed = directions(ctx, "scan_output_directions", f.scanned_out);
  std::vector<ValueId> state(static_cast<size_t>(f.states));
  for (int i = 0; i < f.states; ++i) state[static_cast<size_t>(i)] = ctx.input(i);
  std::vector<ValueId> scanned_in;
  std::vector<int> axes;
  for (int j = 0; j < f.scanned_in; ++j) {
    scanned_in.push_back(ctx.input(f.states + j));
    axes.push_back(normalized(ctx, in_axes[static_cast<size_t>(j)],
                              ctx.type_of(scanned_in.back()).shape.rank(), "scan_input_axes"));
  }
  std::vector<std::vector<ValueId>> scanned = unroll_scan(
      ctx, state, scanned_in, axes, in_reversed, scan_length(ctx, scanned_in, axes), f.scanned_out);
  for (int i = 0; i < f.states; ++i) ctx.set_output(i, state[static_cast<size_t>(i)]);
  for (int k = 0; k < f.scanned_out; ++k) {
    std::vector<ValueId>& parts = scanned[static_cast<size_t>(k)];
    if (out_reversed[static_cast<size_t>(k)]) std::reverse(parts.begin(), parts.end());
    const int rank = ctx.type_of(parts.front()).shape.rank() + 1;
    const int axis = normalized(ctx, out_axes[static_cast<size_t>(k)], rank, "scan_output_axes");
    ctx.set_output(f.states + k, stack(ctx, parts, axis));
  }
}

// Scan 8 (sequence_lens, state..., scan_input...): batched, axis 0 the batch and axis 1 the
// sequence. Each batch entry is one Scan 9 over its own slices; the results are stacked over
// the batch again. Every sequence must have the full length (padded outputs are refused).
void lower_scan_8(LoweringContext& ctx) {
  const ScanForm f = scan_form(ctx, 1);
  const std::vector<bool> reversed = directions(ctx, "directions", f.scanned_in);
  const Shape& first = ctx.input_type(1).shape;
  if (first.rank() < 1) ctx.invalid("the states and scan inputs need a batch axis (axis 0)");
  const int64_t batch = first[0];
  if (batch < 1) ctx.unsupported("an empty batch (the outputs' shapes are unknown)");
  std::vector<ValueId> inputs;
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    inputs.push_back(ctx.input(i));
    const Shape& s = ctx.type_of(inputs.back()).shape;
    const int need = i > f.states ? 2 : 1;
    if (s.rank() < need || s[0] != batch) {
      ctx.invalid("input " + std::to_string(i) + " " + s.str() + " needs batch axis 0 of " +
                  std::to_string(batch) + (need == 2 ? " and a sequence axis 1" : ""));
    }
  }
  const int64_t length = ctx.type_of(inputs.back()).shape[1];
  if (ctx.has_input(0)) {
    for (const int64_t n : ctx.constant_ints(0, "sequence_lens")) {
      if (n != length) {
        ctx.unsupported("a sequence length of " + std::to_string(n) + " below the maximum " +
                        std::to_string(length) + "; supported: full-length sequences");
      }
    }
  }
  std::vector<std::vector<ValueId>> final_states(static_cast<size_t>(f.states));
  std::vector<std::vector<ValueId>> outputs(static_cast<size_t>(f.scanned_out));
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<ValueId> entry;
    for (ValueId v : inputs) {
      const ValueId row = ctx.add(OpKind::Slice, {v},
                                  {{"starts", Ints{b}}, {"ends", Ints{b + 1}}, {"axes", Ints{0}}});
      entry.push_back(ctx.add(OpKind::Squeeze, {row}, {{"axes", Ints{0}}}));
    }
    std::vector<ValueId> state(entry.begin(), entry.begin() + f.states);
    const std::vector<ValueId> scanned_in(entry.begin() + f.states, entry.end());
    const std::vector<std::vector<ValueId>> scanned = unroll_scan(
        ctx, state, scanned_in, std::vector<int>(scanned_in.size(), 0), reversed,
        scan_length(ctx, scanned_in, std::vector<int>(scanned_in.size(), 0)), f.scanned_out);
    for (size_t i = 0; i < state.size(); ++i) final_states[i].push_back(state[i]);
    for (size_t k = 0; k < scanned.size(); ++k) outputs[k].push_back(stack(ctx, scanned[k], 0));
  }
  for (int i = 0; i < f.states; ++i) {
    ctx.set_output(i, stack(ctx, final_states[static_cast<size_t>(i)], 0));
  }
  for (int k = 0; k < f.scanned_out; ++k) {
    ctx.set_output(f.states + k, stack(ctx, outputs[static_cast<size_t>(k)], 0));
  }
}

// Scan 8 and Scan 9+ differ in form: one lowering reads both.
void lower_any_scan(LoweringContext& ctx) {
  if (ctx.since_version() < 9) {
    lower_scan_8(ctx);
  } else {
    lower_scan(ctx);
  }
}

}  // namespace

void register_logical_loop_lowerings(LoweringTable& table) {
  table.add_composite("Loop", OpFamily::Logical, 1, &lower_loop);
  table.add_composite("Scan", OpFamily::Logical, 8, &lower_any_scan);
}

}  // namespace volta::onnx
