// `volta-audit query`: canned questions over the results store, or any read-only SQL.

#include <algorithm>
#include <cstdio>
#include <optional>

#include "commands.h"
#include "queries.h"
#include "volta/conformance/store.h"

namespace volta::audit {
namespace {

constexpr std::string_view kSupported =
    "NAME, --list, --sql \"SELECT ...\", --commit SHA, --db PATH";

std::string known_queries() {
  std::string names;
  for (const CannedQuery& q : canned_queries()) {
    names += (names.empty() ? "" : ", ") + std::string(q.name);
  }
  return names;
}

void print_query_list() {
  QueryResult list;
  list.columns = {"QUERY", "DESCRIPTION"};
  for (const CannedQuery& q : canned_queries()) {
    list.rows.push_back({std::string(q.name), std::string(q.description)});
  }
  std::printf("%s", format_table(list).c_str());
}

// The SQL to run: a canned query by name, or --sql; exactly one of them.
std::string chosen_sql(const std::vector<std::string>& names,
                       const std::optional<std::string>& sql) {
  if (sql && !names.empty()) throw UsageError("give a query NAME or --sql, not both");
  if (sql) return *sql;
  if (names.size() != 1) {
    throw UsageError("expected one query NAME (" + known_queries() + ") or --sql \"SELECT ...\"");
  }
  const CannedQuery* canned = find_query(names.front());
  if (canned == nullptr) {
    throw UsageError("unknown query '" + names.front() + "' (known: " + known_queries() + ")");
  }
  return std::string(canned->sql);
}

}  // namespace

int query_command(Args& args) {
  const bool list = args.flag("--list");
  const std::optional<std::string> sql = args.option("--sql");
  const std::optional<std::string> commit = args.option("--commit");
  const std::string path = database_path(args);
  const std::vector<std::string> names = args.positionals(kSupported);
  if (list) {
    if (sql || commit || !names.empty()) {
      throw UsageError("--list takes no query NAME, --sql or --commit");
    }
    print_query_list();
    return 0;
  }
  const std::string statement = chosen_sql(names, sql);
  // Two locks on writing: the file is opened read-only, and run_read_only refuses writes.
  const conformance::ResultStore store(path, conformance::Database::Mode::ReadOnly);
  // :commit is the newest complete run's commit unless --commit names another.
  const std::string bound = commit.value_or(latest_commit(store.db()));
  if (commit && run_read_only(store.db(),
                              "SELECT count(*) FROM run WHERE commit_sha = :commit AND "
                              "status = 'complete'",
                              bound)
                        .rows[0][0] == "0") {
    throw UsageError("no complete run for commit " + bound + " in '" + path +
                     "' (`volta-audit query runs` lists the runs)");
  }
  const QueryResult result = run_read_only(store.db(), statement, bound);
  std::printf("%s(%zu row%s)\n", format_table(result).c_str(), result.rows.size(),
              result.rows.size() == 1 ? "" : "s");
  return 0;
}

}  // namespace volta::audit
