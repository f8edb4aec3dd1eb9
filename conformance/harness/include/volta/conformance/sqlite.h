#pragma once
// A thin RAII layer over the SQLite C API: a connection, prepared statements, transactions.
// Every failure becomes a StoreError naming the file and SQLite's own message.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace volta::conformance {

class StoreError : public std::runtime_error {
 public:
  // `cause`: SQLite's own message when SQLite reported the failure, so that a caller adding
  // context can quote it without repeating the rest of `message`.
  explicit StoreError(const std::string& message, std::string cause = {})
      : std::runtime_error(message), cause_(std::move(cause)) {}
  const std::string& cause() const { return cause_; }

 private:
  std::string cause_;
};

class Database;

// One prepared SQL statement; made by Database::prepare.
class Statement {
 public:
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&&) = delete;

  // Binds by 1-based position; returns *this so binds chain. A NaN is refused: SQLite would
  // store it as NULL, which reads back as "no value", not as NaN.
  Statement& bind(int index, int64_t value);
  Statement& bind(int index, int value) { return bind(index, int64_t{value}); }
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view value);
  Statement& bind(int index, std::nullopt_t);
  Statement& bind(int index, const std::optional<double>& value);
  // A BLOB; an empty span stays an empty BLOB, never NULL.
  Statement& bind(int index, std::span<const std::byte> value);
  // The 1-based position of a named parameter (":commit"), or 0 when the SQL does not name it.
  int parameter_index(std::string_view name) const;
  // True when running the statement cannot write the database (sqlite3_stmt_readonly).
  bool read_only() const;

  bool step();  // true while a row is available; throws on error
  void run();   // steps to completion
  void reset();

  int64_t column_int(int index) const;
  double column_double(int index) const;
  std::string column_text(int index) const;
  std::vector<std::byte> column_blob(int index) const;
  bool column_is_null(int index) const;
  int column_count() const;
  std::string column_name(int index) const;

 private:
  friend class Database;
  // `sql` must hold exactly one statement: a second one would otherwise be silently ignored.
  Statement(sqlite3* db, std::string path, std::string_view sql);
  [[noreturn]] void fail(std::string_view what) const;

  sqlite3* db_;
  std::string path_;  // for messages
  sqlite3_stmt* stmt_ = nullptr;
};

class Database {
 public:
  enum class Mode { ReadWrite, ReadOnly };
  // Opens (ReadWrite creates the file) and defines the SQL functions the gates use:
  // volta_param(params, key), the value of "key=value" in a case's params or NULL, and
  // volta_regex_match(pattern, text), whether an ECMAScript regex matches the whole text.
  // Throws StoreError: a missing file in ReadOnly mode, a
  // file the OS lets us read but not write in ReadWrite mode, I/O errors. A file that is not
  // a SQLite database opens; the first read then fails.
  Database(const std::string& path, Mode mode);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  Database(Database&& other) noexcept;
  Database& operator=(Database&&) = delete;

  void exec(std::string_view sql);  // one or more statements, no results
  Statement prepare(std::string_view sql) const;
  int64_t last_insert_id() const;
  int64_t changes() const;      // rows changed by the latest INSERT, UPDATE or DELETE
  bool in_transaction() const;  // inside BEGIN ... COMMIT (not autocommit)
  const std::string& path() const { return path_; }
  sqlite3* handle() const { return db_; }

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

// The SQLite URI naming the file at `path` (percent-encoded, so any file name works), opened
// read-only when `read_only`: for ATTACH, which takes a URI and not open flags.
std::string sqlite_file_uri(std::string_view path, bool read_only);

// BEGIN IMMEDIATE ... COMMIT, rolled back if the scope exits by exception. IMMEDIATE takes
// the write lock up front, so two writers queue at BEGIN instead of one failing at COMMIT.
// Inside another transaction it is a SAVEPOINT of it: batches that are one transaction on
// their own (ResultStore::record) join a caller's transaction, and nothing is durable until
// the outermost commits.
class Transaction {
 public:
  explicit Transaction(Database& db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  Database& db_;
  bool nested_ = false;
  bool done_ = false;
};

}  // namespace volta::conformance
