// CPU kernels of the indexing and layout ops added for ONNX import, against hand-checked
// values (most from the ONNX operator docs and backend test data), and their error messages.
#define BOOST_TEST_MODULE cpu_indexing
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>

#include "test_util.h"

namespace volta {
namespace {

using test::filled;
using test::run_op;
using Ints = std::vector<int64_t>;
using Values = std::vector<double>;

const double kNaN = std::numeric_limits<double>::quiet_NaN();

Tensor f32(Shape shape, const Values& v) { return filled(DType::F32, std::move(shape), v); }
Tensor i64(Shape shape, const Values& v) { return filled(DType::I64, std::move(shape), v); }

Tensor run1(OpKind op, const std::vector<Tensor>& inputs, Attributes attrs = {}) {
  return run_op(op, inputs, std::move(attrs)).at(0);
}

// Exact comparison (NaN where NaN), naming the first differing element.
void check_equal(const Tensor& got, const Tensor& want) {
  BOOST_REQUIRE_EQUAL(dtype_name(got.dtype()), dtype_name(want.dtype()));
  BOOST_REQUIRE_EQUAL(got.shape().str(), want.shape().str());
  test::check_close(got, want, 0.0, 0.0);
}

// Runs `op` and expects R-KERNEL-FAILURE with a message containing `text`.
void check_kernel_failure(OpKind op, const std::vector<Tensor>& inputs, Attributes attrs,
                          const std::string& text, int num_outputs = 1) {
  try {
    run_op(op, inputs, std::move(attrs), num_outputs);
    BOOST_FAIL("expected R-KERNEL-FAILURE");
  } catch (const VoltaError& e) {
    BOOST_TEST(error_code_name(e.code()) == "R-KERNEL-FAILURE");
    BOOST_TEST(e.message().find(text) != std::string::npos, e.message());
  }
}

BOOST_AUTO_TEST_CASE(gather_elements_follows_the_onnx_examples) {
  check_equal(run1(OpKind::GatherElements, {f32({2, 2}, {1, 2, 3, 4}), i64({2, 2}, {0, 0, 1, 0})},
                   {{"axis", int64_t{1}}}),
              f32({2, 2}, {1, 1, 4, 3}));
  const Tensor data = f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  check_equal(run1(OpKind::GatherElements, {data, i64({2, 3}, {-1, -2, 0, -2, 0, 0})}),
              f32({2, 3}, {7, 5, 3, 4, 2, 3}));
  check_kernel_failure(OpKind::GatherElements, {data, i64({2, 3}, {0, 1, 2, 0, 3, 0})}, {},
                       "index 3 at indices position [1,1] is out of range for data axis 0 of "
                       "size 3 (valid: [-3, 2])");
}

BOOST_AUTO_TEST_CASE(gather_nd_takes_slices_and_batch_dims) {
  const Tensor data = f32({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  check_equal(run1(OpKind::GatherND, {data, i64({2, 1, 2}, {0, 1, 1, 0})}),
              f32({2, 1, 2}, {2, 3, 4, 5}));
  check_equal(run1(OpKind::GatherND, {data, i64({2, 3}, {0, 1, 1, 1, 0, -1})}), f32({2}, {3, 5}));
  check_equal(run1(OpKind::GatherND, {data, i64({2, 1}, {1, 0})}, {{"batch_dims", int64_t{1}}}),
              f32({2, 2}, {2, 3, 4, 5}));
  check_kernel_failure(OpKind::GatherND, {data, i64({2, 2}, {0, 1, 2, 0})}, {},
                       "index 2 at indices position [1,0] is out of range for data axis 0");
}

BOOST_AUTO_TEST_CASE(scatter_elements_applies_updates_in_index_order) {
  const Tensor row = f32({1, 5}, {1, 2, 3, 4, 5});
  const Tensor updates = f32({1, 2}, {1.1, 2.1});
  const Attributes axis1{{"axis", int64_t{1}}};
  check_equal(run1(OpKind::ScatterElements, {row, i64({1, 2}, {1, 3}), updates}, axis1),
              f32({1, 5}, {1, 1.1, 3, 2.1, 5}));
  check_equal(run1(OpKind::ScatterElements, {row, i64({1, 2}, {1, -3}), updates}, axis1),
              f32({1, 5}, {1, 1.1, 2.1, 4, 5}));
  // Duplicates: "add" sums both, "none" keeps the last update in index order.
  Attributes add = axis1;
  add["reduction"] = std::string("add");
  check_equal(run1(OpKind::ScatterElements, {row, i64({1, 2}, {1, 1}), updates}, add),
              f32({1, 5}, {1, static_cast<float>(static_cast<float>(2 + 1.1f) + 2.1f), 3, 4, 5}));
  check_equal(run1(OpKind::ScatterElements, {row, i64({1, 2}, {1, 1}), updates}, axis1),
              f32({1, 5}, {1, 2.1, 3, 4, 5}));
  check_equal(
      run1(OpKind::ScatterElements, {f32({3, 3}, Values(9, 0.0)), i64({2, 3}, {1, 0, 2, 0, 2, 1}),
                                     f32({2, 3}, {1, 1.1, 1.2, 2, 2.1, 2.2})}),
      f32({3, 3}, {2, 1.1, 0, 1, 0, 2.2, 0, 2.1, 1.2}));
  check_kernel_failure(OpKind::ScatterElements, {row, i64({1, 2}, {1, 5}), updates}, axis1,
                       "index 5 at indices position [0,1] is out of range for data axis 1");
}

// numpy.maximum / numpy.minimum in index order: a NaN (data's or an update's) propagates and
// stays; of equal values the current one stays (-0 kept over +0 and the other way round).
BOOST_AUTO_TEST_CASE(scatter_max_and_min_propagate_nan_and_keep_the_current_of_equals) {
  const Tensor data = f32({1, 5}, {1, kNaN, 3, -0.0, 0.0});
  const Tensor idx = i64({1, 6}, {0, 0, 1, 2, 3, 4});
  const Tensor updates = f32({1, 6}, {5, kNaN, 7, 2, 0.0, -0.0});
  Attributes max{{"axis", int64_t{1}}, {"reduction", std::string("max")}};
  Attributes min = max;
  min["reduction"] = std::string("min");
  const Tensor got_max = run1(OpKind::ScatterElements, {data, idx, updates}, max);
  check_equal(got_max, f32({1, 5}, {kNaN, kNaN, 3, -0.0, 0.0}));
  BOOST_TEST(std::signbit(got_max.get_double(3)));  // -0 stays: +0 is not greater
  const Tensor got_min = run1(OpKind::ScatterElements, {data, idx, updates}, min);
  check_equal(got_min, f32({1, 5}, {kNaN, kNaN, 2, -0.0, 0.0}));
  BOOST_TEST(!std::signbit(got_min.get_double(4)));  // +0 stays: -0 is not less
  // ScatterND, integers: slices combine element by element.
  check_equal(
      run1(OpKind::ScatterND,
           {i64({2, 2}, {4, -1, 0, 9}), i64({3, 1}, {0, 1, 0}), i64({3, 2}, {3, 2, 5, 5, 6, -3})},
           {{"reduction", std::string("max")}}),
      i64({2, 2}, {6, 2, 5, 9}));
}

// y = -x dies at the scatter, so the output may take y's buffer while y is still read as the
// updates: the kernel must read every update before it overwrites one.
BOOST_AUTO_TEST_CASE(scatters_whose_output_shares_the_updates_buffer) {
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, Shape{4});
  const ValueId idx = g.add_input("idx", DType::I64, Shape{4});
  const ValueId y = g.add(OpKind::Neg, {x});
  g.set_outputs({g.add(OpKind::ScatterElements, {y, idx, y})});
  check_equal(test::run_cpu(g, {f32({4}, {1, 2, 3, 4}), i64({4}, {3, 2, 1, 0})}).at(0),
              f32({4}, {-4, -3, -2, -1}));

  Graph nd;
  const ValueId a = nd.add_input("a", DType::F32, Shape{2, 2});
  const ValueId rows = nd.add_input("rows", DType::I64, Shape{2, 1});
  const ValueId b = nd.add(OpKind::Neg, {a});
  nd.set_outputs({nd.add(OpKind::ScatterND, {b, rows, b}, {{"reduction", std::string("add")}})});
  check_equal(test::run_cpu(nd, {f32({2, 2}, {1, 2, 3, 4}), i64({2, 1}, {1, 0})}).at(0),
              f32({2, 2}, {-4, -6, -4, -6}));
}

BOOST_AUTO_TEST_CASE(scatter_nd_updates_elements_and_slices) {
  check_equal(run1(OpKind::ScatterND, {f32({8}, {1, 2, 3, 4, 5, 6, 7, 8}),
                                       i64({4, 1}, {4, 3, 1, 7}), f32({4}, {9, 10, 11, 12})}),
              f32({8}, {1, 11, 3, 10, 9, 6, 7, 12}));
  // Duplicate index 0 with "mul": both slices multiply in (the ONNX multiply test, shrunk).
  check_equal(run1(OpKind::ScatterND,
                   {f32({2, 2}, {1, 2, 3, 4}), i64({2, 1}, {0, 0}), f32({2, 2}, {5, 6, 2, 3})},
                   {{"reduction", std::string("mul")}}),
              f32({2, 2}, {10, 36, 3, 4}));
  check_equal(run1(OpKind::ScatterND,
                   {i64({2, 2}, {1, 2, 3, 4}), i64({2, 2}, {0, 1, -1, -2}), i64({2}, {7, 8})},
                   {{"reduction", std::string("add")}}),
              i64({2, 2}, {1, 9, 11, 4}));
}

BOOST_AUTO_TEST_CASE(scatter_reductions_need_numeric_data) {
  Tensor flags(DType::Bool, Shape{3});
  Tensor upd(DType::Bool, Shape{1});
  BOOST_CHECK_EXCEPTION(run_op(OpKind::ScatterND, {flags, i64({1, 1}, {0}), upd},
                               {{"reduction", std::string("add")}}),
                        VoltaError, [](const VoltaError& e) {
                          return e.code() == ErrorCode::VerifyShape &&
                                 e.message().find("bool supports only \"none\"") !=
                                     std::string::npos;
                        });
}

BOOST_AUTO_TEST_CASE(top_k_is_stable_and_ranks_nan_highest) {
  const Tensor x = f32({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 11, 10, 9, 8});
  std::vector<Tensor> got =
      run_op(OpKind::TopK, {x}, {{"k", int64_t{3}}, {"largest", int64_t{0}}}, 2);
  check_equal(got[0], f32({3, 3}, {0, 1, 2, 4, 5, 6, 8, 9, 10}));
  check_equal(got[1], i64({3, 3}, {0, 1, 2, 0, 1, 2, 3, 2, 1}));
  const Tensor ties = f32({6}, {1, kNaN, 3, 3, kNaN, -1});
  got = run_op(OpKind::TopK, {ties}, {{"k", int64_t{4}}}, 2);
  check_equal(got[0], f32({4}, {kNaN, kNaN, 3, 3}));
  check_equal(got[1], i64({4}, {1, 4, 2, 3}));
  got = run_op(OpKind::TopK, {ties}, {{"k", int64_t{4}}, {"largest", int64_t{0}}}, 2);
  check_equal(got[0], f32({4}, {-1, 1, 3, 3}));
  check_equal(got[1], i64({4}, {5, 0, 2, 3}));
  got = run_op(OpKind::TopK, {x}, {{"k", int64_t{2}}, {"axis", int64_t{0}}}, 2);
  check_equal(got[0], f32({2, 4}, {11, 10, 9, 8, 4, 5, 6, 7}));
  check_equal(got[1], i64({2, 4}, {2, 2, 2, 2, 1, 1, 1, 1}));
}

BOOST_AUTO_TEST_CASE(one_hot_handles_axes_negative_and_out_of_range_indices) {
  const Tensor values = f32({2}, {1, 3});
  check_equal(run1(OpKind::OneHot, {i64({3}, {0, -7, -8}), values}, {{"depth", int64_t{10}}}),
              f32({3, 10}, {3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 1,
                            1, 1, 1, 1, 1, 1, 1, 3, 1, 1, 1, 1, 1, 1, 1}));
  // Float indices truncate; 4.0 and NaN select nothing with depth 4.
  check_equal(run1(OpKind::OneHot, {f32({2, 2}, {1.9, -0.5, 4, kNaN}), values},
                   {{"depth", int64_t{4}}, {"axis", int64_t{1}}}),
              f32({2, 4, 2}, {1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}));
  check_equal(run1(OpKind::OneHot, {i64({2}, {2, 12}), filled(DType::I32, {2}, {2, 5})},
                   {{"depth", int64_t{3}}, {"axis", int64_t{0}}}),
              filled(DType::I32, {3, 2}, {2, 2, 2, 2, 5, 2}));
}

BOOST_AUTO_TEST_CASE(trilu_keeps_the_triangles_of_the_onnx_tests) {
  const Tensor x = i64({4, 5}, {5, 0, 3, 3, 7, 9, 3, 5, 2, 4, 7, 6, 8, 8, 1, 6, 7, 7, 8, 1});
  check_equal(run1(OpKind::Trilu, {x}, {{"k", int64_t{-1}}}),
              i64({4, 5}, {5, 0, 3, 3, 7, 9, 3, 5, 2, 4, 0, 6, 8, 8, 1, 0, 0, 7, 8, 1}));
  check_equal(run1(OpKind::Trilu, {x}, {{"upper", int64_t{0}}, {"k", int64_t{2}}}),
              i64({4, 5}, {5, 0, 3, 0, 0, 9, 3, 5, 2, 0, 7, 6, 8, 8, 1, 6, 7, 7, 8, 1}));
  check_equal(run1(OpKind::Trilu, {x}, {{"upper", int64_t{0}}, {"k", int64_t{-7}}}),
              i64({4, 5}, Values(20, 0.0)));
}

BOOST_AUTO_TEST_CASE(tile_repeats_every_axis) {
  check_equal(run1(OpKind::Tile, {f32({2, 2}, {0, 1, 2, 3})}, {{"repeats", Ints{2, 2}}}),
              f32({4, 4}, {0, 1, 0, 1, 2, 3, 2, 3, 0, 1, 0, 1, 2, 3, 2, 3}));
  check_equal(run1(OpKind::Tile, {f32({1, 3}, {1, 2, 3})}, {{"repeats", Ints{2, 0}}}),
              f32({2, 0}, {}));
}

BOOST_AUTO_TEST_CASE(pad_modes_follow_the_onnx_examples) {
  const Tensor x = f32({3, 2}, {1.0, 1.2, 2.3, 3.4, 4.5, 5.7});
  const Ints pads{0, 2, 0, 0};
  check_equal(run1(OpKind::Pad, {x}, {{"pads", pads}}),
              f32({3, 4}, {0, 0, 1.0, 1.2, 0, 0, 2.3, 3.4, 0, 0, 4.5, 5.7}));
  check_equal(run1(OpKind::Pad, {x, f32({}, {-1})}, {{"pads", pads}}),
              f32({3, 4}, {-1, -1, 1.0, 1.2, -1, -1, 2.3, 3.4, -1, -1, 4.5, 5.7}));
  check_equal(run1(OpKind::Pad, {x}, {{"pads", pads}, {"mode", std::string("reflect")}}),
              f32({3, 4}, {1.0, 1.2, 1.0, 1.2, 2.3, 3.4, 2.3, 3.4, 4.5, 5.7, 4.5, 5.7}));
  check_equal(run1(OpKind::Pad, {x}, {{"pads", pads}, {"mode", std::string("edge")}}),
              f32({3, 4}, {1.0, 1.0, 1.0, 1.2, 2.3, 2.3, 2.3, 3.4, 4.5, 4.5, 4.5, 5.7}));
  // Negative pads crop; reflect pads longer than the axis bounce between its ends.
  check_equal(run1(OpKind::Pad, {x}, {{"pads", Ints{-1, 0, 0, -1}}}), f32({2, 1}, {2.3, 4.5}));
  check_equal(run1(OpKind::Pad, {f32({3}, {1, 2, 3})},
                   {{"pads", Ints{5, 0}}, {"mode", std::string("reflect")}}),
              f32({8}, {2, 1, 2, 3, 2, 1, 2, 3}));
}

BOOST_AUTO_TEST_CASE(depth_to_space_and_back_match_the_onnx_examples) {
  Values in;
  for (double base : {0.0, 9.0, 18.0, 27.0, 36.0, 45.0, 54.0, 63.0}) {
    for (double d : {0.0, 1.0, 2.0, 3.0, 4.0, 5.0}) in.push_back(base + d);
  }
  const Tensor x = f32({1, 8, 2, 3}, in);
  check_equal(run1(OpKind::DepthToSpace, {x}, {{"blocksize", int64_t{2}}}),
              f32({1, 2, 4, 6}, {0,  18, 1,  19, 2,  20, 36, 54, 37, 55, 38, 56, 3,  21, 4,  22,
                                 5,  23, 39, 57, 40, 58, 41, 59, 9,  27, 10, 28, 11, 29, 45, 63,
                                 46, 64, 47, 65, 12, 30, 13, 31, 14, 32, 48, 66, 49, 67, 50, 68}));
  check_equal(
      run1(OpKind::DepthToSpace, {x}, {{"blocksize", int64_t{2}}, {"mode", std::string("CRD")}}),
      f32({1, 2, 4, 6}, {0,  9,  1,  10, 2,  11, 18, 27, 19, 28, 20, 29, 3,  12, 4,  13,
                         5,  14, 21, 30, 22, 31, 23, 32, 36, 45, 37, 46, 38, 47, 54, 63,
                         55, 64, 56, 65, 39, 48, 40, 49, 41, 50, 57, 66, 58, 67, 59, 68}));
  const Tensor space = run1(OpKind::DepthToSpace, {x}, {{"blocksize", int64_t{2}}});
  check_equal(run1(OpKind::SpaceToDepth, {space}, {{"blocksize", int64_t{2}}}), x);
}

BOOST_AUTO_TEST_CASE(reverse_sequence_follows_the_onnx_examples) {
  Values v(16);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
  const Tensor x = f32({4, 4}, v);
  check_equal(run1(OpKind::ReverseSequence, {x, i64({4}, {1, 2, 3, 4})},
                   {{"batch_axis", int64_t{0}}, {"time_axis", int64_t{1}}}),
              f32({4, 4}, {0, 1, 2, 3, 5, 4, 6, 7, 10, 9, 8, 11, 15, 14, 13, 12}));
  check_equal(run1(OpKind::ReverseSequence, {x, i64({4}, {4, 3, 2, 1})}),
              f32({4, 4}, {12, 9, 6, 3, 8, 5, 2, 7, 4, 1, 10, 11, 0, 13, 14, 15}));
  check_kernel_failure(OpKind::ReverseSequence, {x, i64({4}, {4, 5, 2, 1})}, {},
                       "sequence_lens[1] = 5 is out of range for time axis 0 of size 4");
}

// Shapes that span many chunks: outputs are bit-identical for 1, 2, 3 and 8 threads (scatter
// duplicates included, which must be applied in index order however the work is split).
BOOST_AUTO_TEST_CASE(outputs_do_not_depend_on_the_thread_count) {
  const Tensor data = test::uniform(DType::F32, {64, 1000}, 1);
  Tensor rows(DType::I64, Shape{3000, 1});
  Tensor cols(DType::I64, Shape{64, 1000});
  for (int64_t i = 0; i < rows.numel(); ++i) rows.set_int(i, (i * 7) % 64 - 32);
  for (int64_t i = 0; i < cols.numel(); ++i) cols.set_int(i, (i * 13) % 1000 - 500);
  const Tensor slices = test::uniform(DType::F32, {3000, 1000}, 2);
  const Attributes add{{"reduction", std::string("add")}};
  const std::vector<std::tuple<OpKind, std::vector<Tensor>, Attributes, int>> runs = {
      {OpKind::ScatterND, {data, rows, slices}, add, 1},
      {OpKind::ScatterElements,
       {data, cols, data},
       {{"axis", int64_t{1}}, {"reduction", std::string("mul")}},
       1},
      {OpKind::GatherElements, {data, cols}, {{"axis", int64_t{-1}}}, 1},
      {OpKind::GatherND, {data, rows}, {}, 1},
      {OpKind::TopK, {data}, {{"k", int64_t{100}}}, 2},
      {OpKind::Trilu, {data}, {{"k", int64_t{-3}}}, 1},
      {OpKind::Tile, {data}, {{"repeats", Ints{2, 3}}}, 1},
      {OpKind::Pad, {data}, {{"pads", Ints{3, 5, 2, 7}}, {"mode", std::string("reflect")}}, 1},
  };
  for (const auto& [op, inputs, attrs, outputs] : runs) {
    BOOST_TEST_CONTEXT(op_name(op)) {
      const std::vector<Tensor> one = run_op(op, inputs, attrs, outputs, 1);
      for (int threads : {2, 3, 8}) {
        const std::vector<Tensor> many = run_op(op, inputs, attrs, outputs, threads);
        for (size_t i = 0; i < one.size(); ++i) {
          BOOST_CHECK_MESSAGE(one[i].bit_equal(many[i]),
                              "output " << i << " differs with " << threads << " threads");
        }
      }
    }
  }
}

}  // namespace
}  // namespace volta
