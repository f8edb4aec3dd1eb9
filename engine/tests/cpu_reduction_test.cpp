#define BOOST_TEST_MODULE cpu_reduction_test
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "test_util.h"

namespace volta::test {
namespace {

using Ints = std::vector<int64_t>;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Attributes reduce_attrs(const Ints& axes, int64_t keepdims) {
  return {{"axes", axes}, {"keepdims", keepdims}};
}

Tensor run1(OpKind op, const Tensor& x, Attributes attrs, int threads = 1) {
  return run_op(op, {x}, std::move(attrs), 1, threads)[0];
}

// ---------------------------------------------------------------------------------------
// The oracle: groups input elements by output position with a plain multi-index walk, then
// applies each op's textbook formula in double.

struct Grouped {
  Shape shape;  // the output shape
  std::vector<std::vector<double>> rows;
};

Grouped group_by_output(const Tensor& x, const Ints& axes_given, bool keepdims) {
  const int rank = x.shape().rank();
  std::vector<bool> reduced(static_cast<size_t>(rank), axes_given.empty());
  for (int64_t a : axes_given) reduced[static_cast<size_t>(a < 0 ? a + rank : a)] = true;
  std::vector<int64_t> out_dims, kept_dims;
  for (int d = 0; d < rank; ++d) {
    if (!reduced[static_cast<size_t>(d)]) kept_dims.push_back(x.shape()[d]);
    if (!reduced[static_cast<size_t>(d)] || keepdims) {
      out_dims.push_back(reduced[static_cast<size_t>(d)] ? 1 : x.shape()[d]);
    }
  }
  Grouped g{Shape(out_dims), {}};
  g.rows.resize(static_cast<size_t>(Shape(kept_dims).numel()));
  std::vector<int64_t> index(static_cast<size_t>(rank), 0);
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t rest = i;
    for (int d = rank - 1; d >= 0; --d) {
      index[static_cast<size_t>(d)] = rest % x.shape()[d];
      rest /= x.shape()[d];
    }
    int64_t out = 0;
    for (int d = 0; d < rank; ++d) {
      if (!reduced[static_cast<size_t>(d)])
        out = out * x.shape()[d] + index[static_cast<size_t>(d)];
    }
    g.rows[static_cast<size_t>(out)].push_back(x.get_double(i));
  }
  return g;
}

double formula(OpKind op, const std::vector<double>& v) {
  double sum = 0, sum_sq = 0, sum_abs = 0, prod = 1, max = -kInf, min = kInf;
  bool nan = false;
  for (double e : v) {
    sum += e;
    sum_sq += e * e;
    sum_abs += std::abs(e);
    prod *= e;
    nan = nan || std::isnan(e);
    max = std::max(max, e);
    min = std::min(min, e);
  }
  switch (op) {
    case OpKind::ReduceSum:
      return sum;
    case OpKind::ReduceMean:
      return sum / static_cast<double>(v.size());
    case OpKind::ReduceMax:
      return nan ? kNaN : max;
    case OpKind::ReduceMin:
      return nan ? kNaN : min;
    case OpKind::ReduceProd:
      return prod;
    case OpKind::ReduceSumSquare:
      return sum_sq;
    case OpKind::ReduceL1:
      return sum_abs;
    case OpKind::ReduceL2:
      return std::sqrt(sum_sq);
    case OpKind::ReduceLogSumExp: {
      double exp_sum = 0;
      for (double e : v) exp_sum += std::exp(e);
      return std::log(exp_sum);
    }
    default:
      BOOST_FAIL("not a Reduce op");
      return 0;
  }
}

Tensor expected_reduce(OpKind op, const Tensor& x, const Ints& axes, bool keepdims) {
  const Grouped g = group_by_output(x, axes, keepdims);
  Tensor want(x.dtype(), g.shape);
  for (size_t o = 0; o < g.rows.size(); ++o) {
    want.set_double(static_cast<int64_t>(o), formula(op, g.rows[o]));
  }
  return want;
}

const std::vector<OpKind> kFloatReduceOps = {
    OpKind::ReduceSum, OpKind::ReduceMean, OpKind::ReduceMax,
    OpKind::ReduceMin, OpKind::ReduceProd, OpKind::ReduceSumSquare,
    OpKind::ReduceL1,  OpKind::ReduceL2,   OpKind::ReduceLogSumExp};
const std::vector<OpKind> kIntReduceOps = {OpKind::ReduceSum,       OpKind::ReduceMax,
                                           OpKind::ReduceMin,       OpKind::ReduceProd,
                                           OpKind::ReduceSumSquare, OpKind::ReduceL1};

}  // namespace

