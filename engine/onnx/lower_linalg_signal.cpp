// ONNX's signal ops, reported under Linalg: DFT (17, 20) and STFT (17) are MatMuls with DFT
// matrices computed at import time, and MelWeightMatrix (17) is the constant matrix a
// spectrogram is right-multiplied by. The arithmetic is that of ONNX's reference implementation
// (onnx/reference/ops/op_dft.py, op_stft.py, op_mel_weight_matrix.py): numpy's fft, rfft, ifft
// and irfft with `n = dft_length`.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <optional>
#include <string>
#include <vector>

#include "lower_elementwise.h"
#include "lowering.h"

namespace volta::onnx {
namespace {

using K = OpKind;

std::string str(int64_t v) { return std::to_string(v); }

void require_arity(LoweringContext& ctx, int max_inputs) {
  if (ctx.num_inputs() > max_inputs) {
    ctx.invalid("has " + str(ctx.num_inputs()) + " inputs; version " + str(ctx.since_version()) +
                " takes at most " + str(max_inputs));
  }
}

// Input `i` holds a signal [..., 1] (real) or [..., 2] (complex) of at least `min_rank` dims.
void require_signal(LoweringContext& ctx, int i, std::string_view what, int min_rank) {
  const TypeInfo& t = ctx.input_type(i);
  if (!kFloatTypes.contains(t.dtype)) {
    ctx.unsupported(std::string(what) + " of dtype " + std::string(dtype_name(t.dtype)) +
                    "; supported: f32, f64");
  }
  if (t.shape.rank() < min_rank ||
      (t.shape[t.shape.rank() - 1] != 1 && t.shape[t.shape.rank() - 1] != 2)) {
    ctx.invalid(std::string(what) + " has shape " + t.shape.str() + "; expected at least " +
                str(min_rank) + " dims, the last 1 (real) or 2 (complex)");
  }
}

// ---- The DFT as a MatMul --------------------------------------------------------------------

struct DftForm {
  int64_t length = 0;  // n of numpy's fft: the axis is zero-padded or truncated to it
  bool inverse = false;
  bool onesided = false;  // forward: the first length / 2 + 1 bins; inverse: irfft
};

// The bins of the output along the axis, and the parts of each (2: complex, 1: irfft's real).
int64_t output_bins(const DftForm& f) {
  return f.onesided && !f.inverse ? f.length / 2 + 1 : f.length;
}
int64_t output_parts(const DftForm& f) { return f.onesided && f.inverse ? 1 : 2; }

// The input positions that reach the output: those past `length` are truncated away (irfft
// reads the first length / 2 + 1 bins); zero padding beyond the axis adds nothing.
int64_t used_inputs(const DftForm& f, int64_t axis_size) {
  return std::min(axis_size, f.onesided && f.inverse ? f.length / 2 + 1 : f.length);
}

// The matrix W with x @ W the transform, x's rows (n, part) and W's columns (k, part)
// interleaved as ONNX lays complex values out. The angle 2 pi k n / length is reduced to
// 2 pi ((k n) mod length) / length exactly in integers first, so that cos and sin stay accurate
// for large lengths. Forward: y_k = sum_n x_n e^{-i theta}; inverse: x_n = 1/N sum_k y_k
// e^{+i theta}; irfft: the real part of the inverse of the Hermitian spectrum whose first
// bins are given (the others their conjugates; the imaginary parts of bin 0 and, for an even
// length, bin length / 2 do not count, as in numpy).
Tensor dft_matrix(DType dtype, const DftForm& f, int64_t rows, int64_t in_parts) {
  const int64_t bins = output_bins(f);
  const int64_t out_parts = output_parts(f);
  Tensor w(dtype, Shape{rows * in_parts, bins * out_parts});
  const int64_t cols = bins * out_parts;
  const double n_total = static_cast<double>(f.length);
  const double scale = f.inverse ? 1.0 / n_total : 1.0;
  const double sign = f.inverse ? 1.0 : -1.0;  // of the exponent
  for (int64_t n = 0; n < rows; ++n) {
    // irfft: every bin but 0 and an even length's last one stands for itself and its conjugate.
    const bool self_conjugate = n == 0 || 2 * n == f.length;
    const double weight = f.onesided && f.inverse ? (self_conjugate ? 1.0 : 2.0) * scale : scale;
    for (int64_t k = 0; k < bins; ++k) {
      const double theta =
          2.0 * std::numbers::pi * static_cast<double>((k * n) % f.length) / n_total;
      const double c = weight * std::cos(theta);
      const double s = weight * sign * std::sin(theta);  // e^{sign i theta} = c + i s
      // (a + i b)(c + i s) = (a c - b s) + i (a s + b c).
      const int64_t re_row = n * in_parts * cols;
      const int64_t im_row = re_row + cols;
      if (out_parts == 1) {
        w.set_double(re_row + k, c);
        if (in_parts == 2) w.set_double(im_row + k, self_conjugate ? 0.0 : -s);
        continue;
      }
      w.set_double(re_row + 2 * k, c);
      w.set_double(re_row + 2 * k + 1, s);
      if (in_parts == 2) {
        w.set_double(im_row + 2 * k, -s);
        w.set_double(im_row + 2 * k + 1, c);
      }
    }
  }
  return w;
}

// Refuses a DFT matrix too large to compute at import time (2^28 elements, as constant outputs).
void check_matrix_size(LoweringContext& ctx, const DftForm& f, int64_t rows) {
  constexpr double kMaxElements = 268435456.0;
  const double cols = static_cast<double>(output_bins(f)) * static_cast<double>(output_parts(f));
  if (static_cast<double>(rows) * cols > kMaxElements) {
    ctx.unsupported("dft_length " + str(f.length) + " over " + str(rows) +
                    " input values needs a DFT matrix of " + str(rows) + " rows by " +
                    str(output_bins(f)) + " bins of " + str(output_parts(f)) +
                    " parts; supported: at most 268435456 elements");
  }
}

// The DFT of x [..., L, parts] along its second-to-last axis: [..., bins, out_parts].
ValueId dft_of_last_signal_axis(LoweringContext& ctx, ValueId x, const DftForm& f) {
  Shape shape = ctx.type_of(x).shape;
  const int rank = shape.rank();
  const int64_t in_parts = shape[rank - 1];
  const int64_t rows = used_inputs(f, shape[rank - 2]);
  if (rows < shape[rank - 2]) {
    x = ctx.add(K::Slice, {x},
                {{"starts", Ints{0}}, {"ends", Ints{rows}}, {"axes", Ints{rank - 2}}});
  }
  check_matrix_size(ctx, f, rows * in_parts);
  Ints flat(shape.dims().begin(), shape.dims().end() - 2);
  flat.push_back(rows * in_parts);
  x = ctx.add(K::Reshape, {x}, {{"shape", flat}, {"allowzero", int64_t{1}}});
  const ValueId w = ctx.constant(dft_matrix(ctx.type_of(x).dtype, f, rows, in_parts));
  const ValueId y = ctx.add(K::MatMul, {x, w});
  Ints out(shape.dims().begin(), shape.dims().end() - 2);
  out.push_back(output_bins(f));
  out.push_back(output_parts(f));
  return ctx.add(K::Reshape, {y}, {{"shape", out}, {"allowzero", int64_t{1}}});
}

// DFT. Version 17 takes the axis as an attribute (default 1), version 20 as an optional input
// (default -2). Either counts the dims of the whole input, its last (complex) one included:
// [-r, -2] or [0, r - 2].
void lower_dft(LoweringContext& ctx) {
  const bool v20 = ctx.since_version() >= 20;
  require_arity(ctx, v20 ? 3 : 2);
  require_signal(ctx, 0, "input", 2);
  const Shape shape = ctx.input_type(0).shape;
  const int rank = shape.rank();
  int64_t axis = 0;
  if (v20) {
    axis = ctx.has_input(2) ? ctx.constant_int(2, "DFT axis") : -2;
  } else {
    axis = ctx.attr_int("axis", 1);
  }
  if (axis < -rank || axis > rank - 2 || axis == -1) {
    ctx.invalid("axis " + str(axis) + " is out of range for an input of rank " + str(rank) +
                "; expected [" + str(-rank) + ", -2] or [0, " + str(rank - 2) +
                "] (the last dim holds the complex parts)");
  }
  if (axis < 0) axis += rank;
  DftForm form;
  form.inverse = attr_flag(ctx, "inverse", 0);
  form.onesided = attr_flag(ctx, "onesided", 0);
  const int64_t axis_size = shape[static_cast<int>(axis)];
  if (ctx.has_input(1)) {
    form.length = ctx.constant_int(1, "dft_length");
  } else {
    form.length = form.inverse && form.onesided ? 2 * (axis_size - 1) : axis_size;
  }
  if (form.length < 1) {
    ctx.invalid("dft_length is " + str(form.length) +
                (ctx.has_input(1) ? "" : " (the default for axis size " + str(axis_size) + ")") +
                "; it must be at least 1");
  }
  // Move the axis next to the complex one, transform, and move it back.
  Ints perm;
  for (int d = 0; d < rank - 1; ++d) {
    if (d != axis) perm.push_back(d);
  }
  perm.push_back(axis);
  perm.push_back(rank - 1);
  const bool moved = axis != rank - 2;
  ValueId x = ctx.input(0);
  if (moved) x = ctx.add(K::Transpose, {x}, {{"perm", perm}});
  ValueId y = dft_of_last_signal_axis(ctx, x, form);
  if (moved) {
    Ints back(static_cast<size_t>(rank));
    for (int d = 0; d < rank; ++d) back[static_cast<size_t>(perm[static_cast<size_t>(d)])] = d;
    y = ctx.add(K::Transpose, {y}, {{"perm", back}});
  }
  ctx.set_output(0, y);
}

// ---- STFT ---------------------------------------------------------------------------------

// STFT of a signal [batch, length, parts]: the frames gathered with one constant index
// [frames, frame_length], weighted by the window, then each frame's DFT.
void lower_stft(LoweringContext& ctx) {
  require_arity(ctx, 4);
  require_signal(ctx, 0, "signal", 3);
  const Shape signal = ctx.input_type(0).shape;
  if (signal.rank() != 3) {
    ctx.invalid("signal has shape " + signal.str() + "; expected [batch, length, 1 or 2]");
  }
  const int64_t length = signal[1];
  const int64_t step = ctx.constant_int(1, "frame_step");
  if (step < 1) ctx.invalid("frame_step is " + str(step) + "; it must be at least 1");
  const bool windowed = ctx.has_input(2);
  if (windowed) {
    const TypeInfo& window = ctx.input_type(2);
    if (window.dtype != ctx.input_type(0).dtype || window.shape.rank() != 1) {
      ctx.invalid("window is " + std::string(dtype_name(window.dtype)) + " " + window.shape.str() +
                  "; expected a 1-D tensor of the signal's dtype " +
                  std::string(dtype_name(ctx.input_type(0).dtype)));
    }
  }
  int64_t frame = windowed ? ctx.input_type(2).shape[0] : length;
  if (ctx.has_input(3)) {
    frame = ctx.constant_int(3, "frame_length");
    if (windowed && frame != ctx.input_type(2).shape[0]) {
      ctx.invalid("frame_length is " + str(frame) + " but the window has " +
                  str(ctx.input_type(2).shape[0]) + " values; they must be equal");
    }
  }
  if (frame < 1 || frame > length) {
    ctx.invalid("frame_length is " + str(frame) + "; expected 1 to the signal length " +
                str(length));
  }
  DftForm form;
  form.length = frame;
  form.onesided = attr_flag(ctx, "onesided", 1);
  const int64_t frames = (length - frame) / step + 1;
  Tensor index(DType::I64, Shape{frames, frame});
  for (int64_t f = 0; f < frames; ++f) {
    for (int64_t n = 0; n < frame; ++n) index.set_int(f * frame + n, f * step + n);
  }
  // [batch, frames, frame_length, parts]
  ValueId x =
      ctx.add(K::Gather, {ctx.input(0), ctx.constant(std::move(index))}, {{"axis", int64_t{1}}});
  if (windowed) {
    const ValueId w = ctx.add(K::Reshape, {ctx.input(2)}, {{"shape", Ints{frame, 1}}});
    x = ctx.add(K::Mul, {x, w});
  }
  ctx.set_output(0, dft_of_last_signal_axis(ctx, x, form));
}

// ---- MelWeightMatrix ----------------------------------------------------------------------

double hz_to_mel(double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); }
double mel_to_hz(double mel) { return 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0); }

