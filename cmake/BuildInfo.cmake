# Run at build time (cmake -P): writes OUT with the source tree's commit and dirty flag, and the
# sha256 of every file committed at that commit under the roots that decide verdicts (the
# expectations, policies, determinism configurations and docs that runs, gates and the docs
# check read from the tree at run time), touching OUT only when something changed. Results
# name the commit a binary came from, and a run can tell whether the inputs it read are the
# committed ones.
set(verdict_roots
  README.md
  governance
  conformance/expectations
  conformance/onnx/expectations.tsv
  conformance/onnx/expectations-current.tsv
  conformance/determinism/configs
  .github/workflows)

execute_process(COMMAND git -C ${SOURCE_DIR} rev-parse HEAD
  OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR commit STREQUAL "")
  set(commit "unknown")
endif()
execute_process(COMMAND git -C ${SOURCE_DIR} status --porcelain --untracked-files=no
  OUTPUT_VARIABLE status ERROR_QUIET)
if(status STREQUAL "")
  set(dirty 0)
else()
  set(dirty 1)
endif()

# The policies a gate judges by, embedded as committed so that a gate never judges by a file
# edited after the build (TEXTS_OUT, committed_texts.h): name of the constant, file.
set(judged_files
  kCommittedNumericsPolicy governance/numerics-policy.md
  kCommittedPerfPolicy governance/perf-slo.md)

set(committed "")
if(NOT commit STREQUAL "unknown")
  execute_process(COMMAND git -C ${SOURCE_DIR} ls-tree -r --name-only HEAD -- ${verdict_roots}
    OUTPUT_VARIABLE listing ERROR_QUIET)
  string(REPLACE "\n" ";" files "${listing}")
  set(blob "${OUT}.blob")
  foreach(file IN LISTS files)
    if(file STREQUAL "")
      continue()
    endif()
    execute_process(COMMAND git -C ${SOURCE_DIR} show HEAD:${file} OUTPUT_FILE ${blob}
      RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "BuildInfo: cannot read ${file} at HEAD")
    endif()
    file(SHA256 ${blob} sha)
    string(APPEND committed "    CommittedFile{\"${file}\", \"${sha}\"},\n")
  endforeach()
  file(REMOVE ${blob})
endif()
set(roots "")
foreach(root IN LISTS verdict_roots)
  string(APPEND roots "    \"${root}\",\n")
endforeach()
list(LENGTH verdict_roots root_count)
string(REGEX MATCHALL "CommittedFile" entries "${committed}")
list(LENGTH entries file_count)

set(content "// Generated at build time by cmake/BuildInfo.cmake: do not edit.
#pragma once
#include <array>
#include <string>
#include \"volta/version.h\"
namespace volta::build {
inline constexpr const char* kCommit = \"${commit}\";
inline constexpr bool kDirty = ${dirty};
inline constexpr const char* kBuildType = \"${BUILD_TYPE}\";
inline constexpr const char* kSourceDir = \"${SOURCE_DIR}\";
// The repository paths (files, or folders with everything below them) whose committed
// contents are listed in kCommittedFiles.
inline constexpr std::array<const char*, ${root_count}> kVerdictRoots = {
${roots}};
struct CommittedFile {
  const char* path;    // relative to the repository root
  const char* sha256;  // of its contents at kCommit
};
// Empty when kCommit is unknown (built outside a git checkout).
inline constexpr std::array<CommittedFile, ${file_count}> kCommittedFiles = {
${committed}};
// What `volta --version` and `volta-audit --version` print: \"volta 0.1.0 (commit 04a39e92b676,
// RelWithDebInfo)\", with \"-dirty\" after a commit whose tracked files were changed.
inline std::string version_line(const std::string& program) {
  const std::string commit = std::string(kCommit).substr(0, 12);
  return program + \" \" + std::string(volta::kVersion) + \" (commit \" +
         (commit.empty() ? \"unknown\" : commit) + (kDirty ? \"-dirty\" : \"\") + \", \" + kBuildType + \")\";
}
}  // namespace volta::build
")
# Writes `text` to `file` only when it differs, so that an unchanged header rebuilds nothing.
function(write_if_changed file text)
  set(old "")
  if(EXISTS ${file})
    file(READ ${file} old)
  endif()
  if(NOT old STREQUAL text)
    file(WRITE ${file} "${text}")
  endif()
endfunction()
write_if_changed(${OUT} "${content}")

set(texts "// Generated at build time by cmake/BuildInfo.cmake: do not edit.
#pragma once
#include <string_view>
// The committed files verbatim: one may exceed the 65536 characters the standard asks every
// compiler to take in a literal (GCC and Clang take far more), which Clang would flag.
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored \"-Woverlength-strings\"
#endif
namespace volta::build {
// The files gates judge by, as committed at kCommit (build_info.h); empty when it is unknown.
")
set(delimiter "volta_committed")
while(judged_files)
  list(POP_FRONT judged_files name file)
  set(text "")
  if(NOT commit STREQUAL "unknown")
    set(blob "${TEXTS_OUT}.blob")
    execute_process(COMMAND git -C ${SOURCE_DIR} show HEAD:${file} OUTPUT_FILE ${blob}
      RESULT_VARIABLE rc)
    if(rc EQUAL 0)
      file(READ ${blob} text)
    endif()
    file(REMOVE ${blob})
  endif()
  string(FIND "${text}" ")${delimiter}\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "BuildInfo: ${file} contains the raw string delimiter ${delimiter}")
  endif()
  string(APPEND texts "inline constexpr std::string_view ${name} = R\"${delimiter}(${text})${delimiter}\";\n")
endwhile()
string(APPEND texts "}  // namespace volta::build\n#if defined(__clang__)\n#pragma clang diagnostic pop\n#endif\n")
write_if_changed(${TEXTS_OUT} "${texts}")
