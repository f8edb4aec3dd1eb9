// Reference reductions (Reduce*), ArgMax/ArgMin and CumSum. A reduction gathers the values
// of each output element into a list, in the input's row-major order, and folds the list:
// floats in double, integers in int64 with two's-complement wrap-around.

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <type_traits>

#include "ref_util.h"
#include "volta/ir/op_helpers.h"

namespace volta::reference {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// For each output element (row-major over the keepdims shape, which has the same layout as
// the output with or without keepdims), the input offsets that reduce into it.
std::vector<std::vector<int64_t>> reduction_groups(const Shape& input, const ReduceAxes& axes) {
  Shape kept = input;
  for (int a : axes.axes) kept[a] = 1;
  std::vector<std::vector<int64_t>> groups(static_cast<size_t>(kept.numel()));
  for_each_index(input, [&](const std::vector<int64_t>& index, int64_t flat) {
    std::vector<int64_t> target = index;
    for (int a : axes.axes) target[static_cast<size_t>(a)] = 0;
    groups[static_cast<size_t>(flat_offset(target, kept))].push_back(flat);
  });
  return groups;
}

// ---- Folds. Each gives the value of an empty reduction when `values` is empty. ----------

struct Sum {
  static double on_float(const std::vector<double>& values) {
    double sum = 0.0;
    for (double v : values) sum += v;
    return sum;
  }
  static int64_t on_int(const std::vector<int64_t>& values, DType) {
    int64_t sum = 0;
    for (int64_t v : values) sum = wrapping_add(sum, v);
    return sum;
  }
};

struct Mean {  // empty: 0 / 0 = NaN
  static double on_float(const std::vector<double>& values) {
    return Sum::on_float(values) / static_cast<double>(values.size());
  }
};

// Max and Min propagate NaN; empty: the identity of the fold (-inf / +inf, or the integer
// dtype's lowest / highest value).
struct Max {
  static double on_float(const std::vector<double>& values) {
    double max = -kInf;
    for (double v : values) {
      if (std::isnan(v)) return v;
      max = std::max(max, v);
    }
    return max;
  }
  static int64_t on_int(const std::vector<int64_t>& values, DType dtype) {
    int64_t max = lowest_of(dtype);
    for (int64_t v : values) max = std::max(max, v);
    return max;
  }
};

struct Min {
  static double on_float(const std::vector<double>& values) {
    double min = kInf;
    for (double v : values) {
      if (std::isnan(v)) return v;
      min = std::min(min, v);
    }
    return min;
  }
  static int64_t on_int(const std::vector<int64_t>& values, DType dtype) {
    int64_t min = highest_of(dtype);
    for (int64_t v : values) min = std::min(min, v);
    return min;
  }
};

// The product with its binary exponent kept apart (frexp), so no partial product overflows or
// underflows before the end: a row holding a 0 gives 0 however large the other values are, and
// the one rounding to the output's range happens at the end.
struct Prod {
  static double on_float(const std::vector<double>& values) {
    double mantissa = 1.0;  // 0, NaN, infinite, or |mantissa| in [0.5, 1)
    int64_t exponent = 0;
    for (double v : values) {
      int e = 0;
      mantissa *= std::isfinite(v) ? std::frexp(v, &e) : v;
      exponent += e;
      mantissa = std::frexp(mantissa, &e);
      exponent += std::isfinite(mantissa) ? e : 0;
    }
    constexpr int64_t kBeyondAnyRange = 4096;  // past f64's exponents either way
    return std::ldexp(mantissa,
                      static_cast<int>(std::clamp(exponent, -kBeyondAnyRange, kBeyondAnyRange)));
  }
  static int64_t on_int(const std::vector<int64_t>& values, DType) {
    int64_t product = 1;
    for (int64_t v : values) product = wrapping_mul(product, v);
    return product;
  }
};

struct SumSquare {
  static double on_float(const std::vector<double>& values) {
    double sum = 0.0;
    for (double v : values) sum += v * v;
    return sum;
  }
  static int64_t on_int(const std::vector<int64_t>& values, DType) {
    int64_t sum = 0;
    for (int64_t v : values) sum = wrapping_add(sum, wrapping_mul(v, v));
    return sum;
  }
};

struct L1 {
  static double on_float(const std::vector<double>& values) {
    double sum = 0.0;
    for (double v : values) sum += std::fabs(v);
    return sum;
  }
  static int64_t on_int(const std::vector<int64_t>& values, DType) {
    int64_t sum = 0;
    for (int64_t v : values) sum = wrapping_add(sum, wrapping_abs(v));
    return sum;
  }
};

struct L2 {
  static double on_float(const std::vector<double>& values) {
    return std::sqrt(SumSquare::on_float(values));
  }
};

// max + log(sum exp(x - max)). A non-finite max is the answer itself: NaN propagates, +inf
// stays +inf, and an empty or all -inf group gives -inf (where x - max would be NaN).
struct LogSumExp {
  static double on_float(const std::vector<double>& values) {
    const double max = Max::on_float(values);
    if (!std::isfinite(max)) return max;
    double sum = 0.0;
    for (double v : values) sum += std::exp(v - max);
    return max + std::log(sum);
  }
};

template <class Fold>
constexpr bool kHasIntegerForm = requires(const std::vector<int64_t>& v) {
  Fold::on_int(v, DType::I64);
};

template <class Fold>
std::vector<Tensor> reduce(const Node& node, RefInputs in, RefOutputTypes out) {
  const Tensor& x = *in[0];
  const ReduceAxes axes = resolve_reduce_axes(AttrReader(node), x.shape().rank());
  // noop_with_empty_axes with no axes: the identity, without even applying |x| or x^2.
  if (axes.noop) return {x};
  const std::vector<std::vector<int64_t>> groups = reduction_groups(x.shape(), axes);
  Tensor y(out[0].dtype, out[0].shape);
  for (size_t g = 0; g < groups.size(); ++g) {
    const int64_t at = static_cast<int64_t>(g);
    if (is_floating(x.dtype())) {
      std::vector<double> values;
      for (int64_t offset : groups[g]) values.push_back(x.get_double(offset));
      y.set_double(at, Fold::on_float(values));
    } else if constexpr (kHasIntegerForm<Fold>) {
      std::vector<int64_t> values;
      for (int64_t offset : groups[g]) values.push_back(x.get_int(offset));
      y.set_int(at, Fold::on_int(values, x.dtype()));
    } else {
      kernel_fail("this reduction is defined for floating-point inputs only (f32, f64)");
    }
  }
  return {y};
}

// ---- ArgMax / ArgMin ----------------------------------------------------------------------

// Whether `candidate`, met after `best` along the axis, takes its place. NaN counts as the
// extreme: the first NaN wins (the last with select_last_index), as do ties.
template <bool kMax, class T>
bool replaces(T candidate, T best, bool select_last) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(best)) return std::isnan(candidate) && select_last;
    if (std::isnan(candidate)) return true;
  }
  if (candidate == best) return select_last;
  return kMax ? candidate > best : candidate < best;
}

