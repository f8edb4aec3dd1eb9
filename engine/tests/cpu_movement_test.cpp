#define BOOST_TEST_MODULE cpu_movement_test
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "test_util.h"
#include "volta/ir/op_schema.h"

using namespace volta;
using volta::test::run_op;
using Ints = std::vector<int64_t>;

namespace {

// 0, 1, 2, ... (bool: 0, 1, 0, ...), so every element says where it came from.
Tensor iota(DType dtype, const Shape& shape) {
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_int(i, dtype == DType::Bool ? i % 2 : i);
  return t;
}

Tensor run1(OpKind op, const std::vector<Tensor>& inputs, Attributes attrs = {}, int threads = 1) {
  return run_op(op, inputs, std::move(attrs), 1, threads).at(0);
}

void check_bits(const Tensor& got, const Tensor& want) {
  BOOST_REQUIRE_EQUAL(dtype_name(got.dtype()), dtype_name(want.dtype()));
  BOOST_REQUIRE_EQUAL(got.shape().str(), want.shape().str());
  if (!got.bit_equal(want)) volta::test::check_close(got, want, 0.0, 0.0);  // names elements
  BOOST_CHECK(got.bit_equal(want));
}

// Row-major multi-index of flat position `flat` in `dims`.
Ints unravel(int64_t flat, const Ints& dims) {
  Ints index(dims.size());
  for (size_t a = dims.size(); a-- > 0;) {
    index[a] = flat % dims[a];
    flat /= dims[a];
  }
  return index;
}

int64_t ravel(const Ints& index, const Ints& dims) {
  int64_t flat = 0;
  for (size_t a = 0; a < dims.size(); ++a) flat = flat * dims[a] + index[a];
  return flat;
}

// Python's range(from, to, step), for writing slice expectations the way numpy reads them.
Ints range(int64_t from, int64_t to, int64_t step = 1) {
  Ints out;
  for (int64_t i = from; step > 0 ? i < to : i > to; i += step) out.push_back(i);
  return out;
}

// x[picks[0], picks[1], ...] in numpy's outer-indexing sense: output axis a runs over the
// input indices picks[a].
Tensor pick(const Tensor& x, const std::vector<Ints>& picks) {
  Ints out_dims;
  for (const Ints& p : picks) out_dims.push_back(static_cast<int64_t>(p.size()));
  Tensor out(x.dtype(), Shape(out_dims));
  for (int64_t o = 0; o < out.numel(); ++o) {
    const Ints at = unravel(o, out_dims);
    Ints source(at.size());
    for (size_t a = 0; a < at.size(); ++a) source[a] = picks[a][static_cast<size_t>(at[a])];
    out.set_int(o, x.get_int(ravel(source, x.shape().dims())));
  }
  return out;
}

// Transpose by its definition: out[i_0, ..., i_k] = x[j] with j[perm[a]] = i_a.
Tensor transpose_by_formula(const Tensor& x, const Ints& perm) {
  const Ints& in_dims = x.shape().dims();
  Ints out_dims;
  for (int64_t p : perm) out_dims.push_back(in_dims[static_cast<size_t>(p)]);
  Tensor out(x.dtype(), Shape(out_dims));
  for (int64_t o = 0; o < out.numel(); ++o) {
    const Ints at = unravel(o, out_dims);
    Ints source(at.size());
    for (size_t a = 0; a < at.size(); ++a) source[static_cast<size_t>(perm[a])] = at[a];
    out.set_int(o, x.get_int(ravel(source, in_dims)));
  }
  return out;
}

std::string planned_variant(OpKind op, DType dtype, const Shape& shape, Attributes attrs) {
  static const std::unique_ptr<Backend> cpu = make_backend("cpu");
  const Graph g = volta::test::single_op_graph(op, {TypeInfo{dtype, shape}}, std::move(attrs));
  return compile(g, *cpu, DeterminismMode::Strict, {.optimize = false}).steps.at(0).kernel.variant;
}

bool is_kernel_failure(const VoltaError& e) {
  return e.code() == ErrorCode::KernelFailure &&
         std::string(e.what()).find("R-KERNEL-FAILURE") != std::string::npos;
}

}  // namespace

// ---------------------------------------------------------------- reshape family

