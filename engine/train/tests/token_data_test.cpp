// The batch order of governance/training-policy.md ("Data"): sequential windows at the documented
// offsets, seeded shuffles that depend on (seed, step, row) alone, windows that wrap, and bad
// data refused with errors that name the file, the byte and the vocab.

#define BOOST_TEST_MODULE token_data_test
#include "volta/train/token_data.h"

#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "volta/error.h"

namespace volta::train {
namespace {

std::vector<uint8_t> bytes_0_to(int n) {
  std::vector<uint8_t> out;
  out.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) out.push_back(static_cast<uint8_t>(i % 256));
  return out;
}

bool error_says(const VoltaError& e, const std::string& text) {
  return std::string(e.what()).find(text) != std::string::npos;
}

BOOST_AUTO_TEST_CASE(sequential_rows_start_where_the_formula_says) {
  const BatchOrder order{.kind = BatchOrder::Kind::Sequential, .stride = 7};
  const int64_t length = 1000;
  const int64_t batch = 4;
  for (int64_t s = 0; s < 50; ++s) {
    for (int64_t b = 0; b < batch; ++b) {
      BOOST_TEST(window_start(order, length, batch, s, b) == ((s * batch + b) * 7) % length);
    }
  }
  // Large steps and strides stay exact (no overflow in the product): a stride of len - 1 is -1
  // modulo len, so the start is len - window.
  const int64_t long_data = (int64_t{1} << 41) + 17;
  const BatchOrder wide{.kind = BatchOrder::Kind::Sequential, .stride = long_data - 1};
  const int64_t step = int64_t{1} << 30;
  const int64_t window = (step * 16 + 5) % long_data;
  BOOST_TEST(window_start(wide, long_data, 16, step, 5) == long_data - window);
}

BOOST_AUTO_TEST_CASE(a_batch_holds_the_window_and_its_next_bytes_wrapping_at_the_end) {
  const std::vector<uint8_t> data = bytes_0_to(10);
  const BatchOrder order{.kind = BatchOrder::Kind::Sequential, .stride = 4};
  const TokenBatch b = make_batch(data, order, 2, 3, 256, 1);  // rows start at 8 and 2
  const std::vector<int64_t> tokens(b.tokens.data_as<int64_t>(), b.tokens.data_as<int64_t>() + 6);
  const std::vector<int64_t> targets(b.targets.data_as<int64_t>(),
                                     b.targets.data_as<int64_t>() + 6);
  BOOST_TEST(tokens == (std::vector<int64_t>{8, 9, 0, 2, 3, 4}), boost::test_tools::per_element());
  BOOST_TEST(targets == (std::vector<int64_t>{9, 0, 1, 3, 4, 5}), boost::test_tools::per_element());
  BOOST_TEST(b.tokens.shape().str() == "[2,3]");
}

BOOST_AUTO_TEST_CASE(shuffled_windows_depend_on_seed_step_and_row_alone) {
  const BatchOrder order{.kind = BatchOrder::Kind::Shuffled, .seed = 42};
  const BatchOrder other{.kind = BatchOrder::Kind::Shuffled, .seed = 43};
  int differ = 0;
  for (int64_t s = 0; s < 20; ++s) {
    for (int64_t b = 0; b < 8; ++b) {
      const int64_t start = window_start(order, 5000, 8, s, b);
      BOOST_TEST((start >= 0 && start < 5000));
      // The same at any other batch size the row fits in: nothing depends on the batch.
      BOOST_TEST(window_start(order, 5000, 16, s, b) == start);
      differ += start != window_start(other, 5000, 8, s, b) ? 1 : 0;
    }
  }
  BOOST_TEST(differ > 150, "another seed moved only " << differ << " of 160 windows");
  const std::vector<uint8_t> data = bytes_0_to(300);
  const TokenBatch a = make_batch(data, order, 8, 16, 256, 5);
  const TokenBatch again = make_batch(data, order, 8, 16, 256, 5);
  BOOST_TEST(a.tokens.bit_equal(again.tokens));
  BOOST_TEST(!a.tokens.bit_equal(make_batch(data, order, 8, 16, 256, 6).tokens));
}

BOOST_AUTO_TEST_CASE(bad_data_and_orders_are_refused_naming_what_is_wrong) {
  const BatchOrder order{};
  try {
    make_batch(bytes_0_to(8), order, 2, 8, 256, 0);
    BOOST_FAIL("8 bytes made a window of 8 tokens and its targets");
  } catch (const VoltaError& e) {
    BOOST_TEST(error_says(e, "holds 8 bytes"));
    BOOST_TEST(error_says(e, "at least 9"));
  }
  try {
    check_token_data(bytes_0_to(200), 16, 128);
    BOOST_FAIL("byte 128 passed a vocab of 128");
  } catch (const VoltaError& e) {
    BOOST_TEST(error_says(e, "byte 128 at offset 128"));
    BOOST_TEST(error_says(e, "vocab is 128"));
  }
  BOOST_CHECK_THROW(make_batch(bytes_0_to(200), order, 4, 150, 128, 0), VoltaError);
  BOOST_CHECK_THROW(window_start(BatchOrder{.stride = 0}, 100, 2, 0, 0), VoltaError);
  BOOST_CHECK_THROW(parse_batch_order("random"), VoltaError);
  BOOST_TEST((parse_batch_order(batch_order_name(BatchOrder::Kind::Shuffled)) ==
              BatchOrder::Kind::Shuffled));

  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "volta_token_data";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "empty.txt").close();
  try {
    read_token_file(dir / "empty.txt");
    BOOST_FAIL("an empty file was read as data");
  } catch (const VoltaError& e) {
    BOOST_TEST(error_says(e, "empty.txt' is empty"));
  }
  BOOST_CHECK_THROW(read_token_file(dir / "missing.txt"), VoltaError);
  std::ofstream(dir / "abc.txt") << "abc";
  BOOST_TEST(read_token_file(dir / "abc.txt") == (std::vector<uint8_t>{'a', 'b', 'c'}),
             boost::test_tools::per_element());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace volta::train
