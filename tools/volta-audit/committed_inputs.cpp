#include "committed_inputs.h"

#include <algorithm>
#include <set>

#include "build_info.h"
#include "tool_paths.h"
#include "volta/sha256.h"

namespace volta::audit {
namespace {

namespace fs = std::filesystem;
using conformance::kAbsent;
using conformance::kUnknown;
using conformance::RunInput;

bool under_root(std::string_view name) {
  return std::ranges::any_of(build::kVerdictRoots, [name](std::string_view root) {
    return name == root ||
           (name.starts_with(root) && name.size() > root.size() && name[root.size()] == '/');
  });
}

std::string known_commit_sha256(std::string_view name) {
  for (const build::CommittedFile& f : build::kCommittedFiles) {
    if (name == f.path) return f.sha256;
  }
  return std::string(kAbsent);
}

}  // namespace

std::string committed_sha256(std::string_view name) {
  if (std::string_view(build::kCommit) == kUnknown || !under_root(name)) {
    return std::string(kUnknown);
  }
  return known_commit_sha256(name);
}

RunInput file_input(std::string name, const fs::path& path) {
  RunInput input;
  input.kind = RunInput::Kind::File;
  input.path = path.string();
  input.sha256 = sha256_file(path).value_or(std::string(kAbsent));
  input.committed_sha256 = committed_sha256(name);
  input.name = std::move(name);
  return input;
}

std::vector<RunInput> folder_inputs(const std::string& name, const fs::path& dir,
                                    std::string_view extension) {
  std::set<std::string> names;  // repository paths, sorted
  const std::string prefix = name + "/";
  for (const build::CommittedFile& f : build::kCommittedFiles) {
    const std::string_view path = f.path;
    if (path.starts_with(prefix) && path.ends_with(extension) &&
        path.find('/', prefix.size()) == std::string_view::npos) {
      names.insert(std::string(path));
    }
  }
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) {
    const std::string file = entry.path().filename().string();
    if (entry.is_regular_file() && file.ends_with(extension)) names.insert(prefix + file);
  }
  std::vector<RunInput> inputs;
  inputs.reserve(names.size());
  for (const std::string& n : names) {
    inputs.push_back(file_input(n, dir / n.substr(prefix.size())));
  }
  return inputs;
}

RunInput planted_option(std::string option, std::string value) {
  RunInput input;
  input.kind = RunInput::Kind::Option;
  input.name = std::move(option);
  input.path = std::move(value);
  input.sha256 = std::string(conformance::kPlanted);
  input.committed_sha256 = std::string(kAbsent);
  return input;
}

std::string source_file_problem(std::string_view name) {
  const RunInput input = file_input(std::string(name), source_dir() / name);
  if (input.sha256 == input.committed_sha256) return "";
  if (input.committed_sha256 == kUnknown) {
    return "this volta-audit knows no committed " + std::string(name) +
           " (built outside a git checkout)";
  }
  if (input.sha256 == kAbsent) {
    return input.path + " is missing, but commit " + std::string(build::kCommit).substr(0, 12) +
           " has it";
  }
  return input.path + " differs from the file committed at " +
         std::string(build::kCommit).substr(0, 12) +
         " (this volta-audit's commit): commit or revert it, then rebuild";
}

}  // namespace volta::audit