BOOST_AUTO_TEST_CASE(reshape_copies_a_dim_with_zero_and_infers_minus_one) {
  const Tensor x = iota(DType::F32, {2, 3, 4});
  check_bits(run1(OpKind::Reshape, {x}, {{"shape", Ints{0, -1}}}),
             Tensor::from<float>({2, 12}, std::span<const float>(x.data_as<float>(), 24)));
  const Tensor y = run1(OpKind::Reshape, {x}, {{"shape", Ints{-1, 0, 2}}});
  BOOST_CHECK_EQUAL(y.shape().str(), "[4,3,2]");
  BOOST_CHECK_EQUAL(std::memcmp(y.data(), x.data(), x.nbytes()), 0);
}

BOOST_AUTO_TEST_CASE(reshape_handles_scalars_and_empty_tensors) {
  const Tensor scalar = Tensor::from<double>({}, {2.5});
  check_bits(run1(OpKind::Reshape, {scalar}, {{"shape", Ints{1, 1}}}),
             Tensor::from<double>({1, 1}, {2.5}));
  check_bits(run1(OpKind::Reshape, {Tensor::from<double>({1}, {2.5})}, {{"shape", Ints{}}}),
             scalar);
  const Tensor empty(DType::I32, {0, 3});
  check_bits(run1(OpKind::Reshape, {empty}, {{"shape", Ints{3, -1}}}), Tensor(DType::I32, {3, 0}));
  check_bits(run1(OpKind::Reshape, {empty}, {{"shape", Ints{3, 0}}, {"allowzero", int64_t{1}}}),
             Tensor(DType::I32, {3, 0}));
}

BOOST_AUTO_TEST_CASE(squeeze_unsqueeze_flatten_identity_keep_the_bytes) {
  const Tensor x = Tensor::from<int64_t>({1, 3, 1, 2}, {1, 2, 3, 4, 5, 6});
  check_bits(run1(OpKind::Squeeze, {x}, {{"axes", Ints{-2}}}),
             Tensor::from<int64_t>({1, 3, 2}, {1, 2, 3, 4, 5, 6}));
  check_bits(run1(OpKind::Squeeze, {x}), Tensor::from<int64_t>({3, 2}, {1, 2, 3, 4, 5, 6}));

  const Tensor y = Tensor::from<double>({2, 3}, {1, 2, 3, 4, 5, 6});
  check_bits(run1(OpKind::Unsqueeze, {y}, {{"axes", Ints{-1, 0}}}),
             Tensor::from<double>({1, 2, 3, 1}, {1, 2, 3, 4, 5, 6}));
  check_bits(run1(OpKind::Unsqueeze, {Tensor::from<float>({}, {7.0f})}, {{"axes", Ints{0}}}),
             Tensor::from<float>({1}, {7.0f}));

  const Tensor z = iota(DType::I32, {2, 3, 4});
  BOOST_CHECK_EQUAL(run1(OpKind::Flatten, {z}, {{"axis", int64_t{-1}}}).shape().str(), "[6,4]");
  check_bits(run1(OpKind::Flatten, {z}, {{"axis", int64_t{-1}}}),
             Tensor::from<int32_t>({6, 4}, std::span<const int32_t>(z.data_as<int32_t>(), 24)));
  BOOST_CHECK_EQUAL(run1(OpKind::Flatten, {z}, {{"axis", int64_t{0}}}).shape().str(), "[1,24]");

  const Tensor flags = Tensor::from<bool>({3}, {1, 0, 1});
  check_bits(run1(OpKind::Identity, {flags}), flags);
  check_bits(run1(OpKind::Identity, {Tensor::from<float>({}, {-0.0f})}),
             Tensor::from<float>({}, {-0.0f}));
}

