# FileCheck and not come with LLVM: its CMake package names their folder.
if(LLVM_TOOLS_BINARY_DIR)
  set(TPC_LLVM_TOOLS_DIR ${LLVM_TOOLS_BINARY_DIR})
else()
  find_program(TPC_FILECHECK NAMES FileCheck FileCheck-19
               HINTS /usr/lib/llvm-19/bin REQUIRED)
  get_filename_component(TPC_LLVM_TOOLS_DIR ${TPC_FILECHECK} DIRECTORY)
endif()
# lit: the one scripts/install-deps puts in the project's virtualenv, else
# llvm-lit beside LLVM's tools, else the copy LLVM's tools package ships.
find_program(TPC_LIT NAMES lit llvm-lit
             HINTS ${PROJECT_SOURCE_DIR}/.venv/bin ${TPC_LLVM_TOOLS_DIR}
             NO_DEFAULT_PATH)
if(NOT TPC_LIT)
  find_file(TPC_LIT lit.py HINTS ${TPC_LLVM_TOOLS_DIR}/../build/utils/lit
            REQUIRED)
endif()
message(STATUS "tpc: lit ${TPC_LIT}, LLVM tools in ${TPC_LLVM_TOOLS_DIR}")
if(NOT DEFINED TPC_PYTHON)
  if(EXISTS ${PROJECT_SOURCE_DIR}/.venv/bin/python)
    set(TPC_PYTHON ${PROJECT_SOURCE_DIR}/.venv/bin/python CACHE FILEPATH "Python for tests")
  else()
    find_program(TPC_PYTHON_FOUND python3 REQUIRED)
    set(TPC_PYTHON ${TPC_PYTHON_FOUND} CACHE FILEPATH "Python for tests")
  endif()
endif()
configure_file(${CMAKE_CURRENT_SOURCE_DIR}/lit.site.cfg.py.in
               ${CMAKE_CURRENT_BINARY_DIR}/lit.site.cfg.py @ONLY)
add_subdirectory(plugin/rules)
add_subdirectory(plugin/bad)
set(TPC_LIT_DEPENDS tpc tpc-opt TPCMlpOnlyShardingPlugin TPCTestRulesPlugin
  TPCTestBadShardingPlugin)
add_custom_target(check-lit
  COMMAND ${TPC_PYTHON} ${TPC_LIT} -sv ${CMAKE_CURRENT_BINARY_DIR}
  DEPENDS ${TPC_LIT_DEPENDS}
  USES_TERMINAL)
# -o: every test's result, for scripts/test_skips.py to name the
# UNSUPPORTED ones (ctest shows a passing test's output to nobody).
add_test(NAME lit COMMAND ${TPC_PYTHON} ${TPC_LIT} -v --show-unsupported
  -o ${CMAKE_CURRENT_BINARY_DIR}/lit-results.json ${CMAKE_CURRENT_BINARY_DIR})
# The whole lit suite is one ctest test: it takes about 9 minutes alone under
# ASan + UBSan on 2 cores, more beside the unit tests, so it gets a limit of
# its own rather than the 900 s that scripts/test gives each test.
set_tests_properties(lit PROPERTIES TIMEOUT 2400)
