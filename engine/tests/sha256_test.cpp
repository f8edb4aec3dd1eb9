// SHA-256 against the FIPS 180-4 / NIST test vectors, across block boundaries and updates.
#define BOOST_TEST_MODULE sha256
#include "volta/sha256.h"

#include <boost/test/unit_test.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>

namespace volta {
namespace {

BOOST_AUTO_TEST_CASE(nist_vectors) {
  BOOST_TEST(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  BOOST_TEST(sha256_hex("abc") ==
             "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  BOOST_TEST(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
             "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  BOOST_TEST(sha256_hex(std::string(1000000, 'a')) ==
             "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

BOOST_AUTO_TEST_CASE(pieces_of_any_size_give_the_digest_of_the_whole) {
  std::string text;
  for (int i = 0; i < 300; ++i) text += static_cast<char>('a' + i % 26);
  const std::string whole = sha256_hex(text);
  for (size_t cut : {size_t{1}, size_t{55}, size_t{56}, size_t{63}, size_t{64}, size_t{65},
                     size_t{128}, size_t{299}}) {
    Sha256 h;
    h.update(std::string_view(text).substr(0, cut)).update(std::string_view(text).substr(cut));
    BOOST_TEST(h.hex() == whole, "cut at " << cut);
  }
  // Message lengths around the padding boundary (55, 56 and 64 bytes need one more block).
  BOOST_TEST(sha256_hex(std::string(55, 'x')) != sha256_hex(std::string(56, 'x')));
}

BOOST_AUTO_TEST_CASE(files_hash_their_bytes_and_a_missing_file_is_nullopt) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / "volta-sha256-test.bin";
  {
    std::ofstream out(file, std::ios::binary);
    out << "abc";
  }
  BOOST_TEST(sha256_file(file).value_or("") ==
             "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  std::filesystem::remove(file);
  BOOST_TEST(!sha256_file(file).has_value());
}

}  // namespace
}  // namespace volta
