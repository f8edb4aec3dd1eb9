#define BOOST_TEST_MODULE cpu_normalization_test
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "test_util.h"

namespace volta::test {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Visits the rows along `axis`: f(offsets of the row's elements, in axis order).
template <class F>
void for_each_row(const Shape& shape, int axis, const F& f) {
  const std::vector<int64_t> strides = shape.strides();
  const int64_t stride = strides[static_cast<size_t>(axis)];
  for (int64_t i = 0; i < shape.numel(); ++i) {
    if ((i / stride) % shape[axis] != 0) continue;
    std::vector<int64_t> row;
    for (int64_t k = 0; k < shape[axis]; ++k) row.push_back(i + k * stride);
    f(row);
  }
}

// The textbook formulas in double: softmax_i = e^(x_i) / sum_j e^(x_j), and its log.
Tensor expected_softmax(const Tensor& x, int axis, bool log) {
  Tensor want(x.dtype(), x.shape());
  for_each_row(x.shape(), axis, [&](const std::vector<int64_t>& row) {
    double sum = 0;
    for (int64_t i : row) sum += std::exp(x.get_double(i));
    for (int64_t i : row) {
      want.set_double(i, log ? x.get_double(i) - std::log(sum) : std::exp(x.get_double(i)) / sum);
    }
  });
  return want;
}

Tensor softmax(OpKind op, const Tensor& x, int64_t axis, int threads = 1) {
  return run_op(op, {x}, {{"axis", axis}}, 1, threads)[0];
}

// Moves the last axis of a rank-2 tensor first.
Tensor transposed(const Tensor& x) {
  const int64_t rows = x.shape()[0], cols = x.shape()[1];
  Tensor t(x.dtype(), {cols, rows});
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) t.set_double(c * rows + r, x.get_double(r * cols + c));
  }
  return t;
}

}  // namespace

// ---------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(softmax_ops)

BOOST_AUTO_TEST_CASE(by_hand) {
  const Tensor x = filled(DType::F64, {2, 2}, {0, std::log(3.0), 5, 5});
  check_close(softmax(OpKind::Softmax, x, -1), filled(DType::F64, {2, 2}, {0.25, 0.75, 0.5, 0.5}),
              1e-15, 1e-15);
  check_close(
      softmax(OpKind::LogSoftmax, x, 1),
      filled(DType::F64, {2, 2}, {std::log(0.25), std::log(0.75), -std::log(2.0), -std::log(2.0)}),
      1e-15, 1e-15);
  // Along axis 0 the columns are {0, 5} and {ln 3, 5}.
  const double e5 = std::exp(5.0);
  check_close(
      softmax(OpKind::Softmax, x, 0),
      filled(DType::F64, {2, 2}, {1 / (1 + e5), 3 / (3 + e5), e5 / (1 + e5), e5 / (3 + e5)}), 1e-15,
      1e-13);
}

