// The CUDA backend's indexing kernels on a device, against the CPU backend, as each op's claim
// says (cuda_op_claims()): GatherElements, GatherND (batch_dims 0 and 1), ScatterElements and
// ScatterND (every reduction, duplicate indices, every dtype), Trilu (upper and lower, k far
// out), OneHot (every index and value type, NaN and fractional float indices) and TopK (ties,
// NaNs, +-0, both directions, k from 0 to n, inner axes); out-of-range indices fail the run in
// the CPU's words. NegativeLogLikelihoodLoss (the loss family): every reduction, weights,
// ignore_index, sample counts around the tree's 4096-sample leaves, and the CPU's label error;
// SoftmaxCrossEntropyLoss (which claims no CPU bits) within a tolerance and run to run.
//
// Without a usable device every case is skipped and the binary prints "SKIPPED: <reason>",
// which CTest reports as skipped (SKIP_REGULAR_EXPRESSION): never a pass without a device.

#define BOOST_TEST_MODULE cuda_device_indexing_test
#include <bit>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "device_test_support.h"
#include "volta/backends/cuda.h"
#include "volta/error.h"
#include "volta/ir/random.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"

namespace volta {
namespace {

using cuda_test::DeviceOrSkip;
BOOST_TEST_GLOBAL_FIXTURE(DeviceOrSkip);
using cuda_test::check_against_cpu;
using cuda_test::cpu;
using cuda_test::device_available;
using cuda_test::error_of;
using cuda_test::gpu;
using cuda_test::op_graph;
using cuda_test::run_on;

constexpr DType kDTypes[] = {DType::F32, DType::F64, DType::I64, DType::I32, DType::Bool};
constexpr DType kNumeric[] = {DType::F32, DType::F64, DType::I64, DType::I32};
constexpr DType kIndexTypes[] = {DType::I64, DType::I32};

// Random bytes: every f32 / f64 class appears, NaN payloads included.
Tensor random_of(DType dtype, const Shape& shape, uint64_t seed) {
  Tensor t(dtype, shape);
  auto* bytes = static_cast<std::byte*>(t.data());
  for (size_t i = 0; i < t.nbytes(); ++i) {
    bytes[i] = static_cast<std::byte>(counter_random_u64(seed, 1, i));
  }
  if (dtype == DType::Bool) {
    for (size_t i = 0; i < t.nbytes(); ++i) bytes[i] &= std::byte{1};
  }
  return t;
}

// Small values, so that scatters' sums and products stay finite and collide in ties.
Tensor small_values(DType dtype, const Shape& shape, uint64_t seed) {
  if (dtype == DType::Bool) return random_of(dtype, shape, seed);
  return random_tensor(dtype, shape, seed, -4.0, 4.0);
}

// Indices uniform in [-dim, dim): negative ones too.
Tensor indices_in(DType index_type, const Shape& shape, int64_t dim, uint64_t seed) {
  Tensor t(index_type, shape);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const auto r = static_cast<int64_t>(counter_random_u64(seed, 2, static_cast<uint64_t>(i)) %
                                        static_cast<uint64_t>(2 * dim));
    t.set_double(i, static_cast<double>(r - dim));
  }
  return t;
}

// i32 indices with the 1- and 4-byte data only: the kernels' index type is independent of the
// element type, and the run count stays small.
bool index_case(DType dtype, DType index_type) {
  return index_type == DType::I64 || dtype == DType::F32 || dtype == DType::Bool;
}

std::string name_of(DType dtype, DType index_type, const Shape& data, const std::string& more) {
  return std::string(dtype_name(dtype)) + " data " + data.str() + ", " +
         std::string(dtype_name(index_type)) + " indices, " + more;
}

// A bad index planted in `good` at flat position `at`: both backends fail alike.
void check_same_error(const Graph& g, std::vector<Tensor> inputs, size_t operand, int64_t at,
                      int64_t value, const std::string& what) {
  inputs[operand].set_double(at, static_cast<double>(value));
  if (inputs[operand].numel() > at + 1) {
    inputs[operand].set_double(at + 1, static_cast<double>(-value - 7));  // a later bad one
  }
  const std::string want = error_of(cpu(), g, inputs);
  BOOST_TEST(
      want.find("index " + std::to_string(value) + " at indices position") != std::string::npos,
      what << ": " << want);
  BOOST_TEST(error_of(gpu(), g, inputs) == want, what);
}

// ---- Gathers ----

BOOST_AUTO_TEST_CASE(gather_elements_matches_the_cpu_and_fails_alike,
                     *boost::unit_test::precondition(device_available)) {
  uint64_t seed = 100;
  const std::vector<std::pair<Shape, Shape>> shapes = {{{7}, {5}},
                                                       {{4, 5}, {4, 5}},
                                                       {{4, 5}, {2, 9}},
                                                       {{3, 4, 5}, {3, 2, 5}},
                                                       {{2, 3, 4, 5}, {2, 3, 7, 5}},
                                                       {{4, 5}, {0, 5}},
                                                       {{301, 17}, {301, 17}}};
  for (DType dtype : kDTypes) {
    for (DType index_type : kIndexTypes) {
      if (!index_case(dtype, index_type)) continue;
      for (const auto& [data, index_shape] : shapes) {
        for (int64_t axis = -data.rank(); axis < data.rank(); ++axis) {
          const int a = static_cast<int>(axis < 0 ? axis + data.rank() : axis);
          Shape idx_shape = index_shape;
          if (idx_shape.rank() != data.rank()) continue;
          bool fits = true;
          for (int d = 0; d < data.rank(); ++d) fits = fits && (d == a || idx_shape[d] <= data[d]);
          if (!fits) continue;
          const Graph g = op_graph(OpKind::GatherElements, {{dtype, data}, {index_type, idx_shape}},
                                   {{"axis", axis}});
          const std::vector<Tensor> in = {random_of(dtype, data, ++seed),
                                          indices_in(index_type, idx_shape, data[a], ++seed)};
          const std::string what =
              name_of(dtype, index_type, data, idx_shape.str() + " axis " + std::to_string(axis));
          check_against_cpu(g, in, what);
          if (idx_shape.numel() > 2) {
            check_same_error(g, in, 1, idx_shape.numel() / 2, data[a], what);
          }
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(gather_nd_matches_the_cpu_and_fails_alike,
                     *boost::unit_test::precondition(device_available)) {
  uint64_t seed = 200;
  struct Case {
    Shape data;
    Shape indices;
    int64_t batch_dims;
  };
  const std::vector<Case> cases = {
      {{5, 6}, {3, 1}, 0},          {{5, 6}, {3, 2}, 0},       {{5, 6, 7}, {2, 4, 2}, 0},
      {{5, 6, 7}, {11, 3}, 0},      {{4, 6, 7}, {4, 3, 1}, 1}, {{4, 6, 7}, {4, 2}, 1},
      {{2, 3, 4, 5}, {2, 3, 2}, 2}, {{5, 6}, {0, 2}, 0},       {{300, 40}, {1000, 1}, 0}};
  for (DType dtype : kDTypes) {
    for (DType index_type : kIndexTypes) {
      if (!index_case(dtype, index_type)) continue;
      for (const Case& c : cases) {
        const Graph g = op_graph(OpKind::GatherND, {{dtype, c.data}, {index_type, c.indices}},
                                 {{"batch_dims", c.batch_dims}});
        // Each tuple component in [-dim, dim) of its own axis.
        Tensor idx(index_type, c.indices);
        const int64_t k = c.indices[c.indices.rank() - 1];
        for (int64_t p = 0; p < idx.numel(); ++p) {
          const int64_t dim = c.data[static_cast<int>(c.batch_dims + p % k)];
          const auto r = static_cast<int64_t>(counter_random_u64(++seed, 3, 0) %
                                              static_cast<uint64_t>(2 * dim));
          idx.set_double(p, static_cast<double>(r - dim));
        }
        const std::vector<Tensor> in = {random_of(dtype, c.data, ++seed), idx};
        const std::string what =
            name_of(dtype, index_type, c.data,
                    c.indices.str() + " batch_dims " + std::to_string(c.batch_dims));
        check_against_cpu(g, in, what);
        if (idx.numel() > 3) {
          const int64_t at = idx.numel() - 2;  // component (at % k) of a later tuple
          check_same_error(g, in, 1, at, -c.data[static_cast<int>(c.batch_dims + at % k)] - 1,
                           what);
        }
      }
    }
  }
}

// ---- Scatters ----

BOOST_AUTO_TEST_CASE(scatter_elements_matches_the_cpu_with_every_reduction,
                     *boost::unit_test::precondition(device_available)) {
  uint64_t seed = 300;
  const std::vector<std::pair<Shape, Shape>> shapes = {{{7}, {12}},
                                                       {{4, 5}, {4, 5}},
                                                       {{4, 5}, {3, 9}},
                                                       {{3, 4, 5}, {6, 3, 5}},
                                                       {{3, 4, 5}, {3, 2, 9}},
                                                       {{3, 4, 5}, {3, 4, 0}},
                                                       {{64, 33}, {64, 200}}};
  for (DType dtype : kDTypes) {
    for (const std::string reduction : {"none", "add", "mul"}) {
      if (dtype == DType::Bool && reduction != "none") continue;
      for (DType index_type : kIndexTypes) {
        if (!index_case(dtype, index_type)) continue;
        for (const auto& [data, idx_shape] : shapes) {
          for (int64_t axis : {int64_t{0}, int64_t{-1}}) {
            const int a = static_cast<int>(axis < 0 ? axis + data.rank() : axis);
            bool fits = true;
            for (int d = 0; d < data.rank(); ++d) {
              fits = fits && (d == a || idx_shape[d] <= data[d]);
            }
            if (!fits) continue;
            const Graph g = op_graph(OpKind::ScatterElements,
                                     {{dtype, data}, {index_type, idx_shape}, {dtype, idx_shape}},
                                     {{"axis", axis}, {"reduction", reduction}});
            // Few distinct targets per line: duplicates everywhere.
            const std::vector<Tensor> in = {
                small_values(dtype, data, ++seed),
                indices_in(index_type, idx_shape, std::min<int64_t>(data[a], 3), ++seed),
                small_values(dtype, idx_shape, ++seed)};
            const std::string what =
                name_of(dtype, index_type, data,
                        idx_shape.str() + " axis " + std::to_string(axis) + " " + reduction);
            check_against_cpu(g, in, what);
            // Bit patterns (NaN payloads, infinities) through the same reduction.
            check_against_cpu(
                g, {random_of(dtype, data, ++seed), in[1], random_of(dtype, idx_shape, ++seed)},
                what + ", random bits");
            if (idx_shape.numel() > 2) {
              check_same_error(g, in, 1, idx_shape.numel() / 3, -data[a] - 1, what);
            }
          }
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(scatter_nd_matches_the_cpu_with_every_reduction,
                     *boost::unit_test::precondition(device_available)) {
  uint64_t seed = 400;
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{8}, {20, 1}},      {{5, 6}, {7, 1}},    {{5, 6}, {9, 2}},       {{4, 5, 6}, {3, 2, 2}},
      {{4, 5, 6}, {0, 1}}, {{4, 5, 6}, {6, 3}}, {{64, 4097}, {100, 1}}, {{3, 3}, {5000, 2}}};
  for (DType dtype : kDTypes) {
    for (const std::string reduction : {"none", "add", "mul"}) {
      if (dtype == DType::Bool && reduction != "none") continue;
      for (DType index_type : kIndexTypes) {
        if (!index_case(dtype, index_type)) continue;
        for (const auto& [data, idx_shape] : shapes) {
          const int64_t k = idx_shape[idx_shape.rank() - 1];
          std::vector<int64_t> update_dims(idx_shape.dims().begin(), idx_shape.dims().end() - 1);
          update_dims.insert(update_dims.end(), data.dims().begin() + k, data.dims().end());
          const Shape updates(update_dims);
          const Graph g = op_graph(OpKind::ScatterND,
                                   {{dtype, data}, {index_type, idx_shape}, {dtype, updates}},
                                   {{"reduction", reduction}});
          Tensor idx(index_type, idx_shape);
          for (int64_t p = 0; p < idx.numel(); ++p) {
            const int64_t dim = std::min<int64_t>(data[static_cast<int>(p % k)], 3);
            idx.set_double(p, static_cast<double>(static_cast<int64_t>(
                                  counter_random_u64(seed, 4, static_cast<uint64_t>(p)) %
                                  static_cast<uint64_t>(2 * dim))) -
                                  static_cast<double>(dim));
          }
          ++seed;
          const std::vector<Tensor> in = {small_values(dtype, data, ++seed), idx,
                                          small_values(dtype, updates, ++seed)};
          const std::string what =
              name_of(dtype, index_type, data, idx_shape.str() + " " + reduction);
          check_against_cpu(g, in, what);
          check_against_cpu(
              g, {random_of(dtype, data, ++seed), idx, random_of(dtype, updates, ++seed)},
              what + ", random bits");
          if (idx.numel() > 2) {
            check_same_error(g, in, 1, idx.numel() - 2,
                             data[static_cast<int>((idx.numel() - 2) % k)], what);
          }
        }
      }
    }
  }
}

// ---- Trilu, OneHot ----

BOOST_AUTO_TEST_CASE(trilu_matches_the_cpu, *boost::unit_test::precondition(device_available)) {
  uint64_t seed = 500;
  const std::vector<Shape> shapes = {{1, 1}, {3, 4}, {5, 2}, {2, 3, 7, 6}, {0, 3}, {300, 301}};
  for (DType dtype : kDTypes) {
    for (const Shape& shape : shapes) {
      for (int64_t upper : {0, 1}) {
        for (int64_t k : {std::numeric_limits<int64_t>::min(), int64_t{-400}, int64_t{-2},
                          int64_t{-1}, int64_t{0}, int64_t{1}, int64_t{3}, int64_t{500},
                          std::numeric_limits<int64_t>::max()}) {
          const Graph g = op_graph(OpKind::Trilu, {{dtype, shape}}, {{"upper", upper}, {"k", k}});
          check_against_cpu(g, {random_of(dtype, shape, ++seed)},
                            std::string(dtype_name(dtype)) + " " + shape.str() + " upper " +
                                std::to_string(upper) + " k " + std::to_string(k));
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(one_hot_matches_the_cpu_for_every_index_and_value_type,
                     *boost::unit_test::precondition(device_available)) {
  uint64_t seed = 600;
  const std::vector<Shape> shapes = {{1}, {7}, {3, 5}, {2, 3, 4}, {0, 2}};
  for (DType index_type : kNumeric) {
    for (DType dtype : {DType::F32, DType::F64, DType::Bool}) {  // 4-, 8- and 1-byte values
      for (const Shape& shape : shapes) {
        for (int64_t depth : {1, 5, 64}) {
          for (int64_t axis = -(shape.rank() + 1); axis <= shape.rank(); ++axis) {
            Tensor idx = random_tensor(index_type, shape, ++seed, -1.5 * static_cast<double>(depth),
                                       1.5 * static_cast<double>(depth));
            if (index_type == DType::F32 && idx.numel() > 2) {  // NaN, inf, -0.9 -> class 0
              idx.data_as<float>()[0] = std::numeric_limits<float>::quiet_NaN();
              idx.data_as<float>()[1] = -std::numeric_limits<float>::infinity();
              idx.data_as<float>()[2] = -0.9f;
            }
            if (index_type == DType::F64 && idx.numel() > 1) {
              idx.data_as<double>()[0] = std::numeric_limits<double>::quiet_NaN();
              idx.data_as<double>()[1] = 1e300;
            }
            const Graph g = op_graph(OpKind::OneHot, {{index_type, shape}, {dtype, Shape{2}}},
                                     {{"depth", depth}, {"axis", axis}});
            check_against_cpu(g, {idx, random_of(dtype, Shape{2}, ++seed)},
                              std::string(dtype_name(dtype)) + " values, " +
                                  std::string(dtype_name(index_type)) + " indices " + shape.str() +
                                  " depth " + std::to_string(depth) + " axis " +
                                  std::to_string(axis));
          }
        }
      }
    }
  }
}

// ---- TopK ----

// Few distinct values (ties everywhere), zeros of both signs, infinities and NaNs.
Tensor tie_heavy(DType dtype, const Shape& shape, uint64_t seed) {
  Tensor t = random_tensor(dtype, shape, seed, -3.0, 3.0);
  if (dtype == DType::F32) {
    const float specials[] = {0.0f,
                              -0.0f,
                              std::numeric_limits<float>::infinity(),
                              -std::numeric_limits<float>::infinity(),
                              std::numeric_limits<float>::quiet_NaN(),
                              std::bit_cast<float>(0xffc00001u)};
    for (int64_t i = 0; i < t.numel(); i += 3) {
      t.data_as<float>()[i] = specials[counter_random_u64(seed, 5, static_cast<uint64_t>(i)) % 6];
    }
  } else if (dtype == DType::F64) {
    const double specials[] = {0.0, -0.0, std::numeric_limits<double>::infinity(),
                               std::numeric_limits<double>::quiet_NaN()};
    for (int64_t i = 0; i < t.numel(); i += 3) {
      t.data_as<double>()[i] = specials[counter_random_u64(seed, 5, static_cast<uint64_t>(i)) % 4];
    }
  }
  return t;
}

BOOST_AUTO_TEST_CASE(top_k_matches_the_cpu_on_ties_nans_and_every_k,
                     *boost::unit_test::precondition(device_available)) {
  uint64_t seed = 700;
  const std::vector<Shape> shapes = {{1}, {9}, {4, 17}, {3, 10, 5}, {2, 0}, {2, 5000}};
  for (DType dtype : kNumeric) {
    for (const Shape& shape : shapes) {
      for (int64_t axis = -shape.rank(); axis < shape.rank(); ++axis) {
        const int64_t n = shape[static_cast<int>(axis < 0 ? axis + shape.rank() : axis)];
        for (int64_t k : {int64_t{0}, int64_t{1}, int64_t{3}, n / 2, n - 1, n}) {
          if (k < 0 || k > n) continue;
          for (int64_t largest : {0, 1}) {
            const Graph g = op_graph(OpKind::TopK, {{dtype, shape}},
                                     {{"k", k}, {"axis", axis}, {"largest", largest}}, 2);
            const std::string what = std::string(dtype_name(dtype)) + " " + shape.str() + " axis " +
                                     std::to_string(axis) + " k " + std::to_string(k) +
                                     " largest " + std::to_string(largest);
            check_against_cpu(g, {tie_heavy(dtype, shape, ++seed)}, what + ", ties");
            check_against_cpu(g, {random_of(dtype, shape, ++seed)}, what + ", random bits");
          }
        }
      }
    }
  }
}

// ---- NegativeLogLikelihoodLoss ----

// Labels in [0, classes), about one in five the ignored label (when there is one).
Tensor labels_for(DType label_type, const Shape& shape, int64_t classes,
                  std::optional<int64_t> ignore, uint64_t seed) {
  Tensor t(label_type, shape);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const uint64_t r = counter_random_u64(seed, 7, static_cast<uint64_t>(i));
    const bool ignored = ignore && r % 5 == 0;
    t.set_double(i, static_cast<double>(
                        ignored ? *ignore
                                : static_cast<int64_t>((r >> 8) % static_cast<uint64_t>(classes))));
  }
  return t;
}

// Every reduction, with and without weights and ignore_index, over sample counts around the
// 4096-sample leaves; log-probabilities as a model gives them, and special values (NaN, inf).
BOOST_AUTO_TEST_CASE(nll_loss_matches_the_cpu_on_every_reduction_and_leaf_count,
                     *boost::unit_test::precondition(device_available)) {
  uint64_t seed = 800;
  const std::vector<Shape> shapes = {{1, 3},       {5, 4},    {3, 7, 2}, {2, 5, 3, 4},
                                     {0, 4},       {4096, 3}, {4097, 2}, {3, 10, 4096},
                                     {2, 3, 5000}, {9, 1},    {1, 6, 0}};
  for (DType dtype : {DType::F32, DType::F64}) {
    for (DType label_type : kIndexTypes) {
      for (const Shape& shape : shapes) {
        std::vector<int64_t> sample_dims = shape.dims();
        sample_dims.erase(sample_dims.begin() + 1);
        const Shape labels_shape(sample_dims);
        const int64_t classes = shape[1];
        for (const std::string reduction : {"none", "sum", "mean"}) {
          for (bool weighted : {false, true}) {
            for (std::optional<int64_t> ignore :
                 {std::optional<int64_t>{}, std::optional<int64_t>{1}}) {
              Attributes attrs = {{"reduction", reduction}};
              if (ignore) attrs["ignore_index"] = std::vector<int64_t>{*ignore};
              std::vector<TypeInfo> types = {{dtype, shape}, {label_type, labels_shape}};
              if (weighted) types.push_back({dtype, Shape{classes}});
              const Graph g = op_graph(OpKind::NegativeLogLikelihoodLoss, types, attrs);
              std::vector<Tensor> in = {
                  random_tensor(dtype, shape, ++seed, -12.0, 0.0),
                  labels_for(label_type, labels_shape, classes, ignore, ++seed)};
              if (weighted) in.push_back(random_tensor(dtype, Shape{classes}, ++seed, 0.1, 3.0));
              const std::string what = std::string(dtype_name(dtype)) + " " + shape.str() + " " +
                                       std::string(dtype_name(label_type)) + " labels, " +
                                       reduction + (weighted ? ", weighted" : "") +
                                       (ignore ? ", ignore " + std::to_string(*ignore) : "");
              check_against_cpu(g, in, what);
              if (shape.numel() > 4) {
                in[0] = random_of(dtype, shape, ++seed);  // NaN, inf, subnormals
                check_against_cpu(g, in, what + ", random bits");
              }
            }
          }
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(nll_loss_fails_on_the_first_bad_label_as_the_cpu,
                     *boost::unit_test::precondition(device_available)) {
  uint64_t seed = 900;
  for (DType label_type : kIndexTypes) {
    for (std::optional<int64_t> ignore : {std::optional<int64_t>{}, std::optional<int64_t>{-1}}) {
      const Shape shape{6, 4, 5};
      const Shape labels_shape{6, 5};
      Attributes attrs = {{"reduction", std::string("mean")}};
      if (ignore) attrs["ignore_index"] = std::vector<int64_t>{*ignore};
      const Graph g = op_graph(OpKind::NegativeLogLikelihoodLoss,
                               {{DType::F32, shape}, {label_type, labels_shape}}, attrs);
      Tensor labels = labels_for(label_type, labels_shape, 4, ignore, ++seed);
      labels.set_double(17, 4.0);
      labels.set_double(23, -2.0);
      const std::vector<Tensor> in = {random_tensor(DType::F32, shape, ++seed, -5.0, 0.0), labels};
      const std::string want = error_of(cpu(), g, in);
      BOOST_TEST(want.find("label 4 at labels position [3,2]") != std::string::npos, want);
      BOOST_TEST(error_of(gpu(), g, in) == want);
    }
  }
}

// ---- SoftmaxCrossEntropyLoss (no CPU bits claimed: within a tolerance, and deterministic) ----

// Where `got` and `want` differ by more than rtol * (1 + |want|), or in NaN-ness; empty if not.
std::string outside_tolerance(const Tensor& got, const Tensor& want, double rtol) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) return "type";
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double g = got.get_double(i);
    const double w = want.get_double(i);
    if ((g != g) != (w != w)) return "element " + std::to_string(i) + ": NaN-ness differs";
    if (g != g || g == w) continue;
    if (!(std::abs(g - w) <= rtol * (1.0 + std::abs(w)))) {
      return "element " + std::to_string(i) + ": cuda " + std::to_string(g) + ", cpu " +
             std::to_string(w);
    }
  }
  return {};
}

BOOST_AUTO_TEST_CASE(softmax_cross_entropy_is_close_to_the_cpu_and_deterministic,
                     *boost::unit_test::precondition(device_available)) {
  uint64_t seed = 1000;
  const std::vector<Shape> shapes = {{1, 3},    {5, 4},    {3, 7, 2},  {0, 4},
                                     {4097, 3}, {2, 5000}, {2, 3, 300}};
  for (DType dtype : {DType::F32, DType::F64}) {
    const double rtol = dtype == DType::F32 ? 1e-5 : 1e-13;
    for (const Shape& shape : shapes) {
      std::vector<int64_t> sample_dims = shape.dims();
      sample_dims.erase(sample_dims.begin() + 1);
      const Shape labels_shape(sample_dims);
      for (const std::string reduction : {"none", "sum", "mean"}) {
        for (int outputs : {1, 2}) {
          for (bool weighted : {false, true}) {
            Attributes attrs = {{"reduction", reduction},
                                {"ignore_index", std::vector<int64_t>{0}}};
            std::vector<TypeInfo> types = {{dtype, shape}, {DType::I64, labels_shape}};
            if (weighted) types.push_back({dtype, Shape{shape[1]}});
            const Graph g = op_graph(OpKind::SoftmaxCrossEntropyLoss, types, attrs, outputs);
            std::vector<Tensor> in = {
                random_tensor(dtype, shape, ++seed, -20.0, 20.0),
                labels_for(DType::I64, labels_shape, shape[1], int64_t{0}, ++seed)};
            if (weighted) in.push_back(random_tensor(dtype, Shape{shape[1]}, ++seed, 0.1, 3.0));
            const std::string what = std::string(dtype_name(dtype)) + " " + shape.str() + " " +
                                     reduction + ", " + std::to_string(outputs) + " outputs" +
                                     (weighted ? ", weighted" : "");
            const std::vector<Tensor> want = run_on(cpu(), g, in);
            const std::vector<Tensor> got = run_on(gpu(), g, in, std::byte{0xff});
            const std::vector<Tensor> again = run_on(gpu(), g, in, std::byte{0x00});
            BOOST_REQUIRE_EQUAL(got.size(), want.size());
            for (size_t k = 0; k < got.size(); ++k) {
              const std::string off = outside_tolerance(got[k], want[k], rtol);
              BOOST_CHECK_MESSAGE(off.empty(), what << ", output " << k << ": " << off);
              BOOST_CHECK_MESSAGE(std::memcmp(got[k].data(), again[k].data(), got[k].nbytes()) == 0,
                                  what << ", output " << k << ": two runs differ");
            }
          }
        }
      }
    }
  }
  // A row holding NaN or +inf is NaN throughout, as on the CPU.
  Tensor x = random_tensor(DType::F32, Shape{3, 4}, ++seed, -2.0, 2.0);
  x.data_as<float>()[1] = std::numeric_limits<float>::quiet_NaN();
  x.data_as<float>()[6] = std::numeric_limits<float>::infinity();
  const Graph g =
      op_graph(OpKind::SoftmaxCrossEntropyLoss, {{DType::F32, Shape{3, 4}}, {DType::I64, Shape{3}}},
               {{"reduction", std::string("none")}}, 2);
  Tensor labels(DType::I64, Shape{3});
  for (int64_t i = 0; i < 3; ++i) labels.set_double(i, static_cast<double>(i));
  const std::vector<Tensor> want = run_on(cpu(), g, {x, labels});
  const std::vector<Tensor> got = run_on(gpu(), g, {x, labels});
  for (size_t k = 0; k < 2; ++k) {
    BOOST_TEST(outside_tolerance(got[k], want[k], 1e-5).empty(), "special values, output " << k);
  }
}

}  // namespace
}  // namespace volta
