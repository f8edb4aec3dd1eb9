# volta_add_test(NAME <name> SOURCES <files...> LIBS <targets...> LABELS <labels...> [TIMEOUT s] [COST s])
# One Boost.Test executable registered with CTest under the given labels.
function(volta_add_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT;COST" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} Boost::unit_test_framework volta_warnings)
  target_compile_definitions(${T_NAME} PRIVATE BOOST_TEST_DYN_LINK)
  # Test-only helpers shared across folders (volta/testing/*.h).
  target_include_directories(${T_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/cmake/test_support)
  add_test(NAME ${T_NAME} COMMAND ${T_NAME} --log_level=message --report_level=short)
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT})
  # COST: the seconds the test takes on a 2-core CI machine. `ctest -j` starts the costliest
  # first, which a fresh clone (no CTestCostData.txt yet) would otherwise leave to chance: a
  # 100-second test started last adds its whole length to the lane.
  if(T_COST)
    set_tests_properties(${T_NAME} PROPERTIES COST ${T_COST})
  endif()
endfunction()