template <bool kMax>
std::vector<Tensor> arg_extremum(const Node& node, RefInputs in, RefOutputTypes out) {
  const Tensor& x = *in[0];
  const AttrReader attrs(node);
  const int axis = *normalize_axis(attrs.get_int("axis"), x.shape().rank());
  const bool select_last = attrs.get_int("select_last_index") != 0;
  const AxisView rows = view_around_axis(x.shape(), axis);
  // The output, with or without keepdims, is laid out as [outer, inner].
  Tensor y(out[0].dtype, out[0].shape);
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* data = x.data_as<T>();
    for (int64_t o = 0; o < rows.outer; ++o) {
      for (int64_t i = 0; i < rows.inner; ++i) {
        int64_t best = 0;
        for (int64_t j = 1; j < rows.extent; ++j) {
          if (replaces<kMax>(widened(data[rows.at(o, j, i)]), widened(data[rows.at(o, best, i)]),
                             select_last)) {
            best = j;
          }
        }
        y.set_int(o * rows.inner + i, best);
      }
    }
  });
  return {y};
}

// ---- CumSum -------------------------------------------------------------------------------

// Running sums of one row visited in scan order. Exclusive: each output is the sum of the
// elements before it, so the first is 0.
template <class Acc, class Read, class Add, class Write>
void scan_row(const std::vector<int64_t>& order, bool exclusive, Read read, Add add, Write write) {
  Acc running{};
  for (int64_t at : order) {
    const Acc value = read(at);
    if (!exclusive) running = add(running, value);
    write(at, running);
    if (exclusive) running = add(running, value);
  }
}

std::vector<Tensor> cumsum(const Node& node, RefInputs in, RefOutputTypes out) {
  const Tensor& x = *in[0];
  const AttrReader attrs(node);
  const int axis = *normalize_axis(attrs.get_int("axis"), x.shape().rank());
  const bool exclusive = attrs.get_int("exclusive") != 0;
  const bool reverse = attrs.get_int("reverse") != 0;
  const AxisView rows = view_around_axis(x.shape(), axis);
  Tensor y(out[0].dtype, out[0].shape);
  for (int64_t o = 0; o < rows.outer; ++o) {
    for (int64_t i = 0; i < rows.inner; ++i) {
      std::vector<int64_t> order;
      for (int64_t step = 0; step < rows.extent; ++step) {
        order.push_back(rows.at(o, reverse ? rows.extent - 1 - step : step, i));
      }
      if (is_floating(x.dtype())) {
        scan_row<double>(
            order, exclusive, [&](int64_t at) { return x.get_double(at); }, std::plus<double>{},
            [&](int64_t at, double v) { y.set_double(at, v); });
      } else {
        scan_row<int64_t>(
            order, exclusive, [&](int64_t at) { return x.get_int(at); }, wrapping_add,
            [&](int64_t at, int64_t v) { y.set_int(at, v); });
      }
    }
  }
  return {y};
}

}  // namespace

void register_reduction(RefTable& table) {
  using K = OpKind;
  register_kernel(table, K::ReduceSum, reduce<Sum>);
  register_kernel(table, K::ReduceMean, reduce<Mean>);
  register_kernel(table, K::ReduceMax, reduce<Max>);
  register_kernel(table, K::ReduceMin, reduce<Min>);
  register_kernel(table, K::ReduceProd, reduce<Prod>);
  register_kernel(table, K::ReduceSumSquare, reduce<SumSquare>);
  register_kernel(table, K::ReduceL1, reduce<L1>);
  register_kernel(table, K::ReduceL2, reduce<L2>);
  register_kernel(table, K::ReduceLogSumExp, reduce<LogSumExp>);
  register_kernel(table, K::ArgMax, arg_extremum<true>);
  register_kernel(table, K::ArgMin, arg_extremum<false>);
  register_kernel(table, K::CumSum, cumsum);
}

}  // namespace volta::reference