BOOST_AUTO_TEST_CASE(matches_the_double_formula_on_every_axis) {
  for (DType dtype : {DType::F32, DType::F64}) {
    const Tensor x = uniform(dtype, {3, 4, 5}, 1);
    const double tol = dtype == DType::F32 ? 1e-6 : 1e-14;
    for (int64_t axis : {0, 1, 2, -1, -3}) {
      const int a = static_cast<int>(axis < 0 ? axis + 3 : axis);
      for (OpKind op : {OpKind::Softmax, OpKind::LogSoftmax}) {
        BOOST_TEST_CONTEXT(op_name(op) << " " << dtype_name(dtype) << " axis " << axis) {
          check_close(softmax(op, x, axis), expected_softmax(x, a, op == OpKind::LogSoftmax), tol,
                      tol);
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(large_inputs_do_not_overflow) {
  const Tensor x = filled(DType::F32, {2, 2}, {1000, 1001, -1000, -1e30});
  const double e = std::exp(1.0);
  check_close(softmax(OpKind::Softmax, x, 1),
              filled(DType::F32, {2, 2}, {1 / (1 + e), e / (1 + e), 1, 0}));
  check_close(softmax(OpKind::LogSoftmax, x, 1),
              filled(DType::F32, {2, 2}, {-std::log1p(e), 1 - std::log1p(e), 0, -1e30 + 1000}));
}

// Special values follow the arithmetic: the row max is subtracted first, so a row of all
// -inf is (-inf) - (-inf) = NaN (0 / 0), +inf makes inf - inf = NaN, NaN spreads to its row.
BOOST_AUTO_TEST_CASE(special_values) {
  const Tensor x =
      filled(DType::F32, {4, 3}, {-kInf, -kInf, -kInf, 1, kInf, 2, 0, kNaN, 1, 0, -kInf, 0});
  check_close(softmax(OpKind::Softmax, x, -1),
              filled(DType::F32, {4, 3},
                     {kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, 0.5, 0, 0.5}));
  check_close(softmax(OpKind::LogSoftmax, x, -1),
              filled(DType::F32, {4, 3},
                     {kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, -std::log(2.0), -kInf,
                      -std::log(2.0)}));
}

BOOST_AUTO_TEST_CASE(empty_and_size_one_axes) {
  for (OpKind op : {OpKind::Softmax, OpKind::LogSoftmax}) {
    BOOST_TEST(softmax(op, Tensor(DType::F32, {0, 5}), -1).numel() == 0);
    BOOST_TEST(softmax(op, Tensor(DType::F64, {5, 0}), 0).numel() == 0);
  }
  const Tensor column = uniform(DType::F32, {4, 1}, 2);
  check_close(softmax(OpKind::Softmax, column, 1), filled(DType::F32, {4, 1}, {1, 1, 1, 1}), 0, 0);
  check_close(softmax(OpKind::LogSoftmax, column, -1), filled(DType::F32, {4, 1}, {0, 0, 0, 0}), 0,
              0);
  const Tensor vector = filled(DType::F64, {3}, {1, 2, 3});
  check_close(softmax(OpKind::Softmax, vector, 0), expected_softmax(vector, 0, false), 1e-15,
              1e-15);
}

BOOST_AUTO_TEST_CASE(rows_around_the_leaf_size) {
  for (int64_t n : {4095, 4096, 4097, 3 * 4096 + 5}) {
    const Tensor x = uniform(DType::F32, {2, n}, static_cast<uint64_t>(n));
    BOOST_TEST_CONTEXT("n = " << n) {
      const Tensor y = softmax(OpKind::Softmax, x, 1);
      check_close(y, expected_softmax(x, 1, false), 1e-9, 2e-6);
      check_close(softmax(OpKind::LogSoftmax, x, 1), expected_softmax(x, 1, true), 2e-6, 2e-6);
      double row_sum = 0;
      for (int64_t i = 0; i < n; ++i) row_sum += y.get_double(i);
      BOOST_TEST(std::abs(row_sum - 1) < 1e-5);
    }
  }
}

// A row is computed the same way wherever it lies: a softmax along axis 0 gives the same bits
// as the softmax of the transposed tensor along its last axis.
BOOST_AUTO_TEST_CASE(strided_rows_match_contiguous_rows_bit_for_bit) {
  const Tensor x = uniform(DType::F32, {4097, 37}, 3);
  for (OpKind op : {OpKind::Softmax, OpKind::LogSoftmax}) {
    BOOST_TEST(transposed(softmax(op, x, 0)).bit_equal(softmax(op, transposed(x), 1)));
  }
}

// Contiguous rows run two at a time (their max and sum chains interleaved): each row still
// gets the bits it gets alone, and a NaN in one row of a pair leaves its partner alone.
BOOST_AUTO_TEST_CASE(rows_computed_in_pairs_match_rows_computed_alone) {
  constexpr int64_t kRows = 5;  // two pairs and a single row
  for (int64_t n : {1, 7, 16, 300, 4097}) {
    Tensor x = uniform(DType::F32, {kRows, n}, static_cast<uint64_t>(n) + 11);
    x.data_as<float>()[n + n / 2] = kNaN;  // row 1, the partner of row 0
    for (OpKind op : {OpKind::Softmax, OpKind::LogSoftmax}) {
      const Tensor all = softmax(op, x, 1);
      for (int64_t r = 0; r < kRows; ++r) {
        Tensor row(DType::F32, {1, n});
        std::copy_n(x.data_as<float>() + r * n, n, row.data_as<float>());
        const Tensor alone = softmax(op, row, 1);
        BOOST_TEST_CONTEXT(op_name(op) << " n = " << n << " row " << r) {
          const auto* want = alone.data_as<float>();
          const auto* got = all.data_as<float>() + r * n;
          int64_t differing = 0, nans = 0;
          for (int64_t i = 0; i < n; ++i) {
            differing += std::bit_cast<uint32_t>(got[i]) != std::bit_cast<uint32_t>(want[i]);
            nans += std::isnan(got[i]);
          }
          BOOST_TEST(differing == 0);
          BOOST_TEST(nans == (r == 1 ? n : 0));
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(results_do_not_depend_on_the_thread_count) {
  const Tensor x = uniform(DType::F32, {64, 5000}, 4);
  for (OpKind op : {OpKind::Softmax, OpKind::LogSoftmax}) {
    for (int64_t axis : {0, 1}) {
      const Tensor one = softmax(op, x, axis, 1);
      for (int threads : {2, 3, 4, 8}) {
        BOOST_TEST_CONTEXT(op_name(op) << " axis " << axis << " threads " << threads) {
          BOOST_TEST(softmax(op, x, axis, threads).bit_equal(one));
        }
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(layer_normalization)

struct LayerNormResult {
  Tensor y, mean, inv_std_dev;
};

// Runs LayerNormalization with all three outputs; `bias` may be absent.
LayerNormResult layer_norm(const Tensor& x, const Tensor& scale, const std::optional<Tensor>& bias,
                           int64_t axis, double epsilon, int threads = 1) {
  std::vector<std::optional<TypeInfo>> types = {TypeInfo{x.dtype(), x.shape()},
                                                TypeInfo{scale.dtype(), scale.shape()}};
  std::vector<Tensor> inputs = {x, scale};
  if (bias) {
    types.push_back(TypeInfo{bias->dtype(), bias->shape()});
    inputs.push_back(*bias);
  }
  const Attributes attrs = {{"axis", axis}, {"epsilon", epsilon}};
  std::vector<Tensor> out =
      run_cpu(single_op_graph(OpKind::LayerNormalization, types, attrs, 3), inputs, threads);
  return {out[0], out[1], out[2]};
}

// The definition in double: per row over axes [axis, rank), mean, population variance,
// (x - mean) / sqrt(var + epsilon) * scale + bias, with scale and bias broadcast to the row.
LayerNormResult expected_layer_norm(const Tensor& x, const Tensor& scale,
                                    const std::optional<Tensor>& bias, int axis, double epsilon) {
  int64_t rows = 1;
  for (int i = 0; i < axis; ++i) rows *= x.shape()[i];
  const int64_t n = rows == 0 ? 0 : x.numel() / rows;
  std::vector<int64_t> stats_dims = x.shape().dims();
  for (size_t i = static_cast<size_t>(axis); i < stats_dims.size(); ++i) stats_dims[i] = 1;
  LayerNormResult want{Tensor(x.dtype(), x.shape()), Tensor(x.dtype(), Shape(stats_dims)),
                       Tensor(x.dtype(), Shape(stats_dims))};
  // Scale and bias of fewer elements than a row repeat with their own period (trailing-aligned
  // broadcasting of shapes that differ only by leading ones or by being a suffix).
  const auto at = [](const Tensor& t, int64_t i) { return t.get_double(i % t.numel()); };
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0, squares = 0;
    for (int64_t i = 0; i < n; ++i) sum += x.get_double(r * n + i);
    const double mean = sum / static_cast<double>(n);
    for (int64_t i = 0; i < n; ++i) squares += std::pow(x.get_double(r * n + i) - mean, 2);
    const double inv_std = 1 / std::sqrt(squares / static_cast<double>(n) + epsilon);
    for (int64_t i = 0; i < n; ++i) {
      const double normalized = (x.get_double(r * n + i) - mean) * inv_std;
      want.y.set_double(r * n + i, normalized * at(scale, i) + (bias ? at(*bias, i) : 0.0));
    }
    want.mean.set_double(r, mean);
    want.inv_std_dev.set_double(r, inv_std);
  }
  return want;
}

void check_layer_norm(const LayerNormResult& got, const LayerNormResult& want, double tol) {
  check_close(got.y, want.y, tol, tol);
  check_close(got.mean, want.mean, tol, tol);
  check_close(got.inv_std_dev, want.inv_std_dev, tol, tol);
}

BOOST_AUTO_TEST_CASE(by_hand) {
  const Tensor x = filled(DType::F64, {1, 4}, {1, 2, 3, 4});
  const Tensor scale = filled(DType::F64, {4}, {1, 1, 2, 2});
  const Tensor bias = filled(DType::F64, {4}, {0, 0, 0, 10});
  const double inv = 1 / std::sqrt(1.25);  // mean 2.5, variance (2.25 + .25 + .25 + 2.25) / 4
  const LayerNormResult got = layer_norm(x, scale, bias, -1, 0.0);
  check_close(got.y, filled(DType::F64, {1, 4}, {-1.5 * inv, -0.5 * inv, 1.0 * inv, 3 * inv + 10}),
              1e-15, 1e-15);
  check_close(got.mean, filled(DType::F64, {1, 1}, {2.5}), 0, 0);
  check_close(got.inv_std_dev, filled(DType::F64, {1, 1}, {inv}), 1e-15, 1e-15);
}

BOOST_AUTO_TEST_CASE(matches_the_double_definition_for_each_axis_and_broadcast) {
  for (DType dtype : {DType::F32, DType::F64}) {
    const double tol = dtype == DType::F32 ? 5e-6 : 1e-13;
    const Tensor x = uniform(dtype, {2, 3, 4}, 5);
    struct Case {
      int64_t axis;
      Shape scale, bias;
    };
    for (const Case& c : {Case{-1, {4}, {4}}, Case{2, {4}, {1}}, Case{1, {3, 4}, {4}},
                          Case{-2, {1, 4}, {3, 1}}, Case{0, {2, 3, 4}, {1, 1, 4}}}) {
      const Tensor scale = uniform(dtype, c.scale, 6, 0.5, 2);
      const Tensor bias = uniform(dtype, c.bias, 7);
      const int a = static_cast<int>(c.axis < 0 ? c.axis + 3 : c.axis);
      BOOST_TEST_CONTEXT(dtype_name(dtype) << " axis " << c.axis << " scale " << c.scale.str()
                                           << " bias " << c.bias.str()) {
        // Bias [3, 1] on a [3, 4] row varies per row of the block, which the periodic oracle
        // cannot express: expand it by hand.
        Tensor full_bias = bias;
        if (c.bias == Shape({3, 1})) {
          full_bias = Tensor(dtype, {3, 4});
          for (int64_t i = 0; i < 12; ++i) full_bias.set_double(i, bias.get_double(i / 4));
        }
        check_layer_norm(layer_norm(x, scale, bias, c.axis, 1e-5),
                         expected_layer_norm(x, scale, full_bias, a, 1e-5), tol);
        check_layer_norm(layer_norm(x, scale, std::nullopt, c.axis, 1e-3),
                         expected_layer_norm(x, scale, std::nullopt, a, 1e-3), tol);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(fewer_declared_outputs_give_the_same_values) {
  const Tensor x = uniform(DType::F32, {3, 8}, 8);
  const Tensor scale = uniform(DType::F32, {8}, 9);
  const LayerNormResult all = layer_norm(x, scale, std::nullopt, 1, 1e-5);
  const std::vector<std::optional<TypeInfo>> types = {TypeInfo{DType::F32, {3, 8}},
                                                      TypeInfo{DType::F32, {8}}};
  for (int outputs : {1, 2}) {
    const std::vector<Tensor> got =
        run_cpu(single_op_graph(OpKind::LayerNormalization, types, {{"axis", int64_t{1}}}, outputs),
                {x, scale});
    BOOST_REQUIRE_EQUAL(static_cast<int>(got.size()), outputs);
    BOOST_TEST(got[0].bit_equal(all.y));
    if (outputs == 2) BOOST_TEST(got[1].bit_equal(all.mean));
  }
}

BOOST_AUTO_TEST_CASE(constant_rows_nan_and_empty) {
  // A constant row has variance 0: y = 0 * scale + bias, InvStdDev = 1 / sqrt(epsilon).
  const Tensor x = filled(DType::F32, {2, 3}, {7, 7, 7, 1, kNaN, 2});
  const Tensor scale = filled(DType::F32, {3}, {1, 2, 3});
  const Tensor bias = filled(DType::F32, {3}, {-1, 0, 1});
  const LayerNormResult got = layer_norm(x, scale, bias, 1, 0.25);
  check_close(got.y, filled(DType::F32, {2, 3}, {-1, 0, 1, kNaN, kNaN, kNaN}));
  check_close(got.mean, filled(DType::F32, {2, 1}, {7, kNaN}));
  check_close(got.inv_std_dev, filled(DType::F32, {2, 1}, {2, kNaN}));

  const LayerNormResult no_rows = layer_norm(Tensor(DType::F32, {0, 3}), scale, bias, 1, 1e-5);
  BOOST_TEST(no_rows.y.numel() == 0);
  BOOST_TEST(no_rows.mean.shape().str() == "[0,1]");
  // Rows of no elements: the mean of nothing is 0 / 0.
  const LayerNormResult empty_rows =
      layer_norm(Tensor(DType::F64, {2, 0}), Tensor(DType::F64, {0}), std::nullopt, 1, 1e-5);
  check_close(empty_rows.mean, filled(DType::F64, {2, 1}, {kNaN, kNaN}));
  check_close(empty_rows.inv_std_dev, filled(DType::F64, {2, 1}, {kNaN, kNaN}));
}

BOOST_AUTO_TEST_CASE(rows_around_the_leaf_size) {
  for (int64_t n : {4095, 4096, 4097, 3 * 4096 + 5}) {
    const Tensor x = uniform(DType::F32, {2, n}, static_cast<uint64_t>(n), 10, 12);
    const Tensor scale = uniform(DType::F32, {n}, 10, 0.5, 2);
    const Tensor bias = uniform(DType::F32, {n}, 11);
    BOOST_TEST_CONTEXT("n = " << n) {
      check_layer_norm(layer_norm(x, scale, bias, 1, 1e-5),
                       expected_layer_norm(x, scale, bias, 1, 1e-5), 2e-5);
    }
  }
}

BOOST_AUTO_TEST_CASE(results_do_not_depend_on_the_thread_count) {
  const Tensor x = uniform(DType::F32, {64, 5000}, 12);
  const Tensor scale = uniform(DType::F32, {5000}, 13);
  const Tensor bias = uniform(DType::F32, {5000}, 14);
  const LayerNormResult one = layer_norm(x, scale, bias, 1, 1e-5, 1);
  for (int threads : {2, 3, 4, 8}) {
    BOOST_TEST_CONTEXT("threads " << threads) {
      const LayerNormResult got = layer_norm(x, scale, bias, 1, 1e-5, threads);
      BOOST_TEST(got.y.bit_equal(one.y));
      BOOST_TEST(got.mean.bit_equal(one.mean));
      BOOST_TEST(got.inv_std_dev.bit_equal(one.inv_std_dev));
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace volta::test
