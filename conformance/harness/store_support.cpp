#include "store_support.h"

#include <string>

namespace volta::conformance {

std::string describe_store(std::string_view path) {
  return "results database '" + std::string(path) + "'";
}

std::string machine_or_host(const std::string& machine, const std::string& host,
                            const std::string& cpu_model) {
  return machine.empty() ? host + " / " + cpu_model : machine;
}

Statement require_running_row(const Database& db, const RunTable& runs, int64_t id,
                              std::string_view action, std::string_view more_columns) {
  Statement s = db.prepare("SELECT status" + std::string(more_columns) + " FROM " +
                           std::string(runs.table) + " WHERE id = ?");
  s.bind(1, id);
  const std::string prefix = describe_store(db.path()) + ": cannot " + std::string(action) + " " +
                             std::string(runs.noun) + " " + std::to_string(id);
  if (!s.step()) throw StoreError(prefix + ": there is no such " + std::string(runs.noun));
  if (const std::string status = s.column_text(0); status != "running") {
    throw StoreError(prefix + ": it is '" + status + "', and only a 'running' run takes " +
                     std::string(runs.takes));
  }
  return s;
}

}  // namespace volta::conformance
