// The first-divergence finder on hand-built traces: which step it names, how it reads the
// first differing element, and when it calls the difference one of plans instead of bits.
#define BOOST_TEST_MODULE first_divergence
#include "volta/conformance/first_divergence.h"

#include <bit>
#include <boost/test/unit_test.hpp>
#include <cstring>
#include <string>
#include <vector>

namespace volta::conformance {
namespace {

template <class T>
std::vector<std::byte> bytes_of(std::initializer_list<T> values) {
  std::vector<std::byte> out(values.size() * sizeof(T));
  std::memcpy(out.data(), std::data(values), out.size());
  return out;
}

NodeTraceRow row(int step, std::string node, std::string op, std::string hash) {
  NodeTraceRow r;
  r.subject = "model:mlp";
  r.step = step;
  r.node = std::move(node);
  r.op = std::move(op);
  r.kernel = "f32_" + r.op + "_avx2";
  r.determinism = "bit-exact";
  r.dtype = "f32";
  r.shape = "[2]";
  r.hash = std::move(hash);
  r.data = bytes_of<float>({1.0f, 2.0f});
  return r;
}

// Four steps: input projection, bias (from a fusion pass), activation, output.
std::vector<NodeTraceRow> mlp() {
  std::vector<NodeTraceRow> rows = {
      row(0, "proj", "MatMul", "aaaaaaaaaaaaaaa0"), row(1, "bias", "Add", "aaaaaaaaaaaaaaa1"),
      row(2, "act", "Relu", "aaaaaaaaaaaaaaa2"), row(3, "out", "MatMul", "aaaaaaaaaaaaaaa3")};
  rows[1].origin = "fuse-bias";
  return rows;
}

BOOST_AUTO_TEST_CASE(identical_traces_do_not_diverge) {
  const std::vector<NodeTraceRow> a = mlp();
  BOOST_TEST(!first_divergence(a, mlp()).has_value());
  // A different kernel that produced the same bits is no divergence either.
  std::vector<NodeTraceRow> b = mlp();
  b[2].kernel = "f32_Relu_scalar";
  BOOST_TEST(!first_divergence(a, b).has_value());
  const TraceDiff diff = diff_traces(a, b);
  BOOST_TEST(diff.subjects == 1);
  BOOST_TEST(diff.outputs == 4);
  BOOST_TEST(diff.divergences.empty());
  BOOST_TEST(!first_divergence(std::vector<NodeTraceRow>{}, std::vector<NodeTraceRow>{}));
}

BOOST_AUTO_TEST_CASE(the_first_differing_step_is_named_not_the_later_ones) {
  const std::vector<NodeTraceRow> a = mlp();
  std::vector<NodeTraceRow> b = mlp();
  b[2].hash = "bbbbbbbbbbbbbbb2";
  b[2].kernel = "f32_Relu_scalar";
  b[2].determinism = "run-to-run";
  b[2].data = bytes_of<float>({1.0f, 2.5f});
  b[3].hash = "bbbbbbbbbbbbbbb3";  // follows from step 2
  b[3].data = bytes_of<float>({7.0f, 8.0f});
  // The finder does not rely on the order it is given.
  std::vector<NodeTraceRow> shuffled_b = {b[3], b[1], b[2], b[0]};
  const std::optional<Divergence> d = first_divergence(a, shuffled_b);
  BOOST_REQUIRE(d.has_value());
  BOOST_TEST(d->subject == "model:mlp");
  BOOST_TEST(d->plan_difference == "");
  BOOST_TEST(d->a.step == 2);
  BOOST_TEST(d->b.node == "act");
  BOOST_TEST(d->first_element == "element 1 [1]: 2 (0x40000000) vs 2.5 (0x40200000)");
  BOOST_TEST(describe(*d) ==
             "subject model:mlp: first divergence at step 2: node 'act' (Relu)\n"
             "  kernel: run A f32_Relu_avx2 (bit-exact), run B f32_Relu_scalar (run-to-run)\n"
             "  produced by: the frontend that built the graph\n"
             "  output 0: f32 [2]\n"
             "  hash: run A aaaaaaaaaaaaaaa2, run B bbbbbbbbbbbbbbb2\n"
             "  first element: element 1 [1]: 2 (0x40000000) vs 2.5 (0x40200000)\n");
  const TraceDiff diff = diff_traces(a, b);
  BOOST_TEST(diff.outputs == 3);  // steps 0 to 2: the walk stops at the divergence
  BOOST_REQUIRE(diff.divergences.size() == 1u);
  BOOST_TEST(diff.divergences[0].a.step == 2);
}

BOOST_AUTO_TEST_CASE(the_pass_that_produced_the_node_is_named) {
  const std::vector<NodeTraceRow> a = mlp();
  std::vector<NodeTraceRow> b = mlp();
  b[1].hash = "bbbbbbbbbbbbbbb1";
  b[1].data = bytes_of<float>({1.0f, 2.0f});  // same bytes: the hash alone differs
  const std::optional<Divergence> d = first_divergence(a, b);
  BOOST_REQUIRE(d.has_value());
  const std::string text = describe(*d);
  BOOST_TEST(text.find("first divergence at step 1: node 'bias' (Add)\n") != std::string::npos,
             text);
  BOOST_TEST(text.find("  kernel: f32_Add_avx2 (bit-exact) in both runs\n") != std::string::npos,
             text);
  BOOST_TEST(text.find("  produced by: fuse-bias\n") != std::string::npos, text);
  BOOST_TEST(d->first_element == "the traced bytes are identical; only the hashes differ");
}

// One output of `dtype` and `shape` whose bytes differ between the runs.
std::string first_element_of(std::string dtype, std::string shape, std::vector<std::byte> a,
                             std::vector<std::byte> b) {
  NodeTraceRow x = row(0, "n", "Add", "1111111111111111");
  x.dtype = std::move(dtype);
  x.shape = std::move(shape);
  x.data = std::move(a);
  NodeTraceRow y = x;
  y.hash = "2222222222222222";
  y.data = std::move(b);
  const std::optional<Divergence> d =
      first_divergence(std::vector<NodeTraceRow>{x}, std::vector<NodeTraceRow>{y});
  BOOST_REQUIRE(d.has_value());
  return d->first_element;
}

BOOST_AUTO_TEST_CASE(the_first_element_is_decoded_by_dtype_with_its_multi_index) {
  const float next_after_half = std::bit_cast<float>(0x3f000001u);
  BOOST_TEST(first_element_of("f32", "[2,3]", bytes_of<float>({0, 0, 0, 0, 0.5f, 6}),
                              bytes_of<float>({0, 0, 0, 0, next_after_half, 7})) ==
             "element 4 [1,1]: 0.5 (0x3f000000) vs 0.50000006 (0x3f000001)");
  const double next_after_tenth = std::bit_cast<double>(std::bit_cast<uint64_t>(0.1) + 1);
  BOOST_TEST(first_element_of("f64", "[2,1,2]", bytes_of<double>({1, 2, 0.1, 4}),
                              bytes_of<double>({1, 2, next_after_tenth, 4})) ==
             "element 2 [1,0,0]: 0.10000000000000001 (0x3fb999999999999a) vs "
             "0.10000000000000002 (0x3fb999999999999b)");
  BOOST_TEST(first_element_of("i64", "[2,2]", bytes_of<int64_t>({5, 6, 7, -1}),
                              bytes_of<int64_t>({5, 6, 7, 2})) ==
             "element 3 [1,1]: -1 (0xffffffffffffffff) vs 2 (0x0000000000000002)");
  BOOST_TEST(
      first_element_of("i32", "[3]", bytes_of<int32_t>({0, -2, 3}), bytes_of<int32_t>({0, 2, 3})) ==
      "element 1 [1]: -2 (0xfffffffe) vs 2 (0x00000002)");
  BOOST_TEST(first_element_of("bool", "[1,3]", bytes_of<uint8_t>({0, 1, 1}),
                              bytes_of<uint8_t>({0, 1, 0})) ==
             "element 2 [0,2]: true (0x01) vs false (0x00)");
  BOOST_TEST(first_element_of("f32", "[]", bytes_of<float>({1}), bytes_of<float>({-1})) ==
             "element 0 []: 1 (0x3f800000) vs -1 (0xbf800000)");
  // A shape that does not hold the traced elements: the flat index alone.
  BOOST_TEST(first_element_of("f32", "[5]", bytes_of<float>({1, 2}), bytes_of<float>({1, 3})) ==
             "element 1: 2 (0x40000000) vs 3 (0x40400000)");
  BOOST_TEST(first_element_of("f16", "[2]", bytes_of<uint16_t>({0x3c00, 0x3555}),
                              bytes_of<uint16_t>({0x3c00, 0x3556})) ==
             "element 1 [1]: 0.33325 (0x3555) vs 0.3335 (0x3556)");
  BOOST_TEST(
      first_element_of("bf16", "[1]", bytes_of<uint16_t>({0x3f80}), bytes_of<uint16_t>({0xbf80})) ==
      "element 0 [0]: 1 (0x3f80) vs -1 (0xbf80)");
  BOOST_TEST(
      first_element_of("u64", "[1]", bytes_of<uint64_t>({~uint64_t{0}}), bytes_of<uint64_t>({1})) ==
      "element 0 [0]: 18446744073709551615 (0xffffffffffffffff) vs 1 "
      "(0x0000000000000001)");
  BOOST_TEST(first_element_of("i8", "[1]", bytes_of<int8_t>({-1}), bytes_of<int8_t>({1})) ==
             "element 0 [0]: -1 (0xff) vs 1 (0x01)");
  BOOST_TEST(
      first_element_of("f8e4m3", "[2]", bytes_of<uint8_t>({1, 2}), bytes_of<uint8_t>({1, 9})) ==
      "dtype 'f8e4m3' cannot be decoded (supported: "
      "{f32,f64,i64,i32,bool,f16,bf16,i8,u8,i16,u16,u32,u64}); first differing byte at "
      "offset 1");
}

BOOST_AUTO_TEST_CASE(outputs_above_the_cap_are_compared_by_hash_only) {
  std::vector<NodeTraceRow> a = mlp(), b = mlp();
  a[0].shape = b[0].shape = "[1024,1024]";
  a[0].data.reset();
  b[0].data.reset();
  b[0].hash = "bbbbbbbbbbbbbbb0";
  std::optional<Divergence> d = first_divergence(a, b);
  BOOST_REQUIRE(d.has_value());
  BOOST_TEST(d->a.step == 0);
  BOOST_TEST(d->first_element ==
             "outputs are traced by hash only: 4194304 bytes, above the 262144-byte trace cap");
  // One run kept the bytes, the other did not.
  a[0].data = std::vector<std::byte>(4);
  d = first_divergence(a, b);
  BOOST_REQUIRE(d.has_value());
  BOOST_TEST(d->first_element ==
             "run B traced this output by hash only (4194304 bytes, above the 262144-byte trace "
             "cap); run A kept its bytes");
}

BOOST_AUTO_TEST_CASE(a_different_node_at_a_step_is_a_plan_difference) {
  const std::vector<NodeTraceRow> a = mlp();
  std::vector<NodeTraceRow> b = mlp();
  b[2] = row(2, "act", "Sigmoid", "bbbbbbbbbbbbbbb2");
  b[2].origin = "swap-activation";
  b[3].hash = "bbbbbbbbbbbbbbb3";
  const std::optional<Divergence> d = first_divergence(a, b);
  BOOST_REQUIRE(d.has_value());
  BOOST_TEST(d->plan_difference ==
             "plans differ at step 2: node 'act' (Relu) vs node 'act' (Sigmoid)");
  BOOST_TEST(d->first_element == "");
  BOOST_TEST(describe(*d) ==
             "subject model:mlp: plans differ at step 2: node 'act' (Relu) vs node 'act' "
             "(Sigmoid)\n"
             "  the runs executed different plans: compare their plan hashes (plan-stability) "
             "before their outputs\n"
             "  run A: node 'act' (Relu), output 0, kernel f32_Relu_avx2 (bit-exact), produced "
             "by: the frontend that built the graph\n"
             "  run B: node 'act' (Sigmoid), output 0, kernel f32_Sigmoid_avx2 (bit-exact), "
             "produced by: swap-activation\n");
  // A renamed node is a plan difference too, even where the bits agree.
  std::vector<NodeTraceRow> renamed = mlp();
  renamed[0].node = "projection";
  const std::optional<Divergence> r = first_divergence(a, renamed);
  BOOST_REQUIRE(r.has_value());
  BOOST_TEST(r->plan_difference ==
             "plans differ at step 0: node 'proj' (MatMul) vs node 'projection' (MatMul)");
}

BOOST_AUTO_TEST_CASE(runs_that_traced_different_lengths_differ_in_plan) {
  std::vector<NodeTraceRow> a = mlp();
  std::vector<NodeTraceRow> b = mlp();
  a.pop_back();  // A traced steps 0-2, B 0-3
  std::optional<Divergence> d = first_divergence(a, b);
  BOOST_REQUIRE(d.has_value());
  BOOST_TEST(d->plan_difference ==
             "plans differ at step 3: run A traced 3 steps, run B 4; run B's step 3 is node "
             "'out' (MatMul)");
  BOOST_TEST(d->a.node == "");
  BOOST_TEST(d->b.node == "out");
  const std::string text = describe(*d);
  BOOST_TEST(text.find("  run A: no such step or output\n") != std::string::npos, text);
  // Earlier bits that differ come first in schedule order.
  b[1].hash = "bbbbbbbbbbbbbbb1";
  d = first_divergence(a, b);
  BOOST_REQUIRE(d.has_value());
  BOOST_TEST(d->plan_difference == "");
  BOOST_TEST(d->a.step == 1);
  // A step with an extra output in one run.
  std::vector<NodeTraceRow> c = mlp();
  NodeTraceRow second_output = c[1];
  second_output.output = 1;
  c.insert(c.begin() + 2, second_output);
  d = first_divergence(mlp(), c);
  BOOST_REQUIRE(d.has_value());
  BOOST_TEST(d->plan_difference ==
             "plans differ at step 1: node 'bias' (Add) traces output 1 in run B only");
  // A step one run skipped.
  std::vector<NodeTraceRow> skipped = mlp();
  skipped.erase(skipped.begin() + 1);
  d = first_divergence(skipped, mlp());
  BOOST_REQUIRE(d.has_value());
  BOOST_TEST(d->plan_difference ==
             "plans differ at step 1: run B has node 'bias' (Add), run A has no step 1");
  // One run traced nothing of the subject.
  d = first_divergence(std::vector<NodeTraceRow>{}, mlp());
  BOOST_REQUIRE(d.has_value());
  BOOST_TEST(d->plan_difference ==
             "plans differ at step 0: run A traced 0 steps, run B 4; run B's step 0 is node "
             "'proj' (MatMul)");
}

BOOST_AUTO_TEST_CASE(diff_traces_compares_every_shared_subject) {
  auto subject = [](const std::string& name, std::vector<NodeTraceRow> rows) {
    for (NodeTraceRow& r : rows) r.subject = name;
    return rows;
  };
  std::vector<NodeTraceRow> a, b;
  auto append = [](std::vector<NodeTraceRow>& to, const std::vector<NodeTraceRow>& rows) {
    to.insert(to.end(), rows.begin(), rows.end());
  };
  std::vector<NodeTraceRow> cnn_b = mlp();
  cnn_b[0].hash = "bbbbbbbbbbbbbbb0";
  std::vector<NodeTraceRow> relu_b = mlp();
  relu_b[3].hash = "bbbbbbbbbbbbbbb3";
  append(a, subject("model:cnn", mlp()));
  append(a, subject("model:mlp", mlp()));
  append(a, subject("onnx:test_relu", mlp()));
  append(a, subject("onnx:test_only_a", mlp()));
  append(b, subject("onnx:test_relu", relu_b));
  append(b, subject("model:mlp", mlp()));
  append(b, subject("model:cnn", cnn_b));
  append(b, subject("onnx:test_only_b", mlp()));
  const TraceDiff diff = diff_traces(a, b);
  BOOST_TEST(diff.subjects == 3);
  BOOST_TEST(diff.outputs == 1 + 4 + 4);  // cnn stops at step 0, mlp and relu run to the end
  BOOST_REQUIRE(diff.divergences.size() == 2u);
  BOOST_TEST(diff.divergences[0].subject == "model:cnn");
  BOOST_TEST(diff.divergences[0].a.step == 0);
  BOOST_TEST(diff.divergences[1].subject == "onnx:test_relu");
  BOOST_TEST(diff.divergences[1].a.step == 3);
  BOOST_TEST(diff.only_in_a == std::vector<std::string>{"onnx:test_only_a"},
             boost::test_tools::per_element());
  BOOST_TEST(diff.only_in_b == std::vector<std::string>{"onnx:test_only_b"},
             boost::test_tools::per_element());
}

}  // namespace
}  // namespace volta::conformance