// x -> Neg -> Reshape -> Relu: the reshape output takes Neg's buffer (Neg's value dies at the
// reshape), so the reshape kernel must leave the shared bytes alone.
BOOST_AUTO_TEST_CASE(reshape_shares_its_input_buffer_in_an_optimized_plan) {
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, {2, 3});
  const ValueId neg = g.add(OpKind::Neg, {x});
  const ValueId reshaped = g.add(OpKind::Reshape, {neg}, {{"shape", Ints{3, 2}}});
  g.set_outputs({g.add(OpKind::Relu, {reshaped})});
  const std::unique_ptr<Backend> cpu = make_backend("cpu");
  const ExecutionPlan plan = compile(g, *cpu, DeterminismMode::Strict, {.optimize = true});

  const Node* reshape = nullptr;
  for (const Node& n : plan.graph.nodes()) {
    if (n.op == OpKind::Reshape) reshape = &n;
  }
  BOOST_REQUIRE(reshape != nullptr);
  const auto& alloc = plan.memory.allocations.at(static_cast<size_t>(reshape->outputs[0].index));
  BOOST_REQUIRE(alloc.has_value());
  BOOST_CHECK(alloc->shares_with == reshape->inputs[0]);

  const std::unique_ptr<ExecutionContext> ctx_context = cpu->make_context({.threads = 2});
  ExecutionContext& ctx = *ctx_context;
  const Tensor in = Tensor::from<float>({2, 3}, {1, -2, 3, -4, 5, -6});
  const std::vector<Tensor> out = execute(plan, *cpu, ctx, std::span<const Tensor>(&in, 1));
  check_bits(out.at(0), Tensor::from<float>({3, 2}, {0, 2, 0, 4, 0, 6}));
}

// The same sharing between two movement ops: Transpose's output dies at the Squeeze that
// takes its buffer, and the Slice after it reads the bytes the Transpose wrote.
BOOST_AUTO_TEST_CASE(squeeze_between_movement_ops_shares_the_buffer) {
  Graph g;
  const ValueId x = g.add_input("x", DType::I32, {3, 1, 2});
  const ValueId t = g.add(OpKind::Transpose, {x}, {{"perm", Ints{1, 2, 0}}});
  const ValueId squeezed = g.add(OpKind::Squeeze, {t}, {{"axes", Ints{0}}});
  g.set_outputs(
      {g.add(OpKind::Slice, {squeezed},
             {{"starts", Ints{-1}}, {"ends", Ints{0}}, {"axes", Ints{1}}, {"steps", Ints{-1}}})});
  const std::unique_ptr<Backend> cpu = make_backend("cpu");
  const ExecutionPlan plan = compile(g, *cpu, DeterminismMode::Strict, {.optimize = true});
  const Node& squeeze = plan.graph.node(1);
  BOOST_REQUIRE(squeeze.op == OpKind::Squeeze);
  const auto& alloc = plan.memory.allocations.at(static_cast<size_t>(squeeze.outputs[0].index));
  BOOST_REQUIRE(alloc.has_value());
  BOOST_CHECK(alloc->shares_with == squeeze.inputs[0]);

  const std::unique_ptr<ExecutionContext> ctx_context = cpu->make_context({.threads = 1});
  ExecutionContext& ctx = *ctx_context;
  const Tensor in = Tensor::from<int32_t>({3, 1, 2}, {1, 2, 3, 4, 5, 6});
  const std::vector<Tensor> out = execute(plan, *cpu, ctx, std::span<const Tensor>(&in, 1));
  // Transposed and squeezed: [[1, 3, 5], [2, 4, 6]]; then columns 2 and 1.
  check_bits(out.at(0), Tensor::from<int32_t>({2, 2}, {5, 3, 6, 4}));
}

// ---------------------------------------------------------------- transpose

BOOST_AUTO_TEST_CASE(transpose_small_cases_by_hand) {
  check_bits(run1(OpKind::Transpose, {Tensor::from<double>({2, 3}, {1, 2, 3, 4, 5, 6})}),
             Tensor::from<double>({3, 2}, {1, 4, 2, 5, 3, 6}));
  // Default perm reverses the axes: out[k, j, i] = x[i, j, k] with x[i, j, k] = 6i + 2j + k.
  check_bits(run1(OpKind::Transpose, {iota(DType::I32, {2, 3, 2})}),
             Tensor::from<int32_t>({2, 3, 2}, {0, 6, 2, 8, 4, 10, 1, 7, 3, 9, 5, 11}));
  check_bits(run1(OpKind::Transpose, {iota(DType::I64, {2, 1, 3})}, {{"perm", Ints{-1, 0, 1}}}),
             Tensor::from<int64_t>({3, 2, 1}, {0, 3, 1, 4, 2, 5}));
  check_bits(run1(OpKind::Transpose, {Tensor::from<float>({}, {4.0f})}),
             Tensor::from<float>({}, {4.0f}));
  check_bits(run1(OpKind::Transpose, {Tensor(DType::F32, {0, 3})}), Tensor(DType::F32, {3, 0}));
}

