// The CUDA indexing kernels (kernels/indexing_kernels.cuh) and NegativeLogLikelihoodLoss's
// (kernels/loss_kernels.cuh) run on the host under an emulation of CUDA's threads, on the
// geometry the backend builds (indexing_geometry.h), against the CPU backend's results bit for
// bit: the kernels' index arithmetic, grid-stride loops, the scatters' update order, TopK's
// ranks, the loss tree over leaves and the checks' first positions, without a device. The
// emulated threads run one after another, in launch order and in reverse: neither may change a
// bit. What nvcc makes of the code is the device test's (cuda_device_indexing_test).

#define BOOST_TEST_MODULE cuda_indexing_emulation_test
#include <cuda_runtime.h>  // dim3, uint3; first, so that tree.cuh's include of it is a no-op

#include <bit>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

// NOLINTBEGIN(bugprone-reserved-identifier): the CUDA names the kernels are written with,
// which cuda_runtime_api.h defines as device attributes a host compiler does not know.
#undef __device__
#undef __global__
#undef __forceinline__
#define __device__
#define __global__
#define __forceinline__ inline

inline uint3 threadIdx{};
inline uint3 blockIdx{};
inline dim3 blockDim{};
inline dim3 gridDim{};

inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
// The threads run one at a time, so the integer minimum needs no atomicity here.
inline unsigned long long atomicMin(unsigned long long* address, unsigned long long value) {
  const unsigned long long old = *address;
  if (value < old) *address = value;
  return old;
}
inline long long atomicMax(long long* address, long long value) {
  const long long old = *address;
  if (value > old) *address = value;
  return old;
}
// NOLINTEND(bugprone-reserved-identifier)

#include "indexing_geometry.h"
#include "kernels/indexing_kernels.cuh"
#include "kernels/loss_kernels.cuh"
#include "test_util.h"
#include "volta/ir/random.h"

