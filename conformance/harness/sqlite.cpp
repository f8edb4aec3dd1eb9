#include "volta/conformance/sqlite.h"

#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <regex>
#include <string>
#include <utility>

#include "volta/conformance/user_regex.h"

namespace volta::conformance {
namespace {

std::string describe(std::string_view path) {
  return "results database '" + std::string(path) + "'";
}

std::string sqlite_message(sqlite3* db) { return db ? sqlite3_errmsg(db) : "out of memory"; }

// SQL as quoted in messages: enough to recognise the statement, not a page of it.
std::string excerpt(std::string_view sql) {
  constexpr size_t kMaxChars = 100;
  return sql.size() <= kMaxChars ? std::string(sql) : std::string(sql.substr(0, kMaxChars)) + "...";
}

bool is_unreserved_uri_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~' || c == '/';
}

std::string_view text_argument(sqlite3_value* value) {
  const auto* text = reinterpret_cast<const char*>(sqlite3_value_text(value));
  return text ? std::string_view(text, static_cast<size_t>(sqlite3_value_bytes(value)))
              : std::string_view();
}

// volta_param(params, key): the value of "key=value" in a case's space-separated params
// ("runs=100 processes=3 threads=3"), or NULL when the key is absent.
void volta_param(sqlite3_context* context, int /*argc*/, sqlite3_value** argv) {
  const std::string_view params = text_argument(argv[0]);
  const std::string key = std::string(text_argument(argv[1])) + "=";
  for (size_t at = 0; at < params.size();) {
    const size_t end = std::min(params.find(' ', at), params.size());
    const std::string_view word = params.substr(at, end - at);
    if (word.starts_with(key)) {
      const std::string_view value = word.substr(key.size());
      sqlite3_result_text(context, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
      return;
    }
    at = end + 1;
  }
  sqlite3_result_null(context);
}

// volta_regex_match(pattern, text): 1 when the ECMAScript regex matches the whole text (as
// the perf policy's threshold rows do), 0 otherwise; an invalid pattern is an SQL error.
void volta_regex_match(sqlite3_context* context, int /*argc*/, sqlite3_value** argv) {
  const std::string_view text_of_pattern = text_argument(argv[0]);
  if (const std::optional<std::string> problem = regex_limit_problem(text_of_pattern)) {
    sqlite3_result_error(context, ("volta_regex_match: the pattern " + *problem).c_str(), -1);
    return;
  }
  try {
    const std::regex pattern{std::string(text_of_pattern), std::regex::ECMAScript};
    const std::string text(text_argument(argv[1]));
    sqlite3_result_int(context, std::regex_match(text, pattern) ? 1 : 0);
  } catch (const std::regex_error& e) {
    sqlite3_result_error(context, e.what(), -1);
  }
}

}  // namespace

Statement::Statement(sqlite3* db, std::string path, std::string_view sql)
    : db_(db), path_(std::move(path)) {
  const char* tail = nullptr;
  if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt_, &tail) !=
      SQLITE_OK) {
    fail("cannot prepare `" + excerpt(sql) + "`");
  }
  if (stmt_ == nullptr) {
    throw StoreError(describe(path_) + ": no SQL statement in `" + excerpt(sql) + "`");
  }
  // What follows the first statement must be empty: whitespace, comments or a semicolon.
  const std::string_view rest = sql.substr(static_cast<size_t>(tail - sql.data()));
  sqlite3_stmt* second = nullptr;
  const int rc =
      sqlite3_prepare_v2(db, rest.data(), static_cast<int>(rest.size()), &second, nullptr);
  sqlite3_finalize(second);
  if (rc != SQLITE_OK || second != nullptr) {
    sqlite3_finalize(std::exchange(stmt_, nullptr));
    throw StoreError(describe(path_) + ": `" + excerpt(sql) +
                     "` holds more than one statement; prepare them one at a time");
  }
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_), path_(std::move(other.path_)), stmt_(std::exchange(other.stmt_, nullptr)) {}

void Statement::fail(std::string_view what) const {
  const std::string cause = sqlite_message(db_);
  throw StoreError(describe(path_) + ": " + std::string(what) + ": " + cause, cause);
}

Statement& Statement::bind(int index, int64_t value) {
  if (sqlite3_bind_int64(stmt_, index, value) != SQLITE_OK) fail("binding parameter");
  return *this;
}
Statement& Statement::bind(int index, double value) {
  if (std::isnan(value)) {
    throw StoreError(describe(path_) + ": parameter " + std::to_string(index) + " of `" +
                     excerpt(sqlite3_sql(stmt_)) +
                     "` is NaN, which SQLite would store as NULL (no value)");
  }
  if (sqlite3_bind_double(stmt_, index, value) != SQLITE_OK) fail("binding parameter");
  return *this;
}
Statement& Statement::bind(int index, std::string_view value) {
  if (sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()),
                        SQLITE_TRANSIENT) != SQLITE_OK) {
    fail("binding parameter");
  }
  return *this;
}
Statement& Statement::bind(int index, std::nullopt_t) {
  if (sqlite3_bind_null(stmt_, index) != SQLITE_OK) fail("binding parameter");
  return *this;
}
Statement& Statement::bind(int index, const std::optional<double>& value) {
  return value ? bind(index, *value) : bind(index, std::nullopt);
}