// Triangular filters between num_mel_bins + 2 edges spaced evenly in mel, each edge mapped to
// the spectrogram bin floor((dft_length + 1) * hz / sample_rate). As ONNX's reference
// implementation (and ONNX Runtime) have it, the mel step divides the range by
// num_mel_bins + 2, so that the last edge stops short of upper_edge_hertz. Computed in double.
void lower_mel_weight_matrix(LoweringContext& ctx) {
  const int64_t mel_bins = ctx.constant_int(0, "num_mel_bins");
  const int64_t dft_length = ctx.constant_int(1, "dft_length");
  const int64_t sample_rate = ctx.constant_int(2, "sample_rate");
  const double lower_hz = ctx.constant_scalar(3, "lower_edge_hertz");
  const double upper_hz = ctx.constant_scalar(4, "upper_edge_hertz");
  const int64_t elem_type = ctx.attr_int("output_datatype", 1);
  const std::optional<DType> dtype = dtype_from_onnx(elem_type);
  if (!dtype || *dtype == DType::Bool) {
    ctx.unsupported("output_datatype is " + onnx_type_name(elem_type) +
                    "; supported: " + onnx_names(kEveryNumericType));
  }
  if (mel_bins < 1 || dft_length < 1 || sample_rate < 1) {
    ctx.invalid("num_mel_bins " + str(mel_bins) + ", dft_length " + str(dft_length) +
                " and sample_rate " + str(sample_rate) + " must all be at least 1");
  }
  const int64_t spectrogram_bins = dft_length / 2 + 1;
  const Shape shape{spectrogram_bins, mel_bins};
  check_constant_size(ctx, shape);
  const double low_mel = hz_to_mel(lower_hz);
  const double mel_step = (hz_to_mel(upper_hz) - low_mel) / static_cast<double>(mel_bins + 2);
  std::vector<int64_t> edges;
  for (int64_t i = 0; i < mel_bins + 2; ++i) {
    const double hz = mel_to_hz(low_mel + static_cast<double>(i) * mel_step);
    const double bin =
        std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(sample_rate));
    if (!(bin >= 0 && bin < static_cast<double>(spectrogram_bins))) {  // NaN too
      ctx.invalid("lower_edge_hertz " + std::to_string(lower_hz) + " and upper_edge_hertz " +
                  std::to_string(upper_hz) + " put a filter edge at " + std::to_string(hz) +
                  " Hz, outside the " + str(spectrogram_bins) +
                  " spectrogram bins of sample_rate " + str(sample_rate) + " and dft_length " +
                  str(dft_length));
    }
    edges.push_back(static_cast<int64_t>(bin));
  }
  std::vector<double> m(static_cast<size_t>(spectrogram_bins * mel_bins), 0.0);
  const auto at = [&m, mel_bins](int64_t bin, int64_t mel) -> double& {
    return m[static_cast<size_t>(bin * mel_bins + mel)];
  };
  for (int64_t i = 0; i < mel_bins; ++i) {
    const int64_t left = edges[static_cast<size_t>(i)];
    const int64_t center = edges[static_cast<size_t>(i + 1)];
    const int64_t right = edges[static_cast<size_t>(i + 2)];
    if (center == left) {
      at(center, i) = 1.0;
    } else {
      for (int64_t j = left; j <= center; ++j) {
        at(j, i) = static_cast<double>(j - left) / static_cast<double>(center - left);
      }
    }
    for (int64_t j = center; j < right; ++j) {
      at(j, i) = static_cast<double>(right - j) / static_cast<double>(right - center);
    }
  }
  Tensor out(*dtype, shape);
  for (int64_t i = 0; i < out.numel(); ++i) out.set_double(i, m[static_cast<size_t>(i)]);
  ctx.set_output_constant(0, std::move(out));
}

}  // namespace

void register_linalg_signal_lowerings(LoweringTable& table) {
  table.add_composite("DFT", OpFamily::Linalg, 17, &lower_dft);
  table.add_composite("STFT", OpFamily::Linalg, 17, &lower_stft);
  table.add_composite("MelWeightMatrix", OpFamily::Linalg, 17, &lower_mel_weight_matrix);
}

}  // namespace volta::onnx
