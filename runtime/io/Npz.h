//===- Npz.h - NumPy .npz archives ------------------------------*- C++ -*-===//
//
// numpy.savez / savez_compressed write a zip archive with one .npy member
// per array, named by the array's keyword. readNpz reads every member,
// stored or deflated, with zip64 sizes and CRC checks.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_IO_NPZ_H
#define TPC_RUNTIME_IO_NPZ_H

#include "runtime/io/Npy.h"

#include <string>
#include <utility>
#include <vector>

namespace tpc {

/// The arrays of the .npz file at `path`, by name (the member name without
/// ".npy"), in archive order. Errors name the file and the member.
Status readNpz(const std::string &path,
               std::vector<std::pair<std::string, NpyArray>> &out);

} // namespace tpc

#endif