// ---------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(reduce_ops)

BOOST_AUTO_TEST_CASE(sum_by_hand_over_each_axis_set) {
  const Tensor x = filled(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  check_close(run1(OpKind::ReduceSum, x, reduce_attrs({0}, 0)), filled(DType::F32, {3}, {5, 7, 9}));
  check_close(run1(OpKind::ReduceSum, x, reduce_attrs({-1}, 1)),
              filled(DType::F32, {2, 1}, {6, 15}));
  check_close(run1(OpKind::ReduceSum, x, reduce_attrs({}, 1)), filled(DType::F32, {1, 1}, {21}));
  check_close(run1(OpKind::ReduceSum, x, reduce_attrs({0, 1}, 0)), filled(DType::F32, {}, {21}));
}

BOOST_AUTO_TEST_CASE(each_op_by_hand) {
  const Tensor x = filled(DType::F64, {2, 2}, {1, -2, 3, 4});
  const Attributes rows = reduce_attrs({1}, 0);
  const auto want = [](const std::vector<double>& v) { return filled(DType::F64, {2}, v); };
  check_close(run1(OpKind::ReduceSum, x, rows), want({-1, 7}));
  check_close(run1(OpKind::ReduceMean, x, rows), want({-0.5, 3.5}));
  check_close(run1(OpKind::ReduceMax, x, rows), want({1, 4}));
  check_close(run1(OpKind::ReduceMin, x, rows), want({-2, 3}));
  check_close(run1(OpKind::ReduceProd, x, rows), want({-2, 12}));
  check_close(run1(OpKind::ReduceSumSquare, x, rows), want({5, 25}));
  check_close(run1(OpKind::ReduceL1, x, rows), want({3, 7}));
  check_close(run1(OpKind::ReduceL2, x, rows), want({std::sqrt(5.0), 5}));
  check_close(
      run1(OpKind::ReduceLogSumExp, x, rows),
      want({std::log(std::exp(1.0) + std::exp(-2.0)), std::log(std::exp(3.0) + std::exp(4.0))}),
      1e-12, 1e-12);
}

BOOST_AUTO_TEST_CASE(every_op_matches_the_double_formula_on_many_axis_sets) {
  const std::vector<Ints> axis_sets = {{0},  {2},      {1},    {0, 2},   {},
                                       {-1}, {-3, -1}, {1, 2}, {0, 1, 2}};
  for (DType dtype : {DType::F32, DType::F64}) {
    const Tensor x = uniform(dtype, {3, 4, 5}, 7, 0.5, 1.5);  // positive: Prod stays tame
    const double tol = dtype == DType::F32 ? 2e-6 : 1e-13;
    for (OpKind op : kFloatReduceOps) {
      for (const Ints& axes : axis_sets) {
        for (int64_t keepdims : {0, 1}) {
          BOOST_TEST_CONTEXT(op_name(op) << " " << dtype_name(dtype) << " axes "
                                         << Shape(axes).str() << " keepdims " << keepdims) {
            check_close(run1(op, x, reduce_attrs(axes, keepdims)),
                        expected_reduce(op, x, axes, keepdims != 0), tol, tol);
          }
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(integer_ops_are_exact_and_wrap) {
  for (DType dtype : {DType::I32, DType::I64}) {
    Tensor x(dtype, {3, 4});
    for (int64_t i = 0; i < 12; ++i) x.set_int(i, (i * 7) % 11 - 5);
    for (OpKind op : kIntReduceOps) {
      for (const Ints& axes : {Ints{0}, Ints{1}, Ints{}}) {
        BOOST_TEST_CONTEXT(op_name(op) << " " << dtype_name(dtype) << Shape(axes).str()) {
          const Tensor got = run1(op, x, reduce_attrs(axes, 1));
          BOOST_TEST(got.bit_equal(expected_reduce(op, x, axes, true)));
        }
      }
    }
  }
  const int32_t big = std::numeric_limits<int32_t>::max();
  const Tensor wraps = Tensor::from<int32_t>({2}, {big, 1});
  BOOST_TEST(run1(OpKind::ReduceSum, wraps, reduce_attrs({}, 0)).get_int(0) ==
             std::numeric_limits<int32_t>::min());
  const Tensor squares = Tensor::from<int64_t>({1}, {int64_t{1} << 32});
  BOOST_TEST(run1(OpKind::ReduceSumSquare, squares, reduce_attrs({}, 0)).get_int(0) == 0);
}

BOOST_AUTO_TEST_CASE(empty_reduced_axes_give_each_identity) {
  const Tensor x(DType::F32, {0, 3});
  const auto want = [](double v) { return filled(DType::F32, {3}, {v, v, v}); };
  const Attributes over_empty = reduce_attrs({0}, 0);
  check_close(run1(OpKind::ReduceSum, x, over_empty), want(0));
  check_close(run1(OpKind::ReduceSumSquare, x, over_empty), want(0));
  check_close(run1(OpKind::ReduceL1, x, over_empty), want(0));
  check_close(run1(OpKind::ReduceL2, x, over_empty), want(0));
  check_close(run1(OpKind::ReduceProd, x, over_empty), want(1));
  check_close(run1(OpKind::ReduceMean, x, over_empty), want(kNaN));
  check_close(run1(OpKind::ReduceMax, x, over_empty), want(-kInf));
  check_close(run1(OpKind::ReduceMin, x, over_empty), want(kInf));
  check_close(run1(OpKind::ReduceLogSumExp, x, over_empty), want(-kInf));

  const Tensor xi(DType::I32, {3, 0});
  BOOST_TEST(run1(OpKind::ReduceMax, xi, reduce_attrs({1}, 0))
                 .bit_equal(Tensor::from<int32_t>({3}, {INT32_MIN, INT32_MIN, INT32_MIN})));
  BOOST_TEST(run1(OpKind::ReduceMin, xi, reduce_attrs({-1}, 0))
                 .bit_equal(Tensor::from<int32_t>({3}, {INT32_MAX, INT32_MAX, INT32_MAX})));
  // No outputs at all: reducing the non-empty axis of [0, 3].
  BOOST_TEST(run1(OpKind::ReduceSum, x, reduce_attrs({1}, 1)).shape().str() == "[0,1]");
}

BOOST_AUTO_TEST_CASE(size_one_dims_and_scalars) {
  const Tensor x = filled(DType::F32, {1, 4, 1}, {1, 2, 3, 4});
  check_close(run1(OpKind::ReduceSum, x, reduce_attrs({0, 2}, 0)),
              filled(DType::F32, {4}, {1, 2, 3, 4}));
  check_close(run1(OpKind::ReduceMax, x, reduce_attrs({1}, 1)), filled(DType::F32, {1, 1, 1}, {4}));

  const Tensor scalar = filled(DType::F64, {}, {-3});
  const auto want = [](double v) { return filled(DType::F64, {}, {v}); };
  check_close(run1(OpKind::ReduceSum, scalar, {}), want(-3));
  check_close(run1(OpKind::ReduceSumSquare, scalar, {}), want(9));
  check_close(run1(OpKind::ReduceL1, scalar, {}), want(3));
  check_close(run1(OpKind::ReduceL2, scalar, {}), want(3));
  check_close(run1(OpKind::ReduceMean, scalar, {}), want(-3));
  check_close(run1(OpKind::ReduceLogSumExp, scalar, {}), want(-3));
}

BOOST_AUTO_TEST_CASE(noop_with_empty_axes_is_the_identity_without_the_map) {
  const Tensor x = filled(DType::F32, {2}, {-2, 3});
  const Attributes noop = {{"noop_with_empty_axes", int64_t{1}}};
  for (OpKind op : {OpKind::ReduceSumSquare, OpKind::ReduceL1, OpKind::ReduceLogSumExp}) {
    BOOST_TEST(run1(op, x, noop).bit_equal(x));
  }
}

BOOST_AUTO_TEST_CASE(nan_and_infinity) {
  const Tensor x = filled(DType::F32, {3, 3}, {1, kNaN, 2, kInf, -kInf, 0, -kInf, -kInf, -kInf});
  const Attributes rows = reduce_attrs({1}, 0);
  const auto want = [](double a, double b, double c) { return filled(DType::F32, {3}, {a, b, c}); };
  check_close(run1(OpKind::ReduceMax, x, rows), want(kNaN, kInf, -kInf));
  check_close(run1(OpKind::ReduceMin, x, rows), want(kNaN, -kInf, -kInf));
  check_close(run1(OpKind::ReduceSum, x, rows), want(kNaN, kNaN, -kInf));
  check_close(run1(OpKind::ReduceLogSumExp, x, rows), want(kNaN, kInf, -kInf));
  check_close(run1(OpKind::ReduceL2, x, rows), want(kNaN, kInf, kInf));
  // A NaN anywhere in a long row reaches the result through every level of the tree.
  Tensor long_row = uniform(DType::F32, {3 * 4096 + 5}, 3);
  long_row.set_double(9000, kNaN);
  BOOST_TEST(std::isnan(run1(OpKind::ReduceMax, long_row, reduce_attrs({}, 0)).get_double(0)));
  BOOST_TEST(std::isnan(run1(OpKind::ReduceMin, long_row, reduce_attrs({}, 0)).get_double(0)));
}

// Every NaN a reduction writes is the canonical quiet NaN, whichever NaN its row held or made
// (+Inf + -Inf gives the negative default NaN on x86): which one a chain of additions keeps
// depends on operand order, which the compiler may commute.
BOOST_AUTO_TEST_CASE(a_nan_result_is_the_canonical_quiet_nan) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const float payload_nan = std::bit_cast<float>(uint32_t{0x7FC01234});
  Tensor x(DType::F32, Shape({4, 3}));
  const float values[] = {-nan, 1, 2, inf, -inf, 3, payload_nan, 4, -nan, 5, nan, -inf};
  std::memcpy(x.data(), values, sizeof values);
  const uint32_t canonical = std::bit_cast<uint32_t>(std::numeric_limits<float>::quiet_NaN());
  for (const OpKind op : {OpKind::ReduceSum, OpKind::ReduceMean, OpKind::ReduceMax,
                          OpKind::ReduceMin, OpKind::ReduceSumSquare, OpKind::ReduceL1,
                          OpKind::ReduceL2, OpKind::ReduceProd, OpKind::ReduceLogSumExp}) {
    const Tensor y = run1(op, x, reduce_attrs({1}, 0));
    for (int64_t row = 0; row < 4; ++row) {
      const float got = static_cast<const float*>(y.data())[row];
      // Row 1 (+Inf, -Inf, 3) makes a NaN only where +Inf meets -Inf: in a sum.
      if (row == 1 && op != OpKind::ReduceSum && op != OpKind::ReduceMean) continue;
      BOOST_TEST(
          std::bit_cast<uint32_t>(got) == canonical,
          op_name(op) << " row " << row << ": 0x" << std::hex << std::bit_cast<uint32_t>(got));
    }
  }
}

// ReduceProd keeps its exponent apart and ReduceL2 sums f32 squares in double (the op table's
// Wide accumulator): partial results that would overflow f32, or even double, do not decide
// a finite answer.
BOOST_AUTO_TEST_CASE(wide_accumulators_outlast_partial_overflow) {
  const Attributes all = reduce_attrs({}, 0);
  // 2^100 twelve times overflows double (2^1200) before the 0 at the end: still 0, in both
  // dtypes, and the row of 4097 puts the 0 in another leaf of the tree.
  for (DType dtype : {DType::F32, DType::F64}) {
    std::vector<double> values(13, std::ldexp(1.0, 100));
    values.back() = 0.0;
    BOOST_TEST(run1(OpKind::ReduceProd, filled(dtype, {13}, values), all).get_double(0) == 0.0);
    Tensor row = filled(dtype, {4097}, std::vector<double>(4097, 1e30));
    row.set_double(4096, 0.0);
    BOOST_TEST(run1(OpKind::ReduceProd, row, all).get_double(0) == 0.0);
    // 1e30 * 1e30 * 1e-30 * 1e-30: f32 partial products overflow, the product is ~1.
    BOOST_TEST(run1(OpKind::ReduceProd, filled(dtype, {4}, {1e30, 1e30, 1e-30, 1e-30}), all)
                       .get_double(0) == 1.0,
               boost::test_tools::tolerance(1e-6));
    check_close(run1(OpKind::ReduceL2, filled(dtype, {2}, {1e30, 1e30}), all),
                filled(dtype, {}, {std::sqrt(2.0) * 1e30}), 0, 1e-6);
  }
  // A product that really overflows is still +Inf, and 0 * Inf is still NaN.
  BOOST_TEST(std::isinf(
      run1(OpKind::ReduceProd, filled(DType::F32, {2}, {1e30, 1e30}), all).get_double(0)));
  BOOST_TEST(
      std::isnan(run1(OpKind::ReduceProd, filled(DType::F32, {2}, {kInf, 0}), all).get_double(0)));
}

// Rows of small integers sum exactly in f32, so the answer is known to the last bit.
BOOST_AUTO_TEST_CASE(rows_around_the_leaf_size_are_exact) {
  for (int64_t n : {4095, 4096, 4097, 3 * 4096 + 5}) {
    Tensor x(DType::F32, {2, n});
    double want_sum[2] = {0, 0};
    for (int64_t i = 0; i < 2 * n; ++i) {
      const int64_t v = (i * 37) % 19 - 9;
      x.set_double(i, static_cast<double>(v));
      want_sum[i / n] += static_cast<double>(v);
    }
    BOOST_TEST_CONTEXT("n = " << n) {
      check_close(run1(OpKind::ReduceSum, x, reduce_attrs({1}, 0)),
                  filled(DType::F32, {2}, {want_sum[0], want_sum[1]}), 0, 0);
      check_close(run1(OpKind::ReduceMax, x, reduce_attrs({1}, 0)), filled(DType::F32, {2}, {9, 9}),
                  0, 0);
      const Tensor r = uniform(DType::F32, {n}, static_cast<uint64_t>(n));
      check_close(run1(OpKind::ReduceL2, r, reduce_attrs({}, 0)),
                  expected_reduce(OpKind::ReduceL2, r, {}, false), 1e-5, 1e-5);
    }
  }
}

// The tree depends on the row length alone: reducing a strided axis gives the same bits as
// reducing the same rows laid out contiguously.
BOOST_AUTO_TEST_CASE(strided_rows_match_contiguous_rows_bit_for_bit) {
  for (int64_t n : {4097, 3 * 4096 + 5}) {
    const Tensor x = uniform(DType::F32, {2, n, 3}, 11);
    Tensor moved(DType::F32, {2, 3, n});  // x with its middle axis moved last
    for (int64_t a = 0; a < 2; ++a) {
      for (int64_t r = 0; r < n; ++r) {
        for (int64_t c = 0; c < 3; ++c) {
          moved.set_double((a * 3 + c) * n + r, x.get_double((a * n + r) * 3 + c));
        }
      }
    }
    for (OpKind op : {OpKind::ReduceSum, OpKind::ReduceLogSumExp, OpKind::ReduceL2}) {
      BOOST_TEST_CONTEXT(op_name(op) << " n = " << n) {
        BOOST_TEST(
            run1(op, x, reduce_attrs({1}, 0)).bit_equal(run1(op, moved, reduce_attrs({2}, 0))));
        // Axes {0, 1} of x and axes {0, 2} of moved both read rows in (a, r) order.
        BOOST_TEST(run1(op, x, reduce_attrs({0, 1}, 0))
                       .bit_equal(run1(op, moved, reduce_attrs({0, 2}, 0))));
      }
    }
  }
}

// Reducing the middle axis of [2, n, c] reads c neighbouring outputs per step, in blocks of up
// to 1024 outputs (256 for ReduceProd's accumulator, 512 for ReduceL2's double): a run of
// 1030 columns splits into a full block and a short one, two rows of more than one leaf, and
// every output still gets the bits of its row reduced contiguously, at any thread count (and
// block width: many threads narrow the blocks).
BOOST_AUTO_TEST_CASE(wide_column_blocks_match_contiguous_rows_bit_for_bit) {
  const int64_t n = 4099;
  const int64_t c = 1030;
  Tensor x = uniform(DType::F32, {2, n, c}, 12);
  x.set_double((1 * n + 4098) * c + 1029, kNaN);  // in the short block of the second run
  x.set_double((0 * n + 17) * c + 3, kNaN);       // in the full block of the first run
  Tensor moved(DType::F32, {2, c, n});            // x with its middle axis moved last
  for (int64_t a = 0; a < 2; ++a) {
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t k = 0; k < c; ++k) {
        moved.set_double((a * c + k) * n + r, x.get_double((a * n + r) * c + k));
      }
    }
  }
  for (OpKind op : {OpKind::ReduceSum, OpKind::ReduceMax, OpKind::ReduceMin, OpKind::ReduceL2,
                    OpKind::ReduceProd}) {
    BOOST_TEST_CONTEXT(op_name(op)) {
      const Tensor want = run1(op, moved, reduce_attrs({2}, 0));
      BOOST_TEST(std::isnan(want.get_double(3)));  // every op propagates NaN
      BOOST_TEST(std::isnan(want.get_double(2 * c - 1)));
      BOOST_TEST(!std::isnan(want.get_double(4)));
      for (int threads : {1, 3, 16}) {  // 16 threads narrow the blocks to keep them busy
        BOOST_TEST(run1(op, x, reduce_attrs({1}, 0), threads).bit_equal(want));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(results_do_not_depend_on_the_thread_count) {
  const Tensor big = uniform(DType::F32, {1000 * 1000}, 5);
  const Tensor strided = uniform(DType::F64, {5000, 37}, 6);
  for (OpKind op : {OpKind::ReduceSum, OpKind::ReduceMean, OpKind::ReduceLogSumExp}) {
    const Tensor all_1 = run1(op, big, reduce_attrs({}, 0), 1);
    const Tensor cols_1 = run1(op, strided, reduce_attrs({0}, 0), 1);
    check_close(all_1, expected_reduce(op, big, {}, false), 1e-3, 1e-5);
    for (int threads : {2, 3, 4, 8}) {
      BOOST_TEST_CONTEXT(op_name(op) << " threads " << threads) {
        BOOST_TEST(run1(op, big, reduce_attrs({}, 0), threads).bit_equal(all_1));
        BOOST_TEST(run1(op, strided, reduce_attrs({0}, 0), threads).bit_equal(cols_1));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(kernels_are_named_and_cover_the_op_table_dtypes) {
  const auto cpu = make_backend("cpu");
  const Capabilities caps = cpu->capabilities();
  for (OpKind op : kFloatReduceOps) {
    const OpCapability& c = caps[static_cast<size_t>(op_index(op))];
    BOOST_TEST(c.supported);
    BOOST_TEST(c.dtypes.str() == op_schema(op).type_params[0].allowed.str());
  }
  const Graph g = single_op_graph(OpKind::ReduceSum, {TypeInfo{DType::I64, {4}}});
  const auto choice = std::get<KernelChoice>(cpu->select_kernel(g, g.node(0)));
  BOOST_TEST(choice.variant.starts_with("i64_reduce_sum_tree4096x8_"));  // then the ISA
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(arg_extremes)

Tensor arg(OpKind op, const Tensor& x, int64_t axis, int64_t keepdims, int64_t last = 0) {
  return run1(op, x, {{"axis", axis}, {"keepdims", keepdims}, {"select_last_index", last}});
}

BOOST_AUTO_TEST_CASE(by_hand_with_ties) {
  const Tensor x = filled(DType::F32, {2, 4}, {1, 5, 5, -1, 2, 2, -1, -1});
  BOOST_TEST(arg(OpKind::ArgMax, x, 1, 0).bit_equal(Tensor::from<int64_t>({2}, {1, 0})));
  BOOST_TEST(arg(OpKind::ArgMax, x, 1, 0, 1).bit_equal(Tensor::from<int64_t>({2}, {2, 1})));
  BOOST_TEST(arg(OpKind::ArgMin, x, -1, 1).bit_equal(Tensor::from<int64_t>({2, 1}, {3, 2})));
  BOOST_TEST(arg(OpKind::ArgMin, x, -1, 1, 1).bit_equal(Tensor::from<int64_t>({2, 1}, {3, 3})));
  BOOST_TEST(arg(OpKind::ArgMax, x, 0, 1).bit_equal(Tensor::from<int64_t>({1, 4}, {1, 0, 0, 0})));
  BOOST_TEST(
      arg(OpKind::ArgMax, x, 0, 1, 1).bit_equal(Tensor::from<int64_t>({1, 4}, {1, 0, 0, 1})));
  BOOST_TEST(arg(OpKind::ArgMin, x, 0, 0).bit_equal(Tensor::from<int64_t>({4}, {0, 1, 1, 0})));
  BOOST_TEST(arg(OpKind::ArgMin, x, 0, 0, 1).bit_equal(Tensor::from<int64_t>({4}, {0, 1, 1, 1})));
}

BOOST_AUTO_TEST_CASE(nan_counts_as_the_extreme_and_the_first_wins) {
  const Tensor x = filled(DType::F64, {6}, {1, kNaN, 7, kNaN, -kInf, kInf});
  for (OpKind op : {OpKind::ArgMax, OpKind::ArgMin}) {
    BOOST_TEST(arg(op, x, 0, 0).get_int(0) == 1);
    BOOST_TEST(arg(op, x, 0, 0, 1).get_int(0) == 3);
  }
  const Tensor no_nan = filled(DType::F64, {3}, {kInf, -kInf, kInf});
  BOOST_TEST(arg(OpKind::ArgMax, no_nan, 0, 0, 1).get_int(0) == 2);
  BOOST_TEST(arg(OpKind::ArgMin, no_nan, 0, 0).get_int(0) == 1);
}

BOOST_AUTO_TEST_CASE(matches_a_plain_scan_on_every_axis_and_dtype) {
  for (DType dtype : {DType::F32, DType::F64, DType::I32, DType::I64}) {
    const Tensor x = uniform(dtype, {4, 5, 6}, 21, -4, 4);  // ints: many ties
    for (int64_t axis : {0, 1, 2, -1}) {
      const int a = static_cast<int>(axis < 0 ? axis + 3 : axis);
      for (OpKind op : {OpKind::ArgMax, OpKind::ArgMin}) {
        for (int64_t last : {0, 1}) {
          const Tensor got = arg(op, x, axis, 0, last);
          std::vector<int64_t> dims = x.shape().dims();
          dims.erase(dims.begin() + a);
          Tensor want(DType::I64, Shape(dims));
          const std::vector<int64_t> strides = x.shape().strides();
          int64_t o = 0;
          for (int64_t i = 0; i < x.numel(); ++i) {
            if ((i / strides[static_cast<size_t>(a)]) % x.shape()[a] != 0) continue;
            int64_t best = 0;
            for (int64_t k = 1; k < x.shape()[a]; ++k) {
              const double v = x.get_double(i + k * strides[static_cast<size_t>(a)]);
              const double b = x.get_double(i + best * strides[static_cast<size_t>(a)]);
              const bool better = op == OpKind::ArgMax ? v > b : v < b;
              if (better || (last != 0 && v == b)) best = k;
            }
            want.set_int(o++, best);
          }
          BOOST_TEST_CONTEXT(op_name(op)
                             << " " << dtype_name(dtype) << " axis " << axis << " last " << last) {
            BOOST_TEST(got.bit_equal(want));
          }
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(size_one_axis_and_thread_invariance) {
  const Tensor column = uniform(DType::F32, {5, 1}, 4);
  BOOST_TEST(arg(OpKind::ArgMax, column, 1, 0).bit_equal(Tensor(DType::I64, {5})));
  const Tensor big = uniform(DType::F32, {300, 4001}, 8);
  const Tensor one = run1(OpKind::ArgMax, big, {{"axis", int64_t{0}}}, 1);
  for (int threads : {2, 3, 4, 8}) {
    BOOST_TEST(run1(OpKind::ArgMax, big, {{"axis", int64_t{0}}}, threads).bit_equal(one));
  }
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(cumulative_sum)

Tensor cumsum(const Tensor& x, int64_t axis, int64_t exclusive = 0, int64_t reverse = 0,
              int threads = 1) {
  return run1(OpKind::CumSum, x, {{"axis", axis}, {"exclusive", exclusive}, {"reverse", reverse}},
              threads);
}

BOOST_AUTO_TEST_CASE(by_hand_in_every_mode) {
  const Tensor x = filled(DType::F32, {4}, {1, 2, 3, 4});
  check_close(cumsum(x, 0), filled(DType::F32, {4}, {1, 3, 6, 10}));
  check_close(cumsum(x, 0, 1), filled(DType::F32, {4}, {0, 1, 3, 6}));
  check_close(cumsum(x, 0, 0, 1), filled(DType::F32, {4}, {10, 9, 7, 4}));
  check_close(cumsum(x, -1, 1, 1), filled(DType::F32, {4}, {9, 7, 4, 0}));
  const Tensor m = Tensor::from<int64_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  BOOST_TEST(cumsum(m, 0).bit_equal(Tensor::from<int64_t>({2, 3}, {1, 2, 3, 5, 7, 9})));
  BOOST_TEST(cumsum(m, 1, 0, 1).bit_equal(Tensor::from<int64_t>({2, 3}, {6, 5, 3, 15, 11, 6})));
}

BOOST_AUTO_TEST_CASE(integers_wrap_and_nan_propagates_forward) {
  const int32_t big = std::numeric_limits<int32_t>::max();
  BOOST_TEST(cumsum(Tensor::from<int32_t>({3}, {big, 1, 1}), 0)
                 .bit_equal(Tensor::from<int32_t>({3}, {big, INT32_MIN, INT32_MIN + 1})));
  check_close(cumsum(filled(DType::F64, {4}, {1, kNaN, 2, 3}), 0),
              filled(DType::F64, {4}, {1, kNaN, kNaN, kNaN}));
  check_close(cumsum(filled(DType::F64, {3}, {kInf, -kInf, 1}), 0),
              filled(DType::F64, {3}, {kInf, kNaN, kNaN}));
}

// f32 running sums are kept in double: 1e8 + 1 - 1e8 is 1, where an f32 scan gives 0 (1e8 + 1
// rounds to 1e8), along the last axis and across it.
BOOST_AUTO_TEST_CASE(f32_running_sums_are_kept_in_double) {
  check_close(cumsum(filled(DType::F32, {3}, {1e8, 1, -1e8}), 0),
              filled(DType::F32, {3}, {1e8, 1e8, 1}), 0, 0);
  check_close(cumsum(filled(DType::F32, {3, 2}, {1e8, 2, 1, 3, -1e8, 4}), 0),
              filled(DType::F32, {3, 2}, {1e8, 2, 1e8, 5, 1, 9}), 0, 0);
  check_close(cumsum(filled(DType::F32, {3, 2}, {1e8, 2, 1, 3, -1e8, 4}), 0, 1),
              filled(DType::F32, {3, 2}, {0, 0, 1e8, 2, 1e8, 5}), 0, 0);
}

// Sequential in index order: the running sum of f64 values is reproduced exactly by a plain
// loop adding in the same order.
BOOST_AUTO_TEST_CASE(middle_axis_matches_a_sequential_loop_for_any_thread_count) {
  const Tensor x = uniform(DType::F64, {3, 777, 41}, 12);
  for (int64_t exclusive : {0, 1}) {
    for (int64_t reverse : {0, 1}) {
      Tensor want(DType::F64, x.shape());
      for (int64_t o = 0; o < 3; ++o) {
        for (int64_t c = 0; c < 41; ++c) {
          double run = 0;
          for (int64_t s = 0; s < 777; ++s) {
            const int64_t r = reverse != 0 ? 776 - s : s;
            const int64_t i = (o * 777 + r) * 41 + c;
            if (exclusive != 0) want.set_double(i, run);
            run += x.get_double(i);
            if (exclusive == 0) want.set_double(i, run);
          }
        }
      }
      for (int threads : {1, 2, 3, 4, 8}) {
        BOOST_TEST_CONTEXT("exclusive " << exclusive << " reverse " << reverse << " threads "
                                        << threads) {
          BOOST_TEST(cumsum(x, 1, exclusive, reverse, threads).bit_equal(want));
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(empty_and_scalar_like_inputs) {
  BOOST_TEST(cumsum(Tensor(DType::F32, {0, 4}), 1).numel() == 0);
  BOOST_TEST(cumsum(Tensor(DType::I32, {3, 0}), 1).numel() == 0);
  const Tensor one = filled(DType::F32, {1}, {2.5});
  BOOST_TEST(cumsum(one, 0).bit_equal(one));
  check_close(cumsum(one, 0, 1), filled(DType::F32, {1}, {0}));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace volta::test
