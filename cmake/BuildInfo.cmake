# Run at build time (cmake -P): writes OUT with the source tree's commit and dirty flag,
# touching it only when they change, so results always name the commit a binary came from.
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
set(content "// Generated at build time by cmake/BuildInfo.cmake: do not edit.
#pragma once
namespace volta::build {
inline constexpr const char* kCommit = \"${commit}\";
inline constexpr bool kDirty = ${dirty};
inline constexpr const char* kBuildType = \"${BUILD_TYPE}\";
inline constexpr const char* kSourceDir = \"${SOURCE_DIR}\";
}  // namespace volta::build
")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT old STREQUAL content)
  file(WRITE ${OUT} "${content}")
endif()
