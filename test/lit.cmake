# lit + FileCheck from Debian's llvm-19-tools.
set(TPC_LIT "/usr/lib/llvm-19/build/utils/lit/lit.py" CACHE FILEPATH "lit.py")
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
set(TPC_LIT_DEPENDS tpc tpc-opt TPCMlpOnlyShardingPlugin TPCTestRulesPlugin)
add_custom_target(check-lit
  COMMAND ${TPC_PYTHON} ${TPC_LIT} -sv ${CMAKE_CURRENT_BINARY_DIR}
  DEPENDS ${TPC_LIT_DEPENDS}
  USES_TERMINAL)
add_test(NAME lit COMMAND ${TPC_PYTHON} ${TPC_LIT} -v ${CMAKE_CURRENT_BINARY_DIR})
