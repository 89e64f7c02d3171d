//===- Npy.h - NumPy .npy files ---------------------------------*- C++ -*-===//
//
// .npy is how reference activations and test inputs move between Python and
// the runtime. Supported: format versions 1.0, 2.0 and 3.0 for reading (1.0,
// or 2.0 when the header does not fit, for writing), C order, little-endian
// f4 f8 f2 i8 i4 i1 u1 and b1, any rank including 0-d. bfloat16 has no NumPy
// dtype and is refused.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_IO_NPY_H
#define TPC_RUNTIME_IO_NPY_H

#include "kernels/Types.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tpc {

/// A tensor read from a .npy file: densely packed, row-major data.
struct NpyArray {
  TensorDesc desc;
  std::vector<uint8_t> data;
};

/// What the header of a .npy file says.
struct NpyHeader {
  TensorDesc desc;
  int majorVersion = 1;
  /// Where the array data starts, from the beginning of the file.
  size_t dataOffset = 0;
};

/// The NumPy descr string for `t` ("<f4", "|b1"). bf16, which NumPy has no
/// dtype for, is "<V2": 2-byte opaque items, as NumPy saves ml_dtypes'
/// bfloat16 arrays (read them back with `.view(ml_dtypes.bfloat16)`). The
/// one-byte storage types (float8, 4- and 2-bit integers, one element per
/// byte) are "|V1" likewise (`.view(ml_dtypes.float8_e4m3fn)`, ...).
const char *npyDescr(DType t);

/// Parses and validates the header of the .npy image `bytes` (a whole file of
/// `size` bytes), including that exactly the announced number of data bytes
/// follows it. `name` is used in messages.
Status parseNpyHeader(const uint8_t *bytes, size_t size,
                      const std::string &name, NpyHeader &out);

/// Reads the .npy file at `path`.
Status readNpy(const std::string &path, NpyArray &out);
/// Reads the .npy file at `path` once `accept` has approved what its header
/// describes; when `accept` refuses, its error is returned and no data is
/// read (a huge file of the wrong shape costs nothing).
Status readNpy(const std::string &path, NpyArray &out,
               const std::function<Status(const TensorDesc &)> &accept);

/// Writes `desc.bytes()` bytes at `data` as a .npy file at `path`, atomically
/// (on failure the path is left as it was).
Status writeNpy(const std::string &path, const TensorDesc &desc,
                const void *data);

} // namespace tpc

#endif // TPC_RUNTIME_IO_NPY_H
