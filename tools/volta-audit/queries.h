#pragma once
// Canned read-only questions over the results store, and a runner for any read-only SQL.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "volta/conformance/sqlite.h"

namespace volta::audit {

struct CannedQuery {
  std::string_view name;         // "failures-by-family", "slowest-cases", ...
  std::string_view description;  // one line for `query --list`
  std::string_view sql;          // may bind :commit (the commit of the latest complete run)
};
std::span<const CannedQuery> canned_queries();
const CannedQuery* find_query(std::string_view name);

struct QueryResult {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;  // NULL as ""
};

// Runs `sql` (one statement) with the connection switched to query_only for the duration: a
// statement that would write fails with StoreError before it runs. Binds :commit when the
// statement names it; naming it with an empty `commit` is an error.
QueryResult run_read_only(const conformance::Database& db, std::string_view sql,
                          std::string_view commit = {});
// Steps a prepared, bound statement to completion and collects its rows.
QueryResult read_rows(conformance::Statement& statement);
// Aligned plain-text table: a header row, then one line per row. Cells are kept on one line
// (newlines and tabs shown as \n and \t); columns are separated by two spaces.
std::string format_table(const QueryResult& result);

// The commit of the newest complete run, or "" when there is none.
std::string latest_commit(const conformance::Database& db);

}  // namespace volta::audit
