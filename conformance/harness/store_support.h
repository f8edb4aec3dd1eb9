#pragma once
// Internal to the harness: what the results store's writers of run-like rows (store.cpp's
// conformance runs, training_store.cpp's training runs) word and check alike.

#include <cstdint>
#include <string>
#include <string_view>

#include "volta/conformance/sqlite.h"

namespace volta::conformance {

// "results database 'PATH'", as every message about the store names its file.
std::string describe_store(std::string_view path);

// The machine a run records: `machine` as given, or "HOST / CPU MODEL" when it is empty.
std::string machine_or_host(const std::string& machine, const std::string& host,
                            const std::string& cpu_model);

// A table whose rows are runs with a status: which table, what one row is called in messages
// ("training run") and what only a 'running' one takes ("steps").
struct RunTable {
  std::string_view table;
  std::string_view noun;
  std::string_view takes;
};
inline constexpr RunTable kRunTable{"run", "run", "rows"};
inline constexpr RunTable kTrainingRunTable{"training_run", "training run", "steps"};

// Throws StoreError unless `runs` has a row `id` whose status is 'running'; `action` words the
// message ("record steps into"). Returns the statement on that row: column 0 is the status,
// then `more_columns` (", resumed_from").
Statement require_running_row(const Database& db, const RunTable& runs, int64_t id,
                              std::string_view action, std::string_view more_columns = "");

}  // namespace volta::conformance
