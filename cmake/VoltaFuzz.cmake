# Fuzz targets (governance/reliability.md). Each input surface has one under the fuzz/ folder of
# the component that owns it: a file defining LLVMFuzzerTestOneInput, and its corpus folder of
# inputs to replay, corpus/<target>/ beside it (small seeds and every minimized finding, kept
# forever). SEEDS names real files of the repository (or folders of them) that seed it too.
#
# VOLTA_FUZZ=ON (the fuzz preset: clang, ASan, UBSan): each target links libFuzzer and
# scripts/ci/fuzz.sh runs it. Otherwise each target links fuzz_replay_main.cpp instead and
# CTest replays its corpus (fuzz_replay_<target>, label unit), so every kept finding is a
# regression test of every build.
set(VOLTA_FUZZ_REPLAY_MAIN ${CMAKE_CURRENT_LIST_DIR}/fuzz_replay_main.cpp)
if(VOLTA_FUZZ)
  add_custom_target(volta_fuzz_targets)
endif()

# volta_fuzz_target(NAME SOURCE LIBRARIES lib... [SEEDS path...])  (SEEDS: from the source root)
function(volta_fuzz_target name source)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "" "LIBRARIES;SEEDS")
  set(corpus ${CMAKE_CURRENT_SOURCE_DIR}/corpus/${name})
  list(TRANSFORM arg_SEEDS PREPEND ${PROJECT_SOURCE_DIR}/)
  if(VOLTA_FUZZ)
    add_executable(${name} ${source})
    target_link_options(${name} PRIVATE -fsanitize=fuzzer)
    add_dependencies(volta_fuzz_targets ${name})
  else()
    add_executable(${name} ${source} ${VOLTA_FUZZ_REPLAY_MAIN})
    add_test(NAME fuzz_replay_${name} COMMAND ${name} ${corpus} ${arg_SEEDS})
    set_tests_properties(fuzz_replay_${name} PROPERTIES LABELS "unit;fuzz" TIMEOUT 300)
  endif()
  target_include_directories(${name} PRIVATE ${CMAKE_CURRENT_FUNCTION_LIST_DIR})  # fuzz_support.h
  target_link_libraries(${name} PRIVATE ${arg_LIBRARIES} volta_warnings)
  # fuzz.sh finds each target's corpus (first line) and seeds through this file beside it.
  list(JOIN arg_SEEDS "\n" seeds)
  file(GENERATE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/${name}.corpus CONTENT "${corpus}\n${seeds}\n")
endfunction()
