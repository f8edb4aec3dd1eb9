// `volta-audit merge SHARD.db... -o OUT.db`: folds the databases that CI shards wrote into one,
// so the gate sees the whole matrix. The store does the work (ResultStore::merge); this file
// is the command line around it.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "volta/conformance/store.h"

namespace volta::audit {

int merge_command(Args& args) {
  const std::optional<std::string> out = args.option("-o");
  const std::vector<std::string> shards = args.positionals("-o OUT.db");
  if (!out) throw UsageError("name the database to merge into with -o OUT.db");
  if (shards.empty()) throw UsageError("name at least one shard database to merge");
  const conformance::MergeSummary merged = conformance::ResultStore::merge(shards, *out);
  std::printf(
      "merged %lld shard(s) into %s: %lld run(s) with %lld recorded input(s), %lld result(s) "
      "(%lld new case(s)), %lld expectation(s), %lld perf sample(s), %lld perf verdict(s), %lld "
      "node trace(s), %lld training run(s) with %lld step(s)\n",
      static_cast<long long>(merged.shards), out->c_str(), static_cast<long long>(merged.runs),
      static_cast<long long>(merged.run_inputs), static_cast<long long>(merged.results),
      static_cast<long long>(merged.new_cases), static_cast<long long>(merged.expectations),
      static_cast<long long>(merged.perf_samples), static_cast<long long>(merged.perf_verdicts),
      static_cast<long long>(merged.node_traces), static_cast<long long>(merged.training_runs),
      static_cast<long long>(merged.training_steps));
  return 0;
}

}  // namespace volta::audit
