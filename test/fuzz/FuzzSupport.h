//===- FuzzSupport.h - Shared helpers of the libFuzzer harnesses -*- C++ -*-===//
//
// The harnesses feed bytes to the readers that take files: they write the
// bytes to a private scratch folder (in /dev/shm when it exists) and hand the
// reader the path, exactly as `tpc` would.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_TEST_FUZZ_FUZZSUPPORT_H
#define TPC_TEST_FUZZ_FUZZSUPPORT_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace tpc::fuzz {

/// A folder private to this process, created on first use and removed at
/// exit.
const std::string &scratchDir();

/// Writes `size` bytes to scratchDir()/name and returns the path. Aborts on
/// an I/O error: a harness that cannot write its input tests nothing.
std::string writeScratch(const std::string &name, const uint8_t *data,
                         size_t size);

} // namespace tpc::fuzz

#endif // TPC_TEST_FUZZ_FUZZSUPPORT_H