namespace volta {
namespace {

using namespace cuda;                   // NOLINT(google-build-using-namespace)
using namespace cuda::indexing_detail;  // NOLINT(google-build-using-namespace)
using namespace cuda::loss_detail;      // NOLINT(google-build-using-namespace)
using test::run_cpu;
using test::single_op_graph;

// 3 blocks of 5 threads: every loop strides; `reverse` runs the threads last to first.
void emulate(const std::function<void()>& kernel, bool reverse) {
  gridDim = dim3(3, 1, 1);
  blockDim = dim3(5, 1, 1);
  for (unsigned n = 0; n < 15; ++n) {
    const unsigned t = reverse ? 14 - n : n;
    blockIdx = {t / 5, 0, 0};
    threadIdx = {t % 5, 0, 0};
    kernel();
  }
}

template <class T>
T* data_of(Tensor& t) {
  return static_cast<T*>(t.data());
}
template <class T>
const T* data_of(const Tensor& t) {
  return static_cast<const T*>(t.data());
}

void check_same_bits(const Tensor& got, const Tensor& want, const std::string& what) {
  BOOST_REQUIRE(got.dtype() == want.dtype());
  BOOST_REQUIRE(got.shape() == want.shape());
  BOOST_TEST(std::memcmp(got.data(), want.data(), got.nbytes()) == 0, what);
}

int axis_of(int64_t axis, int rank) { return static_cast<int>(axis < 0 ? axis + rank : axis); }

Tensor indices_in(DType index_type, const Shape& shape, const std::vector<int64_t>& dims,
                  uint64_t seed) {
  Tensor t(index_type, shape);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const int64_t dim = dims[static_cast<size_t>(i) % dims.size()];
    const auto r = static_cast<int64_t>(counter_random_u64(seed, 2, static_cast<uint64_t>(i)) %
                                        static_cast<uint64_t>(2 * dim));
    t.set_double(i, static_cast<double>(r - dim));
  }
  return t;
}

// Calls fn(I{}) with I the index type's C++ type.
template <class Fn>
void with_index(DType index_type, Fn&& fn) {
  if (index_type == DType::I32) {
    fn(int32_t{});
  } else {
    fn(int64_t{});
  }
}

BOOST_AUTO_TEST_CASE(gather_elements_and_its_check) {
  uint64_t seed = 1;
  for (DType index_type : {DType::I32, DType::I64}) {
    for (const auto& [data_dims, index_dims, axis] :
         {std::tuple{Shape{4, 5}, Shape{3, 7}, int64_t{1}},
          std::tuple{Shape{3, 4, 5}, Shape{6, 2, 5}, int64_t{0}},
          std::tuple{Shape{2, 3, 4, 5}, Shape{2, 2, 3, 5}, int64_t{-2}}}) {
      const Shape data_shape = data_dims;  // named copies: lambdas cannot capture bindings
      const Shape index_shape = index_dims;
      const int a = axis_of(axis, data_shape.rank());
      const Tensor data = random_tensor(DType::F32, data_shape, ++seed, -9.0, 9.0);
      Tensor idx = indices_in(index_type, index_shape, {data_shape[a]}, ++seed);
      const Graph graph = single_op_graph(
          OpKind::GatherElements,
          {TypeInfo{DType::F32, data_shape}, TypeInfo{index_type, index_shape}}, {{"axis", axis}});
      const Tensor want = run_cpu(graph, {data, idx})[0];
      const ElementsGeometry g = elements_geometry(data_shape, index_shape, a);
      with_index(index_type, [&](auto tag) {
        using I = decltype(tag);
        for (bool reverse : {false, true}) {
          Tensor got(DType::F32, index_shape);
          emulate(
              [&] {
                gather_elements_kernel<uint32_t, I>(g, data_of<uint32_t>(data), data_of<I>(idx),
                                                    data_of<uint32_t>(got));
              },
              reverse);
          check_same_bits(got, want,
                          "GatherElements " + data_shape.str() + " " + index_shape.str());
        }
        // Two bad indices: the check finds the first, in any thread order.
        idx.set_double(idx.numel() - 3, static_cast<double>(data_shape[a]));
        idx.set_double(idx.numel() - 1, static_cast<double>(-data_shape[a] - 1));
        for (bool reverse : {false, true}) {
          unsigned long long word = ~0ull;
          emulate([&] { find_bad_tuple_index_kernel<I>(axis_tuples(g), data_of<I>(idx), &word); },
                  reverse);
          BOOST_TEST(word == static_cast<unsigned long long>(idx.numel() - 3));
        }
      });
    }
  }
}

BOOST_AUTO_TEST_CASE(gather_nd_with_batch_dims) {
  uint64_t seed = 100;
  struct Case {
    Shape data;
    Shape indices;
    int batch_dims;
  };
  for (const Case& c : {Case{{5, 6}, {3, 2}, 0}, Case{{5, 6, 7}, {2, 4, 1}, 0},
                        Case{{4, 6, 7}, {4, 3, 2}, 1}, Case{{2, 3, 4, 5}, {2, 3, 2}, 2}}) {
    const int64_t k = c.indices[c.indices.rank() - 1];
    std::vector<int64_t> dims(static_cast<size_t>(k));
    for (int j = 0; j < k; ++j) dims[static_cast<size_t>(j)] = c.data[c.batch_dims + j];
    const Tensor data = random_tensor(DType::F64, c.data, ++seed, -9.0, 9.0);
    const Tensor idx = indices_in(DType::I64, c.indices, dims, ++seed);
    const Graph graph = single_op_graph(
        OpKind::GatherND, {TypeInfo{DType::F64, c.data}, TypeInfo{DType::I64, c.indices}},
        {{"batch_dims", int64_t{c.batch_dims}}});
    const Tensor want = run_cpu(graph, {data, idx})[0];
    const IndexTuples t = nd_tuples(c.data, c.indices, c.batch_dims);
    for (bool reverse : {false, true}) {
      Tensor got(DType::F64, want.shape());
      emulate(
          [&] {
            gather_nd_kernel<uint64_t, int64_t>(t, data_of<uint64_t>(data), data_of<int64_t>(idx),
                                                data_of<uint64_t>(got));
          },
          reverse);
      check_same_bits(got, want, "GatherND " + c.data.str() + " " + c.indices.str());
    }
    Tensor bad = idx;
    bad.set_double(bad.numel() - 1, static_cast<double>(dims.back()));
    unsigned long long word = ~0ull;
    emulate([&] { find_bad_tuple_index_kernel<int64_t>(t, data_of<int64_t>(bad), &word); }, true);
    BOOST_TEST(word == static_cast<unsigned long long>(bad.numel() - 1));
  }
}

ScatterReduction reduction_named(const std::string& r) {
  if (r == "add") return ScatterReduction::Add;
  if (r == "mul") return ScatterReduction::Mul;
  if (r == "max") return ScatterReduction::Max;
  if (r == "min") return ScatterReduction::Min;
  return ScatterReduction::None;
}

// Few targets per line, so every element sees duplicates; f32 and i32 data.
BOOST_AUTO_TEST_CASE(scatters_apply_duplicates_in_the_cpus_order) {
  uint64_t seed = 200;
  for (DType dtype : {DType::F32, DType::I32}) {
    for (const std::string reduction : {"none", "add", "mul", "max", "min"}) {
      const ScatterReduction r = reduction_named(reduction);
      // ScatterElements along axis 1 of [4, 6] with [3, 9] indices.
      {
        const Shape data_shape{4, 6};
        const Shape idx_shape{3, 9};
        const Tensor data = random_tensor(dtype, data_shape, ++seed, -3.0, 3.0);
        const Tensor idx = indices_in(DType::I32, idx_shape, {3}, ++seed);
        const Tensor updates = random_tensor(dtype, idx_shape, ++seed, -3.0, 3.0);
        const Graph graph =
            single_op_graph(OpKind::ScatterElements,
                            {TypeInfo{dtype, data_shape}, TypeInfo{DType::I32, idx_shape},
                             TypeInfo{dtype, idx_shape}},
                            {{"axis", int64_t{1}}, {"reduction", reduction}});
        const Tensor want = run_cpu(graph, {data, idx, updates})[0];
        const ElementsGeometry g = elements_geometry(data_shape, idx_shape, 1);
        for (bool reverse : {false, true}) {
          Tensor got = data;
          emulate(
              [&] {
                if (dtype == DType::F32) {
                  scatter_elements_kernel<float, int32_t>(
                      g, r, data_of<int32_t>(idx), data_of<float>(updates), data_of<float>(got));
                } else {
                  scatter_elements_kernel<int32_t, int32_t>(g, r, data_of<int32_t>(idx),
                                                            data_of<int32_t>(updates),
                                                            data_of<int32_t>(got));
                }
              },
              reverse);
          check_same_bits(got, want, "ScatterElements " + reduction);
        }
      }
      // ScatterND of [5, 4, 3] with [7, 2] tuples (slices of 3) and [40, 3] tuples (elements).
      for (const Shape& idx_shape : {Shape{7, 2}, Shape{40, 3}, Shape{2, 3, 1}}) {
        const Shape data_shape{5, 4, 3};
        const int64_t k = idx_shape[idx_shape.rank() - 1];
        std::vector<int64_t> update_dims(idx_shape.dims().begin(), idx_shape.dims().end() - 1);
        update_dims.insert(update_dims.end(), data_shape.dims().begin() + k,
                           data_shape.dims().end());
        const Shape updates_shape(update_dims);
        const Tensor data = random_tensor(dtype, data_shape, ++seed, -3.0, 3.0);
        const Tensor idx = indices_in(DType::I64, idx_shape, std::vector<int64_t>(k, 2), ++seed);
        const Tensor updates = random_tensor(dtype, updates_shape, ++seed, -3.0, 3.0);
        const Graph graph =
            single_op_graph(OpKind::ScatterND,
                            {TypeInfo{dtype, data_shape}, TypeInfo{DType::I64, idx_shape},
                             TypeInfo{dtype, updates_shape}},
                            {{"reduction", reduction}});
        const Tensor want = run_cpu(graph, {data, idx, updates})[0];
        const IndexTuples t = nd_tuples(data_shape, idx_shape, 0);
        for (bool reverse : {false, true}) {
          Tensor got = data;
          emulate(
              [&] {
                if (dtype == DType::F32) {
                  scatter_nd_kernel<float, int64_t>(t, r, data_of<int64_t>(idx),
                                                    data_of<float>(updates), data_of<float>(got));
                } else {
                  scatter_nd_kernel<int32_t, int64_t>(t, r, data_of<int64_t>(idx),
                                                      data_of<int32_t>(updates),
                                                      data_of<int32_t>(got));
                }
              },
              reverse);
          check_same_bits(got, want, "ScatterND " + idx_shape.str() + " " + reduction);
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(trilu_keeps_the_cpus_columns) {
  uint64_t seed = 300;
  for (const Shape& shape : {Shape{3, 4}, Shape{2, 5, 3}}) {
    for (int64_t upper : {0, 1}) {
      for (int64_t k : {std::numeric_limits<int64_t>::min(), int64_t{-2}, int64_t{0}, int64_t{1},
                        int64_t{4}, std::numeric_limits<int64_t>::max()}) {
        const Tensor x = random_tensor(DType::I64, shape, ++seed, -9.0, 9.0);
        const Graph graph = single_op_graph(OpKind::Trilu, {TypeInfo{DType::I64, shape}},
                                            {{"upper", upper}, {"k", k}});
        const Tensor want = run_cpu(graph, {x})[0];
        const TriluGeometry g = trilu_geometry(shape, upper != 0, k);
        Tensor got(DType::I64, shape);
        emulate([&] { trilu_kernel<uint64_t>(g, data_of<uint64_t>(x), data_of<uint64_t>(got)); },
                upper != 0);
        check_same_bits(got, want, "Trilu " + shape.str() + " k " + std::to_string(k));
      }
    }
  }
}

template <class I>
void check_one_hot(DType index_type, const Tensor& idx, int64_t depth, int64_t axis) {
  const Tensor values = test::filled(DType::F32, Shape{2}, {-0.5, 2.0});
  const Graph graph = single_op_graph(
      OpKind::OneHot, {TypeInfo{index_type, idx.shape()}, TypeInfo{DType::F32, Shape{2}}},
      {{"depth", depth}, {"axis", axis}});
  const Tensor want = run_cpu(graph, {idx, values})[0];
  const OneHotGeometry g = one_hot_geometry(want.shape(), axis_of(axis, want.shape().rank()));
  Tensor got(DType::F32, want.shape());
  emulate(
      [&] {
        one_hot_kernel<uint32_t, I>(g, data_of<I>(idx), data_of<uint32_t>(values),
                                    data_of<uint32_t>(got));
      },
      false);
  check_same_bits(
      got, want, "OneHot " + std::string(dtype_name(index_type)) + " axis " + std::to_string(axis));
}

BOOST_AUTO_TEST_CASE(one_hot_truncates_and_drops_as_the_cpu) {
  const Tensor f =
      test::filled(DType::F32, Shape{2, 4}, {std::nan(""), -0.9, 2.7, -3.5, 4.0, -5.0, 1e30, -1.0});
  const Tensor d = test::filled(DType::F64, Shape{2, 4},
                                {std::nan(""), 0.5, 3.99, -4.0, 5.0, -2.2, -1e300, 1.0});
  const Tensor i = test::filled(DType::I32, Shape{2, 4}, {0, 1, -1, -4, 4, 3, -5, 2});
  for (int64_t axis : {-1, 0, 1, 2}) {
    check_one_hot<float>(DType::F32, f, 4, axis);
    check_one_hot<double>(DType::F64, d, 4, axis);
    check_one_hot<int32_t>(DType::I32, i, 4, axis);
  }
}

BOOST_AUTO_TEST_CASE(top_k_ranks_ties_and_nans_as_the_cpu) {
  uint64_t seed = 400;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float specials[] = {0.0f,
                            -0.0f,
                            1.0f,
                            -1.0f,
                            nan,
                            std::bit_cast<float>(0x7fc00123u),
                            std::numeric_limits<float>::infinity()};
  for (const Shape& shape : {Shape{13}, Shape{3, 11, 2}}) {
    Tensor x(DType::F32, shape);
    for (int64_t e = 0; e < x.numel(); ++e) {
      data_of<float>(x)[e] = specials[counter_random_u64(++seed, 6, 0) % 7];
    }
    for (int64_t axis = 0; axis < shape.rank(); ++axis) {
      const int64_t n = shape[static_cast<int>(axis)];
      for (int64_t k : {int64_t{1}, n / 2, n}) {
        for (int64_t largest : {0, 1}) {
          const Graph graph = single_op_graph(OpKind::TopK, {TypeInfo{DType::F32, shape}},
                                              {{"k", k}, {"axis", axis}, {"largest", largest}}, 2);
          const std::vector<Tensor> want = run_cpu(graph, {x});
          const TopKGeometry g = top_k_geometry(shape, static_cast<int>(axis), k, largest != 0);
          Tensor values(DType::F32, want[0].shape());
          Tensor indices(DType::I64, want[1].shape());
          emulate(
              [&] {
                top_k_kernel<float>(g, data_of<float>(x), data_of<float>(values),
                                    data_of<int64_t>(indices));
              },
              largest != 0);
          const std::string what = "TopK " + shape.str() + " axis " + std::to_string(axis) + " k " +
                                   std::to_string(k) + " largest " + std::to_string(largest);
          check_same_bits(values, want[0], what);
          check_same_bits(indices, want[1], what);
        }
      }
    }
  }
}

// NegativeLogLikelihoodLoss: the per-leaf kernel on the emulated grid, then the one-thread
// finish, against the CPU's tree over 1 to 4 leaves of samples.
BOOST_AUTO_TEST_CASE(nll_loss_sums_over_the_cpus_tree) {
  uint64_t seed = 500;
  for (const Shape& shape : {Shape{5, 4}, Shape{3, 2, 5000}, Shape{4097, 3}, Shape{0, 3}}) {
    std::vector<int64_t> sample_dims = shape.dims();
    sample_dims.erase(sample_dims.begin() + 1);
    const Shape labels_shape(sample_dims);
    for (const std::string reduction : {"none", "sum", "mean"}) {
      for (bool weighted : {false, true}) {
        for (bool ignoring : {false, true}) {
          Attributes attrs = {{"reduction", reduction}};
          if (ignoring) attrs["ignore_index"] = std::vector<int64_t>{1};
          std::vector<std::optional<TypeInfo>> types = {TypeInfo{DType::F64, shape},
                                                        TypeInfo{DType::I64, labels_shape}};
          if (weighted) types.emplace_back(TypeInfo{DType::F64, Shape{shape[1]}});
          const Graph graph = single_op_graph(OpKind::NegativeLogLikelihoodLoss, types, attrs);
          std::vector<Tensor> in = {
              random_tensor(DType::F64, shape, ++seed, -30.0, 0.0),
              random_tensor(DType::I64, labels_shape, ++seed, 0.0, static_cast<double>(shape[1]))};
          if (weighted) in.push_back(random_tensor(DType::F64, Shape{shape[1]}, ++seed, 0.1, 3.0));
          const Tensor want = run_cpu(graph, in)[0];

          LossGeometry g;
          g.classes = shape[1];
          g.inner = shape.rank() > 2 ? shape[2] : 1;
          g.samples = labels_shape.numel();
          g.has_ignore = ignoring;
          g.ignore = 1;
          const Samples<double, int64_t> samples{g, data_of<double>(in[0]), data_of<int64_t>(in[1]),
                                                 weighted ? data_of<double>(in[2]) : nullptr};
          Tensor got(DType::F64, want.shape());
          const std::string what = "NLL " + shape.str() + " " + reduction +
                                   (weighted ? " weighted" : "") + (ignoring ? " ignoring" : "");
          if (reduction == "none") {
            emulate([&] { nll_per_sample_kernel<double, int64_t>(samples, data_of<double>(got)); },
                    true);
            check_same_bits(got, want, what);
            continue;
          }
          const int64_t leaves = g.leaves();
          std::vector<double> losses(static_cast<size_t>(leaves), -1.0);
          std::vector<double> weights(static_cast<size_t>(leaves), -1.0);
          std::vector<int64_t> counted(static_cast<size_t>(leaves), -1);
          const LeafPartials p{losses.data(), weights.data(), counted.data()};
          emulate([&] { nll_leaf_kernel<double, int64_t>(samples, leaves, p); }, false);
          gridDim = dim3(1, 1, 1);  // the finish is one thread
          blockDim = dim3(1, 1, 1);
          blockIdx = {0, 0, 0};
          threadIdx = {0, 0, 0};
          nll_finish_kernel<double>(leaves,
                                    reduction == "sum" ? LossReduction::Sum : LossReduction::Mean,
                                    weighted, p, data_of<double>(got));
          check_same_bits(got, want, what);
        }
      }
    }
  }
  // The label check finds the first bad label (the ignored one passes).
  LossGeometry g;
  g.classes = 4;
  g.samples = 9;
  g.has_ignore = true;
  g.ignore = -1;
  const int32_t labels[] = {0, 3, -1, 2, 7, 1, -5, 4, -1};
  for (bool reverse : {false, true}) {
    unsigned long long word = ~0ull;
    emulate([&] { find_bad_label_kernel<int32_t>(g, labels, &word); }, reverse);
    BOOST_TEST(word == 4u);
  }
}

// Reduction "none" with long runs goes by last writer: an atomicMax per target, then the
// winners write; in either thread order, the CPU's last-wins result.
BOOST_AUTO_TEST_CASE(scatters_by_last_writer_keep_the_cpus_last_update) {
  uint64_t seed = 600;
  {
    const Shape data_shape{4, 6};
    const Shape idx_shape{3, 100};
    const Tensor data = random_tensor(DType::F64, data_shape, ++seed, -3.0, 3.0);
    const Tensor idx = indices_in(DType::I64, idx_shape, {4}, ++seed);
    const Tensor updates = random_tensor(DType::F64, idx_shape, ++seed, -3.0, 3.0);
    const Graph graph =
        single_op_graph(OpKind::ScatterElements,
                        {TypeInfo{DType::F64, data_shape}, TypeInfo{DType::I64, idx_shape},
                         TypeInfo{DType::F64, idx_shape}},
                        {{"axis", int64_t{1}}});
    const Tensor want = run_cpu(graph, {data, idx, updates})[0];
    const ElementsGeometry g = elements_geometry(data_shape, idx_shape, 1);
    for (bool reverse : {false, true}) {
      Tensor got = data;
      std::vector<long long> last(static_cast<size_t>(data_shape.numel()), -1);
      emulate(
          [&] {
            scatter_elements_last_writer_kernel<int64_t>(g, data_of<int64_t>(idx), last.data());
          },
          reverse);
      emulate(
          [&] {
            scatter_elements_assign_last_kernel<uint64_t, int64_t>(
                g, data_of<int64_t>(idx), last.data(), data_of<uint64_t>(updates),
                data_of<uint64_t>(got));
          },
          !reverse);
      check_same_bits(got, want, "ScatterElements by last writer");
    }
  }
  for (const Shape& idx_shape : {Shape{100, 2}, Shape{90, 1}, Shape{5, 30, 3}}) {
    const Shape data_shape{5, 4, 3};
    const int64_t k = idx_shape[idx_shape.rank() - 1];
    std::vector<int64_t> update_dims(idx_shape.dims().begin(), idx_shape.dims().end() - 1);
    update_dims.insert(update_dims.end(), data_shape.dims().begin() + k, data_shape.dims().end());
    const Shape updates_shape(update_dims);
    const Tensor data = random_tensor(DType::I32, data_shape, ++seed, -9.0, 9.0);
    const Tensor idx = indices_in(DType::I32, idx_shape, std::vector<int64_t>(k, 3), ++seed);
    const Tensor updates = random_tensor(DType::I32, updates_shape, ++seed, -9.0, 9.0);
    const Graph graph = single_op_graph(
        OpKind::ScatterND, {TypeInfo{DType::I32, data_shape}, TypeInfo{DType::I32, idx_shape},
                            TypeInfo{DType::I32, updates_shape}});
    const Tensor want = run_cpu(graph, {data, idx, updates})[0];
    const IndexTuples t = nd_tuples(data_shape, idx_shape, 0);
    for (bool reverse : {false, true}) {
      Tensor got = data;
      std::vector<long long> last(static_cast<size_t>(data_shape.numel() / t.slice), -1);
      emulate(
          [&] { scatter_nd_last_writer_kernel<int32_t>(t, data_of<int32_t>(idx), last.data()); },
          reverse);
      emulate(
          [&] {
            scatter_nd_assign_last_kernel<uint32_t, int32_t>(t, data_of<int32_t>(idx), last.data(),
                                                             data_of<uint32_t>(updates),
                                                             data_of<uint32_t>(got));
          },
          reverse);
      check_same_bits(got, want, "ScatterND by last writer " + idx_shape.str());
    }
  }
}

}  // namespace
}  // namespace volta