Statement& Statement::bind(int index, std::span<const std::byte> value) {
  // sqlite3_bind_blob with a null pointer binds NULL; an empty output is an empty BLOB.
  const int rc = value.empty() ? sqlite3_bind_zeroblob(stmt_, index, 0)
                               : sqlite3_bind_blob64(stmt_, index, value.data(), value.size(),
                                                     SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) fail("binding parameter");
  return *this;
}

int Statement::parameter_index(std::string_view name) const {
  return sqlite3_bind_parameter_index(stmt_, std::string(name).c_str());
}

bool Statement::read_only() const { return sqlite3_stmt_readonly(stmt_) != 0; }

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail("executing `" + excerpt(sqlite3_sql(stmt_)) + "`");
}

void Statement::run() {
  while (step()) {
  }
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int64_t Statement::column_int(int index) const { return sqlite3_column_int64(stmt_, index); }
double Statement::column_double(int index) const { return sqlite3_column_double(stmt_, index); }
std::string Statement::column_text(int index) const {
  const auto* text = sqlite3_column_text(stmt_, index);
  return text ? reinterpret_cast<const char*>(text) : "";
}
std::vector<std::byte> Statement::column_blob(int index) const {
  const auto* data = static_cast<const std::byte*>(sqlite3_column_blob(stmt_, index));
  const auto size = static_cast<size_t>(sqlite3_column_bytes(stmt_, index));
  if (data == nullptr) return {};  // NULL or a zero-length BLOB
  return {data, data + size};
}
bool Statement::column_is_null(int index) const {
  return sqlite3_column_type(stmt_, index) == SQLITE_NULL;
}
int Statement::column_count() const { return sqlite3_column_count(stmt_); }
std::string Statement::column_name(int index) const {
  const char* name = sqlite3_column_name(stmt_, index);
  return name ? name : "";
}

std::string sqlite_file_uri(std::string_view path, bool read_only) {
  // "file:" + a relative path, or "file://" + an absolute one (an empty authority), so that a
  // path starting with "//" is not read as a host name.
  std::string uri = path.starts_with('/') ? "file://" : "file:";
  constexpr char kHex[] = "0123456789ABCDEF";
  for (const char c : path) {
    if (is_unreserved_uri_char(c)) {
      uri += c;
    } else {
      const auto byte = static_cast<unsigned char>(c);
      uri += '%';
      uri += kHex[byte >> 4];
      uri += kHex[byte & 0xF];
    }
  }
  if (read_only) uri += "?mode=ro";
  return uri;
}

Database::Database(const std::string& path, Mode mode) : path_(path) {
  const bool read_only = mode == Mode::ReadOnly;
  // URI names let ATTACH open shards read-only (see sqlite_file_uri).
  const int flags = SQLITE_OPEN_URI |
                    (read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  if (sqlite3_open_v2(sqlite_file_uri(path, read_only).c_str(), &db_, flags, nullptr) !=
      SQLITE_OK) {
    const std::string cause = sqlite_message(db_);
    sqlite3_close(std::exchange(db_, nullptr));
    throw StoreError("cannot open " + describe(path) + ": " + cause, cause);
  }
  if (!read_only && sqlite3_db_readonly(db_, "main") == 1) {
    sqlite3_close(std::exchange(db_, nullptr));
    throw StoreError(describe(path) +
                     " can be read but not written (file permissions): results cannot be "
                     "recorded into it; pass another --db");
  }
  sqlite3_busy_timeout(db_, 10000);  // concurrent writers (CI shards on one disk) wait, not fail
  sqlite3_extended_result_codes(db_, 1);
  // The gates' helpers, on every connection (volta-audit query may use them too).
  constexpr int kPure = SQLITE_UTF8 | SQLITE_DETERMINISTIC;
  sqlite3_create_function_v2(db_, "volta_param", 2, kPure, nullptr, volta_param, nullptr, nullptr,
                             nullptr);
  sqlite3_create_function_v2(db_, "volta_regex_match", 2, kPure, nullptr, volta_regex_match,
                             nullptr, nullptr, nullptr);
}

Database::~Database() { sqlite3_close(db_); }

Database::Database(Database&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), path_(std::move(other.path_)) {}

void Database::exec(std::string_view sql) {
  char* error = nullptr;
  if (sqlite3_exec(db_, std::string(sql).c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    const std::string cause = error ? error : sqlite_message(db_);
    sqlite3_free(error);
    throw StoreError(describe(path_) + ": " + cause, cause);
  }
}

Statement Database::prepare(std::string_view sql) const { return Statement(db_, path_, sql); }

int64_t Database::last_insert_id() const { return sqlite3_last_insert_rowid(db_); }

int64_t Database::changes() const { return sqlite3_changes64(db_); }

bool Database::in_transaction() const { return sqlite3_get_autocommit(db_) == 0; }

Transaction::Transaction(Database& db) : db_(db), nested_(db.in_transaction()) {
  db_.exec(nested_ ? "SAVEPOINT volta_nested" : "BEGIN IMMEDIATE");
}

Transaction::~Transaction() {
  if (done_) return;
  try {
    // ROLLBACK TO keeps the savepoint open; RELEASE pops it, leaving the outer transaction.
    db_.exec(nested_ ? "ROLLBACK TO volta_nested; RELEASE volta_nested" : "ROLLBACK");
  } catch (const StoreError&) {
    // SQLite has already rolled back (it does after an I/O error or a full disk); the error
    // that got us here is the one to report.
  }
}

void Transaction::commit() {
  db_.exec(nested_ ? "RELEASE volta_nested" : "COMMIT");
  done_ = true;
}

}  // namespace volta::conformance
