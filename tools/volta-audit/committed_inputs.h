#pragma once
// The inputs that decide verdicts, read from the source tree at run time (expectations,
// policies, determinism configurations, docs), held to the files committed at the binary's
// commit (build_info.h's kCommittedFiles). Runs record them as run_input rows, which gates
// read; a gate checks the files it reads itself with source_file_problem.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "volta/conformance/store.h"

namespace volta::audit {

// The sha256 of repository path `name` as committed at the binary's commit; kAbsent when that
// commit has no such file under a verdict root, kUnknown when the binary knows no commit or
// `name` lies outside every verdict root (build_info.h's kVerdictRoots).
std::string committed_sha256(std::string_view name);

// The file `path` read as repository path `name`.
conformance::RunInput file_input(std::string name, const std::filesystem::path& path);

// The folder `dir` read as repository folder `name`: every file committed under `name` and
// every file in `dir` whose name ends in `extension`, so that a file added, removed or
// changed shows.
std::vector<conformance::RunInput> folder_inputs(const std::string& name,
                                                 const std::filesystem::path& dir,
                                                 std::string_view extension);

// An option that plants a test-only defect: never the committed input.
conformance::RunInput planted_option(std::string option, std::string value);

// The source tree's copy of repository path `name` (under build_info.h's kSourceDir), as a
// gate reads it: "" when it is the committed file, else what is wrong, in words.
std::string source_file_problem(std::string_view name);

}  // namespace volta::audit
