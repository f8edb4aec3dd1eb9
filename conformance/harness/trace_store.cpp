#include "volta/conformance/trace_store.h"

#include <string>

namespace volta::conformance {

void record_traces(ResultStore& store, int64_t run_id, std::span<const NodeTraceRow> rows) {
  Database& db = store.db();
  Transaction tx(db);
  store.require_running(run_id, "record node traces into");
  Statement add = db.prepare(
      "INSERT INTO node_trace (run_id, subject, step, node, op, kernel, determinism, origin, "
      "output, dtype, shape, hash, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (size_t i = 0; i < rows.size(); ++i) {
    const NodeTraceRow& r = rows[i];
    try {
      add.reset();
      add.bind(1, run_id)
          .bind(2, r.subject)
          .bind(3, r.step)
          .bind(4, r.node)
          .bind(5, r.op)
          .bind(6, r.kernel)
          .bind(7, r.determinism)
          .bind(8, r.origin)
          .bind(9, r.output)
          .bind(10, r.dtype)
          .bind(11, r.shape)
          .bind(12, r.hash);
      if (r.data) {
        add.bind(13, std::span<const std::byte>(*r.data));
      } else {
        add.bind(13, std::nullopt);
      }
      add.run();
    } catch (const StoreError& e) {
      const std::string position = " (trace " + std::to_string(i + 1) + " of " +
                                   std::to_string(rows.size()) + "; the batch was rolled back)";
      const std::string where = "subject '" + r.subject + "', step " + std::to_string(r.step) +
                                ", output " + std::to_string(r.output);
      std::string message;
      if (e.cause().starts_with("UNIQUE constraint failed")) {
        message = "results database '" + db.path() + "': run " + std::to_string(run_id);
        message += " already has a trace of " + where + ": a subject is traced once per run";
      } else {
        message = std::string(e.what()) + " (" + where + ")";
      }
      throw StoreError(message + position, e.cause());
    }
  }
  tx.commit();
}

std::vector<NodeTraceRow> load_traces(const Database& db, int64_t run_id) {
  Statement s = db.prepare(
      "SELECT subject, step, node, op, kernel, determinism, origin, output, dtype, shape, hash, "
      "data FROM node_trace WHERE run_id = ? ORDER BY subject, step, output");
  s.bind(1, run_id);
  std::vector<NodeTraceRow> rows;
  while (s.step()) {
    NodeTraceRow r;
    r.subject = s.column_text(0);
    r.step = static_cast<int>(s.column_int(1));
    r.node = s.column_text(2);
    r.op = s.column_text(3);
    r.kernel = s.column_text(4);
    r.determinism = s.column_text(5);
    r.origin = s.column_text(6);
    r.output = static_cast<int>(s.column_int(7));
    r.dtype = s.column_text(8);
    r.shape = s.column_text(9);
    r.hash = s.column_text(10);
    if (!s.column_is_null(11)) r.data = s.column_blob(11);
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace volta::conformance
