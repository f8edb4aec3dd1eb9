#pragma once
// A thin RAII layer over the SQLite C API: a connection, prepared statements, transactions.
// Every failure becomes a StoreError naming the file and SQLite's own message.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace volta::conformance {

class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement(Statement&& other) noexcept;

  // Binds by 1-based position; returns *this so binds chain.
  Statement& bind(int index, int64_t value);
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view value);
  Statement& bind(int index, std::nullopt_t);
  Statement& bind(int index, const std::optional<double>& value);

  bool step();  // true while a row is available; throws on error
  void run();   // steps to completion
  void reset();

  int64_t column_int(int index) const;
  double column_double(int index) const;
  std::string column_text(int index) const;
  bool column_is_null(int index) const;
  int column_count() const;
  std::string column_name(int index) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

class Database {
 public:
  enum class Mode { ReadWrite, ReadOnly };
  // Opens (ReadWrite creates the file). Throws StoreError: missing file in ReadOnly mode,
  // a file that is not a SQLite database, I/O errors.
  Database(const std::string& path, Mode mode);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  Database(Database&& other) noexcept;

  void exec(std::string_view sql);  // one or more statements, no results
  Statement prepare(std::string_view sql) const;
  int64_t last_insert_id() const;
  const std::string& path() const { return path_; }
  sqlite3* handle() const { return db_; }

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

// BEGIN IMMEDIATE ... COMMIT, rolled back if the scope exits by exception.
class Transaction {
 public:
  explicit Transaction(Database& db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  Database& db_;
  bool done_ = false;
};

}  // namespace volta::conformance