BOOST_AUTO_TEST_CASE(transpose_large_3d_matches_the_formula_for_1_and_4_threads) {
  // Sizes off the 32-element tile and the copy chunk, so partial tiles and chunks occur.
  for (DType dtype : {DType::F32, DType::F64, DType::Bool}) {
    const Tensor x = iota(dtype, {37, 70, 65});
    for (const Ints& perm : {Ints{0, 1, 2}, Ints{0, 2, 1}, Ints{1, 0, 2}, Ints{1, 2, 0},
                             Ints{2, 0, 1}, Ints{2, 1, 0}}) {
      BOOST_TEST_CONTEXT(dtype_name(dtype) << " perm " << Shape(perm).str()) {
        const Tensor one = run1(OpKind::Transpose, {x}, {{"perm", perm}}, 1);
        const Tensor four = run1(OpKind::Transpose, {x}, {{"perm", perm}}, 4);
        check_bits(one, transpose_by_formula(x, perm));
        BOOST_CHECK(one.bit_equal(four));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(movement_kernels_name_the_path_they_take) {
  BOOST_CHECK_EQUAL(
      planned_variant(OpKind::Transpose, DType::F32, {4, 5, 6}, {{"perm", Ints{0, 2, 1}}}),
      "x32_transpose_tile32");
  BOOST_CHECK_EQUAL(
      planned_variant(OpKind::Transpose, DType::I64, {4, 5, 6}, {{"perm", Ints{1, 0, 2}}}),
      "x64_transpose_memcpy_rows");
  BOOST_CHECK_EQUAL(planned_variant(OpKind::Slice, DType::F64, {10},
                                    {{"starts", Ints{0}}, {"ends", Ints{10}}, {"steps", Ints{2}}}),
                    "x64_slice_strided_rows");
  BOOST_CHECK_EQUAL(planned_variant(OpKind::Expand, DType::Bool, {3, 1}, {{"shape", Ints{3, 4}}}),
                    "x8_expand_fill_rows");
  BOOST_CHECK_EQUAL(planned_variant(OpKind::Reshape, DType::F32, {4}, {{"shape", Ints{2, 2}}}),
                    "reshape_alias_or_memcpy");
}

BOOST_AUTO_TEST_CASE(nan_payloads_pass_through_unchanged) {
  uint32_t payload_bits = 0x7fc01234u;
  float payload;
  std::memcpy(&payload, &payload_bits, sizeof payload);
  const Tensor x = Tensor::from<float>({2, 2}, {payload, 1.0f, -payload, 2.0f});
  check_bits(run1(OpKind::Transpose, {x}),
             Tensor::from<float>({2, 2}, {payload, -payload, 1.0f, 2.0f}));
  check_bits(run1(OpKind::Gather, {x, Tensor::from<int64_t>({1}, {1})}, {{"axis", int64_t{1}}}),
             Tensor::from<float>({2, 1}, {1.0f, 2.0f}));
  check_bits(run1(OpKind::Gather, {x, Tensor::from<int64_t>({1}, {0})}, {{"axis", int64_t{1}}}),
             Tensor::from<float>({2, 1}, {payload, -payload}));
}

// ---------------------------------------------------------------- concat / split

BOOST_AUTO_TEST_CASE(concat_joins_along_an_axis_skipping_empty_inputs) {
  check_bits(run1(OpKind::Concat,
                  {Tensor::from<int64_t>({2, 1}, {1, 2}), Tensor(DType::I64, {2, 0}),
                   Tensor::from<int64_t>({2, 3}, {3, 4, 5, 6, 7, 8})},
                  {{"axis", int64_t{-1}}}),
             Tensor::from<int64_t>({2, 4}, {1, 3, 4, 5, 2, 6, 7, 8}));
  check_bits(run1(OpKind::Concat,
                  {Tensor::from<bool>({1, 2}, {1, 0}), Tensor::from<bool>({2, 2}, {0, 1, 1, 1})},
                  {{"axis", int64_t{0}}}),
             Tensor::from<bool>({3, 2}, {1, 0, 0, 1, 1, 1}));
  check_bits(run1(OpKind::Concat, {Tensor(DType::F32, {0, 2}), Tensor(DType::F32, {0, 3})},
                  {{"axis", int64_t{1}}}),
             Tensor(DType::F32, {0, 5}));
  check_bits(run1(OpKind::Concat, {Tensor::from<double>({1}, {1.5})}, {{"axis", int64_t{0}}}),
             Tensor::from<double>({1}, {1.5}));
}

BOOST_AUTO_TEST_CASE(concat_of_long_rows_matches_the_formula_for_1_and_4_threads) {
  // Rows of 40001 elements cross the fixed copy chunks in the middle of an input's segment.
  const Tensor a = iota(DType::F32, {3, 40000});
  Tensor b(DType::F32, {3, 1});
  for (int64_t i = 0; i < 3; ++i) b.set_double(i, -1.0 - static_cast<double>(i));
  const Tensor one = run1(OpKind::Concat, {a, b}, {{"axis", int64_t{1}}}, 1);
  const Tensor four = run1(OpKind::Concat, {a, b}, {{"axis", int64_t{1}}}, 4);
  Tensor want(DType::F32, {3, 40001});
  for (int64_t r = 0; r < 3; ++r) {
    for (int64_t c = 0; c < 40000; ++c)
      want.set_double(r * 40001 + c, static_cast<double>(r * 40000 + c));
    want.set_double(r * 40001 + 40000, -1.0 - static_cast<double>(r));
  }
  check_bits(one, want);
  BOOST_CHECK(one.bit_equal(four));
}

BOOST_AUTO_TEST_CASE(split_evenly_and_by_sizes) {
  const std::vector<Tensor> even =
      run_op(OpKind::Split, {Tensor::from<float>({6}, {1, 2, 3, 4, 5, 6})}, {}, 3);
  BOOST_REQUIRE_EQUAL(even.size(), 3u);
  check_bits(even[0], Tensor::from<float>({2}, {1, 2}));
  check_bits(even[1], Tensor::from<float>({2}, {3, 4}));
  check_bits(even[2], Tensor::from<float>({2}, {5, 6}));

  const std::vector<Tensor> parts =
      run_op(OpKind::Split, {Tensor::from<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6})},
             {{"axis", int64_t{-1}}, {"split", Ints{1, 0, 2}}}, 3);
  BOOST_REQUIRE_EQUAL(parts.size(), 3u);
  check_bits(parts[0], Tensor::from<int32_t>({2, 1}, {1, 4}));
  check_bits(parts[1], Tensor(DType::I32, {2, 0}));
  check_bits(parts[2], Tensor::from<int32_t>({2, 2}, {2, 3, 5, 6}));

  const std::vector<Tensor> rows =
      run_op(OpKind::Split, {iota(DType::F64, {3, 2})}, {{"split", Ints{2, 1}}}, 2);
  check_bits(rows.at(0), Tensor::from<double>({2, 2}, {0, 1, 2, 3}));
  check_bits(rows.at(1), Tensor::from<double>({1, 2}, {4, 5}));
}

// ---------------------------------------------------------------- slice

// The ONNX Slice backend tests, on x = arange(1000).reshape(20, 10, 5).
BOOST_AUTO_TEST_CASE(slice_follows_the_onnx_examples) {
  const Tensor x = iota(DType::F32, {20, 10, 5});
  const Ints all0 = range(0, 20), all1 = range(0, 10), all2 = range(0, 5);
  auto slice = [&](Attributes attrs) { return run1(OpKind::Slice, {x}, std::move(attrs)); };

  check_bits(slice({{"starts", Ints{0, 0}},
                    {"ends", Ints{3, 10}},
                    {"axes", Ints{0, 1}},
                    {"steps", Ints{1, 1}}}),
             pick(x, {range(0, 3), all1, all2}));
  // x[20:0:-1, 10:0:-3, 4:1:-2]
  check_bits(slice({{"starts", Ints{20, 10, 4}},
                    {"ends", Ints{0, 0, 1}},
                    {"axes", Ints{0, 1, 2}},
                    {"steps", Ints{-1, -3, -2}}}),
             pick(x, {range(19, 0, -1), Ints{9, 6, 3}, Ints{4, 2}}));
  check_bits(slice({{"starts", Ints{1}}, {"ends", Ints{1000}}, {"axes", Ints{1}}}),
             pick(x, {all0, range(1, 10), all2}));
  check_bits(slice({{"starts", Ints{1000}}, {"ends", Ints{1000}}, {"axes", Ints{1}}}),
             Tensor(DType::F32, {20, 0, 5}));
  check_bits(slice({{"starts", Ints{0}}, {"ends", Ints{-1}}, {"axes", Ints{1}}}),
             pick(x, {all0, range(0, 9), all2}));
  check_bits(
      slice({{"starts", Ints{0, 0, 3}}, {"ends", Ints{20, 10, 4}}, {"axes", Ints{0, -2, -1}}}),
      pick(x, {all0, all1, Ints{3}}));
  check_bits(slice({{"starts", Ints{1}},
                    {"ends", Ints{std::numeric_limits<int64_t>::max()}},
                    {"axes", Ints{-1}}}),
             pick(x, {all0, all1, range(1, 5)}));
}

BOOST_AUTO_TEST_CASE(slice_with_negative_steps_clamps_and_reverses) {
  const Tensor x = iota(DType::I64, {4, 6});
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  auto slice = [&](Attributes attrs) { return run1(OpKind::Slice, {x}, std::move(attrs)); };
  // x[::-1, ::-1] spelled with the extreme bounds the ONNX exporter writes.
  check_bits(
      slice({{"starts", Ints{-1, kMax}}, {"ends", Ints{kMin, kMin}}, {"steps", Ints{-1, -1}}}),
      pick(x, {Ints{3, 2, 1, 0}, Ints{5, 4, 3, 2, 1, 0}}));
  // x[:, 100:-100:-2]: the start clamps to the last element, the end to before the first.
  check_bits(
      slice({{"starts", Ints{100}}, {"ends", Ints{-100}}, {"axes", Ints{1}}, {"steps", Ints{-2}}}),
      pick(x, {range(0, 4), Ints{5, 3, 1}}));
  // x[1:3, 4:0:-3]
  check_bits(slice({{"starts", Ints{1, 4}}, {"ends", Ints{3, 0}}, {"steps", Ints{1, -3}}}),
             pick(x, {Ints{1, 2}, Ints{4, 1}}));
  // Empty when a negative step starts before its end.
  check_bits(
      slice({{"starts", Ints{0}}, {"ends", Ints{3}}, {"axes", Ints{0}}, {"steps", Ints{-1}}}),
      Tensor(DType::I64, {0, 6}));
}

BOOST_AUTO_TEST_CASE(slice_large_strided_matches_for_1_and_4_threads) {
  const Tensor x = iota(DType::F64, {300, 400});
  const Attributes attrs{{"starts", Ints{-1, 3}}, {"ends", Ints{0, 400}}, {"steps", Ints{-2, 3}}};
  const Tensor one = run1(OpKind::Slice, {x}, attrs, 1);
  check_bits(one, pick(x, {range(299, 0, -2), range(3, 400, 3)}));
  BOOST_CHECK(one.bit_equal(run1(OpKind::Slice, {x}, attrs, 4)));
}

// ---------------------------------------------------------------- gather

BOOST_AUTO_TEST_CASE(gather_follows_the_onnx_examples) {
  const Tensor data = Tensor::from<float>({3, 2}, {1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f});
  check_bits(run1(OpKind::Gather, {data, Tensor::from<int64_t>({2, 2}, {0, 1, 1, 2})}),
             Tensor::from<float>({2, 2, 2}, {1.0f, 1.2f, 2.3f, 3.4f, 2.3f, 3.4f, 4.5f, 5.7f}));
  const Tensor square =
      Tensor::from<float>({3, 3}, {1.0f, 1.2f, 1.9f, 2.3f, 3.4f, 3.9f, 4.5f, 5.7f, 5.9f});
  check_bits(
      run1(OpKind::Gather, {square, Tensor::from<int32_t>({1, 2}, {0, 2})}, {{"axis", int64_t{1}}}),
      Tensor::from<float>({3, 1, 2}, {1.0f, 1.9f, 2.3f, 3.9f, 4.5f, 5.9f}));
}

BOOST_AUTO_TEST_CASE(gather_wraps_negative_indices_once) {
  check_bits(run1(OpKind::Gather, {Tensor::from<int64_t>({4}, {10, 20, 30, 40}),
                                   Tensor::from<int32_t>({3}, {-1, -4, 2})}),
             Tensor::from<int64_t>({3}, {40, 10, 30}));
  check_bits(
      run1(OpKind::Gather,
           {Tensor::from<double>({2, 3}, {1, 2, 3, 4, 5, 6}), Tensor::from<int64_t>({2}, {-1, 0})},
           {{"axis", int64_t{-1}}}),
      Tensor::from<double>({2, 2}, {3, 1, 6, 4}));
  // A rank-0 index drops the axis.
  check_bits(run1(OpKind::Gather, {Tensor::from<bool>({3, 2}, {0, 0, 0, 1, 1, 0}),
                                   Tensor::from<int64_t>({}, {-1})}),
             Tensor::from<bool>({2}, {1, 0}));
  check_bits(run1(OpKind::Gather, {iota(DType::F32, {3, 2}), Tensor(DType::I64, {0})}),
             Tensor(DType::F32, {0, 2}));
}

BOOST_AUTO_TEST_CASE(gather_rejects_an_index_out_of_range_naming_it) {
  const Tensor data = iota(DType::F32, {5, 2});
  BOOST_CHECK_EXCEPTION(
      run1(OpKind::Gather, {data, Tensor::from<int64_t>({2, 2}, {0, 4, 5, 1})}), VoltaError,
      [](const VoltaError& e) {
        BOOST_TEST_MESSAGE(e.what());
        return is_kernel_failure(e) &&
               e.message().find("index 5 at indices position [1,0]") != std::string::npos &&
               e.message().find("axis 0 of size 5 (valid: [-5, 4])") != std::string::npos;
      });
  BOOST_CHECK_EXCEPTION(
      run1(OpKind::Gather, {data, Tensor::from<int32_t>({3}, {-5, -6, 9})}, {{"axis", int64_t{0}}}),
      VoltaError, [](const VoltaError& e) {
        return is_kernel_failure(e) &&
               e.message().find("index -6 at indices position [1]") != std::string::npos;
      });
  BOOST_CHECK_EXCEPTION(
      run1(OpKind::Gather, {data, Tensor::from<int64_t>({1}, {2})}, {{"axis", int64_t{1}}}),
      VoltaError, [](const VoltaError& e) {
        return is_kernel_failure(e) &&
               e.message().find("index 2 at indices position [0]") != std::string::npos &&
               e.message().find("(valid: [-2, 1])") != std::string::npos;
      });
}

BOOST_AUTO_TEST_CASE(gather_large_matches_for_1_and_4_threads) {
  const Tensor table = iota(DType::F32, {1000, 64});
  Tensor indices(DType::I64, {5000});
  Ints rows;
  for (int64_t i = 0; i < 5000; ++i) {
    const int64_t index = i * 7919 % 2000 - 1000;  // covers [-1000, 999]
    indices.set_int(i, index);
    rows.push_back(index < 0 ? index + 1000 : index);
  }
  const Tensor one = run1(OpKind::Gather, {table, indices}, {}, 1);
  check_bits(one, pick(table, {rows, range(0, 64)}));
  BOOST_CHECK(one.bit_equal(run1(OpKind::Gather, {table, indices}, {}, 4)));
}

// ---------------------------------------------------------------- expand / constant

BOOST_AUTO_TEST_CASE(expand_follows_the_onnx_examples) {
  const Tensor column = Tensor::from<float>({3, 1}, {1, 2, 3});
  Tensor changed(DType::F32, {2, 3, 6});
  for (int64_t i = 0; i < changed.numel(); ++i)
    changed.set_double(i, static_cast<double>(i / 6 % 3 + 1));
  check_bits(run1(OpKind::Expand, {column}, {{"shape", Ints{2, 1, 6}}}), changed);
  check_bits(run1(OpKind::Expand, {column}, {{"shape", Ints{3, 4}}}),
             Tensor::from<float>({3, 4}, {1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}));
}

BOOST_AUTO_TEST_CASE(expand_scalars_rows_and_empty_shapes) {
  check_bits(run1(OpKind::Expand, {Tensor::from<int64_t>({}, {7})}, {{"shape", Ints{2, 2}}}),
             Tensor::from<int64_t>({2, 2}, {7, 7, 7, 7}));
  check_bits(run1(OpKind::Expand, {Tensor::from<bool>({3}, {1, 0, 1})}, {{"shape", Ints{2, 1}}}),
             Tensor::from<bool>({2, 3}, {1, 0, 1, 1, 0, 1}));
  check_bits(
      run1(OpKind::Expand, {Tensor::from<int32_t>({1, 3}, {1, 2, 3})}, {{"shape", Ints{0, 3}}}),
      Tensor(DType::I32, {0, 3}));
  check_bits(run1(OpKind::Expand, {Tensor::from<double>({2}, {1, 2})}, {{"shape", Ints{}}}),
             Tensor::from<double>({2}, {1, 2}));
}

BOOST_AUTO_TEST_CASE(expand_large_matches_for_1_and_4_threads) {
  // [1, 300, 1, 7] -> [50, 300, 20, 7]: a broadcast axis between two kept ones.
  const Tensor x = iota(DType::I32, {1, 300, 1, 7});
  const Attributes attrs{{"shape", Ints{50, 1, 20, 7}}};
  const Tensor one = run1(OpKind::Expand, {x}, attrs, 1);
  check_bits(one, pick(x, {Ints(50, 0), range(0, 300), Ints(20, 0), range(0, 7)}));
  BOOST_CHECK(one.bit_equal(run1(OpKind::Expand, {x}, attrs, 4)));
}

BOOST_AUTO_TEST_CASE(constant_copies_its_value_attribute) {
  const Tensor value = Tensor::from<double>({2, 2}, {1.5, -2.0, 0.25, 8.0});
  check_bits(run1(OpKind::Constant, {}, {{"value", value}}), value);
  check_bits(run1(OpKind::Constant, {}, {{"value", Tensor::from<bool>({}, {1})}}),
             Tensor::from<bool>({}, {1}));
  check_bits(run1(OpKind::Constant, {}, {{"value", Tensor(DType::I32, {0})}}),
             Tensor(DType::I32, {0}));
}

// ---------------------------------------------------------------- every dtype

BOOST_AUTO_TEST_CASE(every_dtype_moves_through_every_op) {
  for (DType dtype : {DType::F32, DType::F64, DType::I64, DType::I32, DType::Bool}) {
    BOOST_TEST_CONTEXT(dtype_name(dtype)) {
      const Tensor x = iota(dtype, {2, 3});
      check_bits(run1(OpKind::Transpose, {x}), transpose_by_formula(x, {1, 0}));
      check_bits(
          run1(OpKind::Slice, {x},
               {{"starts", Ints{2}}, {"ends", Ints{0}}, {"axes", Ints{1}}, {"steps", Ints{-1}}}),
          pick(x, {Ints{0, 1}, Ints{2, 1}}));
      check_bits(run1(OpKind::Gather, {x, Tensor::from<int64_t>({3}, {1, -2, 1})}),
                 pick(x, {Ints{1, 0, 1}, Ints{0, 1, 2}}));
      Tensor stacked(dtype, {2, 2, 3});  // out[i, j, k] = x[j, k]
      for (int64_t i = 0; i < stacked.numel(); ++i) stacked.set_int(i, x.get_int(i % 6));
      check_bits(run1(OpKind::Expand, {x}, {{"shape", Ints{2, 1, 1}}}), stacked);
      check_bits(run1(OpKind::Concat, {x, x}, {{"axis", int64_t{0}}}),
                 pick(x, {Ints{0, 1, 0, 1}, Ints{0, 1, 2}}));
      const std::vector<Tensor> halves = run_op(OpKind::Split, {x}, {{"axis", int64_t{1}}}, 3);
      check_bits(halves.at(2), pick(x, {Ints{0, 1}, Ints{2}}));
      check_bits(run1(OpKind::Unsqueeze, {x}, {{"axes", Ints{1}}}),
                 run1(OpKind::Reshape, {x}, {{"shape", Ints{2, 1, 3}}}));
      check_bits(run1(OpKind::Constant, {}, {{"value", x}}), x);
    }
  }
}
