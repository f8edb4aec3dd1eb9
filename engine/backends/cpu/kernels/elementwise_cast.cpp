// Conversion kernels: Cast between every pair of dtypes, BitCast between every pair of one
// width, and Clip, whose double bounds are converted to the element type.
//
// Cast semantics: float -> int truncates toward zero, and a NaN, an infinity or a value whose
// truncation does not fit is an error naming it; int -> int wraps; int -> float and
// float -> narrower float round to nearest even, once, from the source value (overflow gives
// inf); f16 and bf16 widen exactly first when they are the source; anything -> bool is x != 0
// (NaN is true); bool -> numeric is 0 or 1.

#include <bit>
#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>
#include <type_traits>

#include "elementwise_common.h"

namespace volta::cpu {
namespace {

template <class From, class To>
struct Convert {
  To operator()(From x) const {
    if constexpr (kIsHalf<From>) {
      return Convert<float, To>{}(static_cast<float>(x));  // exact widening
    } else if constexpr (std::is_same_v<To, bool>) {
      return x != From{0};
    } else {
      return static_cast<To>(x);  // to f16/bf16: the one rounding, from x itself
    }
  }
};

template <class T>
constexpr bool kIsFloat = std::is_floating_point_v<T> || kIsHalf<T>;

// An integer type's range as doubles: [lowest, past_max), both exact (0 or powers of two).
template <class T>
constexpr double kLowestOf = static_cast<double>(std::numeric_limits<T>::lowest());
template <class T>
constexpr double kPastMaxOf = 2.0 * static_cast<double>(uint64_t{1}
                                                        << (std::numeric_limits<T>::digits - 1));

// Whether a float's truncation toward zero fits the integer type To (false for NaN and inf).
template <class To>
bool truncation_fits(double v) {
  return std::trunc(v) >= kLowestOf<To> && v < kPastMaxOf<To>;
}

// The first element of the row x[0, count) whose conversion to To is not defined, or -1.
template <class To, class Source>
int64_t first_unconvertible(const Source& x, int64_t count) {
  int64_t i = 0;
  for (; i + kLanes <= count; i += kLanes) {
    bool all_fit = true;
    for (int64_t j = 0; j < kLanes; ++j) all_fit &= truncation_fits<To>(widened(x[i + j]));
    if (!all_fit) break;
  }
  for (; i < count; ++i) {
    if (!truncation_fits<To>(widened(x[i]))) return i;
  }
  return -1;
}

// A value as a user would write it: integral values in full, others to the digits that
// identify them.
template <class T>
std::string format_value(T value) {
  std::ostringstream out;
  if (std::isfinite(value) && value == std::trunc(value) && std::abs(value) < T{1e21}) {
    out << std::fixed << std::setprecision(0);
  } else {
    out << std::setprecision(std::numeric_limits<T>::max_digits10);
  }
  out << value;
  return out.str();
}

template <class From, class To>
void cast_kernel(const KernelArgs& args) {
  constexpr bool kChecked = kIsFloat<From> && std::is_integral_v<To> && !std::is_same_v<To, bool>;
  for_each_output_row<To, From>(args, [](To* y, int64_t pos, int64_t count, const auto& x) {
    if constexpr (kChecked) {
      const int64_t bad = first_unconvertible<To>(x, count);
      if (bad >= 0) {
        fail(ErrorCode::KernelFailure,
             "Cast: value " + format_value(widened(x[bad])) + " at element " +
                 std::to_string(pos + bad) + " cannot be converted to " +
                 std::string(dtype_name(dtype_of<To>())) +
                 ": it must be finite and truncate toward zero into [" +
                 std::to_string(+std::numeric_limits<To>::lowest()) + ", " +
                 std::to_string(+std::numeric_limits<To>::max()) + "]");
      }
    }
    map_row(y, count, Convert<From, To>{}, x);
  });
}

// A kernel per (input, output) dtype pair, indexed [from][to].
using CastKernels = std::array<std::array<CpuKernel, kDTypeCount>, kDTypeCount>;

// The table of make(From, To) over every dtype pair; `name` (e.g. "cast") and the target's
// dtype name the variant. make returns nullptr for a pair it has no kernel for, which stays
// empty.
template <class Make>
CastKernels dtype_pair_kernels(std::string_view name, const Make& make) {
  CastKernels t;  // every CpuKernel starts empty (its members have initializers)
  for (int from = 0; from < kDTypeCount; ++from) {
    for (int to = 0; to < kDTypeCount; ++to) {
      const auto from_dtype = static_cast<DType>(from);
      const auto to_dtype = static_cast<DType>(to);
      visit_dtype(from_dtype, [&](auto from_tag) {
        visit_dtype(to_dtype, [&](auto to_tag) {
          const KernelFn fn = make(from_tag, to_tag);
          if (fn == nullptr) return;
          t[dtype_index(from_dtype)][dtype_index(to_dtype)] = CpuKernel{
              fn, kernel_variant(from_dtype,
                                 std::string(name) + "_" + std::string(dtype_name(to_dtype)),
                                 simd_isa())};
        });
      });
    }
  }
  return t;
}

const CastKernels& cast_kernels() {
  static const CastKernels kKernels = dtype_pair_kernels("cast", [](auto from, auto to) {
    return KernelFn{&cast_kernel<typename decltype(from)::type, typename decltype(to)::type>};
  });
  return kKernels;
}

KernelSelection select_cast(const KernelQuery& query) {
  return choice_of(
      cast_kernels()[dtype_index(query.inputs[0]->dtype)][dtype_index(query.outputs[0].dtype)]);
}

// BitCast: an element's bytes read as To, of the same width. To bool, a nonzero byte is true
// (stored as 1), since Volta's bools are 0 or 1 and its logical kernels rely on it.
template <class From, class To>
struct Reinterpret {
  To operator()(From x) const {
    if constexpr (std::is_same_v<To, bool>) {
      return std::bit_cast<uint8_t>(x) != 0;
    } else {
      return std::bit_cast<To>(x);
    }
  }
};

template <class From, class To>
void bit_cast_kernel(const KernelArgs& args) {
  map_broadcast<To, From>(args, Reinterpret<From, To>{});
}

// Every dtype pair of one width; the others have no kernel.
const CastKernels& bit_cast_kernels() {
  static const CastKernels kKernels = dtype_pair_kernels("bit_cast", [](auto from, auto to) {
    using From = typename decltype(from)::type;
    using To = typename decltype(to)::type;
    if constexpr (sizeof(From) == sizeof(To)) {
      return KernelFn{&bit_cast_kernel<From, To>};
    } else {
      return KernelFn{nullptr};
    }
  });
  return kKernels;
}

KernelSelection select_bit_cast(const KernelQuery& query) {
  const DType from = query.inputs[0]->dtype;
  const DType to = query.outputs[0].dtype;
  const CpuKernel& kernel = bit_cast_kernels()[dtype_index(from)][dtype_index(to)];
  if (kernel.fn == nullptr) {
    return KernelUnsupported{"no BitCast from " + std::string(dtype_name(from)) + " to " +
                             std::string(dtype_name(to)) +
                             ": supported between dtypes of the same width"};
  }
  return choice_of(kernel);
}

// Clip's bounds in the element type. Floats round to nearest. Integers take the tightest
// integer bounds (min rounded up, max rounded down), saturated to the type's range: for an
// integer x, clipping to those gives the exact clip, saturated.
template <class T>
T lower_bound_in(double min) {
  if constexpr (kIsFloat<T>) {
    return static_cast<T>(min);
  } else {
    const double bound = std::ceil(min);
    if (bound <= kLowestOf<T>) return std::numeric_limits<T>::lowest();
    if (bound >= kPastMaxOf<T>) return std::numeric_limits<T>::max();
    return static_cast<T>(bound);
  }
}
template <class T>
T upper_bound_in(double max) {
  if constexpr (kIsFloat<T>) {
    return static_cast<T>(max);
  } else {
    const double bound = std::floor(max);
    if (bound <= kLowestOf<T>) return std::numeric_limits<T>::lowest();
    if (bound >= kPastMaxOf<T>) return std::numeric_limits<T>::max();
    return static_cast<T>(bound);
  }
}

double clip_bound(const KernelArgs& args, std::string_view name) {
  const double bound = args.attrs.get_float(name);
  if (std::isnan(bound)) {
    fail(ErrorCode::KernelFailure,
         "Clip: " + std::string(name) + " is NaN; a bound must be a number (-inf / inf for none)");
  }
  return bound;
}

// min(max(x, min), max): a NaN x stays NaN (as it is, bits and all), and min > max gives max
// everywhere. f16/bf16 compare in f32; the result is x or a bound, so nothing rounds.
template <class T>
void clip_kernel(const KernelArgs& args) {
  const T lower = lower_bound_in<T>(clip_bound(args, "min"));
  const T upper = upper_bound_in<T>(clip_bound(args, "max"));
  map_broadcast<T, T>(args, [lower, upper](T x) {
    const bool below = widened(x) < widened(lower);
    if ((below ? widened(lower) : widened(x)) > widened(upper)) return upper;
    return below ? lower : x;
  });
}

const DTypeKernels& clip_kernels() {
  static const DTypeKernels kKernels = make_kernels(EveryNumericType{}, [](auto tag) {
    using T = typename decltype(tag)::type;
    return CpuKernel{&clip_kernel<T>, kernel_variant(dtype_of<T>(), "clip", simd_isa())};
  });
  return kKernels;
}

KernelSelection select_clip(const KernelQuery& query) {
  return select_by_dtype(clip_kernels(), query.node, query.inputs[0]->dtype);
}

}  // namespace

void register_elementwise_cast_kernels(KernelTable& table) {
  table[static_cast<size_t>(op_index(OpKind::Cast))] =
      OpKernels{&select_cast, kAllTypes, KernelDeterminism::BitExact};
  table[static_cast<size_t>(op_index(OpKind::BitCast))] =
      OpKernels{&select_bit_cast, kAllTypes, KernelDeterminism::BitExact};
  table[static_cast<size_t>(op_index(OpKind::Clip))] =
      OpKernels{&select_clip, clip_kernels().dtypes, KernelDeterminism::BitExact};
}

}  // namespace volta::cpu
