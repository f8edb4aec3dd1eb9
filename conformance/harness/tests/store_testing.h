#pragma once
// What the results store's tests share: a temporary directory for their database files, a
// count query, runs in files of old schema versions, and checks of a StoreError's message.

#include <stdlib.h>

#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

#include "volta/conformance/sqlite.h"

namespace volta::conformance::testing {

// A fresh directory under the system temp dir, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "volta-store-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string file(std::string_view name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// Inserts complete run `id` of `commit` with the run columns of schema version 1, which every
// older file has: for tests of files built with a prefix of the migrations.
inline void insert_v1_run(Database& db, int64_t id, std::string_view commit,
                          std::string_view suites) {
  Statement s = db.prepare(
      "INSERT INTO run (id, commit_sha, dirty, build_type, compiler, cpu_model, threads, backend, "
      "machine, suites, command, started_at, ended_at, status, host, pid) VALUES (?, ?, 0, "
      "'Release', 'g++', 'cpu', 2, 'cpu', 'm', ?, 'x', 't0', 't1', 'complete', 'h', 1)");
  s.bind(1, id).bind(2, commit).bind(3, suites).run();
}

// The integer the first row of `sql` starts with; `bound`, when >= 0, binds its parameter.
inline int64_t count(const Database& db, std::string_view sql, int64_t bound = -1) {
  Statement s = db.prepare(sql);
  if (bound >= 0) s.bind(1, bound);
  s.step();
  return s.column_int(0);
}

// Runs `body`, which must throw StoreError with exactly `message`.
template <class Body>
void expect_store_error(Body&& body, const std::string& message) {
  try {
    body();
    BOOST_ERROR("expected StoreError \"" << message << "\", nothing was thrown");
  } catch (const StoreError& e) {
    BOOST_TEST(std::string(e.what()) == message);
  }
}

// Runs `body`, which must throw StoreError whose message contains each of `fragments`.
template <class Body>
void expect_store_error_containing(Body&& body, std::initializer_list<std::string> fragments) {
  try {
    body();
    BOOST_ERROR("expected StoreError, nothing was thrown");
  } catch (const StoreError& e) {
    BOOST_TEST_MESSAGE(e.what());
    for (const std::string& fragment : fragments) {
      BOOST_CHECK_MESSAGE(std::string(e.what()).find(fragment) != std::string::npos,
                          "message lacks \"" << fragment << "\":\n"
                                             << e.what());
    }
  }
}

}  // namespace volta::conformance::testing
