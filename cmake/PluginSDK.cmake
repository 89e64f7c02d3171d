# What `cmake --install` puts in place for out-of-tree sharding plugins (see
# docs/custom-sharding.md): the shared TPCDialects and TPCSharding libraries
# that tpc and tpc-opt load, the headers that declare them (with their
# generated .inc files), and a CMake package, find_package(TPC), whose
# imported targets TPC::TPCDialects and TPC::TPCSharding carry the include
# directory and the links to libMLIR/libLLVM.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TPC_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/tpc)
set(TPC_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/tpc)

# Installed libraries find each other next to themselves, and libMLIR,
# OpenBLAS and MPI where they were linked from (not on the default path).
set_target_properties(TPCDialects TPCSharding PROPERTIES
  INSTALL_RPATH "$ORIGIN" INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS TPCDialects TPCSharding
  EXPORT TPCTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${TPC_INSTALL_INCLUDEDIR})

# Headers keep their repository paths ("compiler/Dialect/TP/IR/TPOps.h").
# KernelBridge.h is the compiler's bridge to the kernel tables, not part of
# the dialects' interface: a plugin never needs it or the kernel headers.
foreach(dialect ONNX Plan TP TPC)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/compiler/Dialect/${dialect}/IR/
    DESTINATION ${TPC_INSTALL_INCLUDEDIR}/compiler/Dialect/${dialect}/IR
    FILES_MATCHING PATTERN "*.h" PATTERN "KernelBridge.h" EXCLUDE)
  install(DIRECTORY ${PROJECT_BINARY_DIR}/compiler/Dialect/${dialect}/IR/
    DESTINATION ${TPC_INSTALL_INCLUDEDIR}/compiler/Dialect/${dialect}/IR
    FILES_MATCHING PATTERN "*.h.inc" PATTERN "CMakeFiles" EXCLUDE)
endforeach()
# Only the headers TPCSharding implements: passes/Passes.h declares tpc's own
# passes, which live in the tools, not in a library a plugin could link.
install(FILES
  ${PROJECT_SOURCE_DIR}/passes/Sharding.h
  ${PROJECT_SOURCE_DIR}/passes/ShardingAnalysis.h
  ${PROJECT_SOURCE_DIR}/passes/ShardingMaterialize.h
  ${PROJECT_SOURCE_DIR}/passes/ShardingRuleInterface.h
  ${PROJECT_SOURCE_DIR}/passes/ShardingRuleInterface.td
  ${PROJECT_BINARY_DIR}/passes/ShardingRuleInterface.h.inc
  DESTINATION ${TPC_INSTALL_INCLUDEDIR}/passes)

install(EXPORT TPCTargets NAMESPACE TPC:: DESTINATION ${TPC_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/TPCConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/TPCConfig.cmake
  INSTALL_DESTINATION ${TPC_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/TPCConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY ExactVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/cmake/TPCConfig.cmake
  ${PROJECT_BINARY_DIR}/cmake/TPCConfigVersion.cmake
  DESTINATION ${TPC_INSTALL_CMAKEDIR})
