// volta-onnx-expectations: rewrites an ONNX corpus's expectations file from its results for a
// commit in a results database (see onnx_draft.h). scripts/onnx_expectations.sh runs the
// suite and then this, so regenerating the file is one command.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "volta/conformance/onnx_draft.h"
#include "volta/conformance/store.h"
#include "volta/error.h"

namespace {

constexpr const char* kUsage =
    "usage: volta-onnx-expectations --file EXPECTATIONS.tsv [--suite onnx|onnx-current]\n"
    "                               [--db PATH] [--commit SHA] [--fresh]\n"
    "  Rewrites EXPECTATIONS.tsv from the results of the suite (default onnx) for the commit\n"
    "  (default: the newest complete run with results of the suite) in the results database\n"
    "  (default volta-results.db), keeping the fields of lines whose outcome still holds;\n"
    "  --fresh drafts every line anew.\n";

int usage(const std::string& problem) {
  std::fprintf(stderr, "volta-onnx-expectations: %s\n%s", problem.c_str(), kUsage);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace volta::conformance;
  std::string file, db_path = kDefaultDatabase, commit, suite(kOnnxCorpus.suite);
  bool fresh = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (arg == "--fresh") {
      fresh = true;
      continue;
    }
    if (i + 1 >= argc) return usage("'" + arg + "' is not an option or lacks its value");
    const std::string value = argv[++i];
    if (arg == "--file") {
      file = value;
    } else if (arg == "--db") {
      db_path = value;
    } else if (arg == "--commit") {
      commit = value;
    } else if (arg == "--suite") {
      suite = value;
    } else {
      return usage("unknown option '" + arg + "'");
    }
  }
  if (file.empty()) return usage("--file is required");
  const OnnxCorpus* corpus = find_onnx_corpus(suite);
  if (corpus == nullptr) return usage("no ONNX corpus suite '" + suite + "' (onnx, onnx-current)");
  try {
    const ResultStore store(db_path, volta::conformance::Database::Mode::ReadOnly);
    if (commit.empty()) commit = newest_onnx_commit(store.db(), suite);
    if (commit.empty()) {
      std::fprintf(stderr, "volta-onnx-expectations: %s has no complete %s run\n", db_path.c_str(),
                   suite.c_str());
      return 1;
    }
    const std::vector<OnnxExpectation> existing = std::filesystem::exists(file) && !fresh
                                                      ? load_onnx_expectations(file)
                                                      : std::vector<OnnxExpectation>{};
    const OnnxDraft draft =
        draft_onnx_expectations(store.db(), commit, existing, today_utc(), *corpus);
    std::ofstream(file, std::ios::binary | std::ios::trunc) << draft.text;
    for (const std::string& d : draft.dropped) {
      std::fprintf(stderr, "dropped %s\n", d.c_str());
    }
    std::fprintf(stderr,
                 "wrote %s from commit %.12s: %lld line(s), %lld kept as they were, %lld "
                 "ERROR/CRASH/TIMEOUT listed as bugs, %zu dropped\n",
                 file.c_str(), commit.c_str(), static_cast<long long>(draft.lines),
                 static_cast<long long>(draft.kept), static_cast<long long>(draft.bugs),
                 draft.dropped.size());
    return draft.bugs == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "volta-onnx-expectations: %s\n", e.what());
    return 1;
  }
}
