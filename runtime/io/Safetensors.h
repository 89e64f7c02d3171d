//===- Safetensors.h - The safetensors weight format ------------*- C++ -*-===//
//
// Layout of a .safetensors file:
//   8 bytes      N, the header length (little-endian uint64)
//   N bytes      JSON: {"name": {"dtype": "F32", "shape": [..],
//                "data_offsets": [begin, end]}, ...,
//                "__metadata__": {"key": "value", ...}}   (optional)
//   the rest     the data buffer; offsets are relative to its start
// The tensors must tile the data buffer exactly: no gaps, no overlaps, no
// bytes left over.
//
// The writer streams, so a weight can be sliced out of a mapped source file
// and written without ever holding a whole tensor in memory. The reader maps
// the file and hands out pointers into the mapping.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_IO_SAFETENSORS_H
#define TPC_RUNTIME_IO_SAFETENSORS_H

#include "kernels/Types.h"
#include "runtime/support/AtomicFile.h"
#include "runtime/support/HashingWriter.h"
#include "runtime/support/MappedFile.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace tpc {

/// The safetensors dtype name ("F32", "BF16", "BOOL", "F8_E4M3", ...). The
/// storage types safetensors has no name for (the FNUZ float8 formats, 4-
/// and 2-bit integers held one per byte) are written as "U8".
const char *safetensorsDTypeName(DType t);
/// Inverse of safetensorsDTypeName; nullopt for names this runtime does not
/// support (F8_E8M0, C64, ...).
std::optional<DType> parseSafetensorsDType(const std::string &name);
/// Whether a tensor read as `stored` holds the elements of a buffer of
/// `planned`: the same dtype, or the bytes of a type written as "U8".
bool safetensorsHolds(DType stored, DType planned);

/// A tensor to be written: its name and description.
struct SafetensorsEntry {
  std::string name;
  TensorDesc desc;
};

/// Writes a safetensors file. Usage:
///   SafetensorsWriter w;
///   w.open(path, entries, metadata);
///   for each tensor (any order): w.beginTensor(name); w.append(...)...;
///   w.close();
/// Every tensor must receive exactly desc.bytes() bytes, in one or more
/// append() calls, before the next beginTensor() or close(). The file appears
/// at `path` only when close() succeeds; after any error the writer refuses
/// further calls and the destructor removes the partial temporary file.
class SafetensorsWriter {
public:
  SafetensorsWriter() = default;
  ~SafetensorsWriter() = default;
  SafetensorsWriter(SafetensorsWriter &&) = default;
  SafetensorsWriter &operator=(SafetensorsWriter &&) = default;

  /// Validates the entries (unique, non-reserved names; non-negative
  /// dimensions), lays the tensors out and writes the header. The data of
  /// larger element types is placed first so that every tensor starts at a
  /// multiple of its element size, and the header is padded so the data
  /// buffer starts 8-aligned: mapped views are then naturally aligned.
  Status open(const std::string &path,
              const std::vector<SafetensorsEntry> &tensors,
              const std::map<std::string, std::string> &metadata = {});

  /// Starts receiving the bytes of tensor `name`.
  Status beginTensor(const std::string &name);
  /// Appends bytes to the current tensor; fails if that would exceed its size.
  Status append(const void *data, size_t size);
  /// beginTensor(name) followed by one append() of the tensor's full size.
  Status writeTensor(const std::string &name, const void *data);
  /// Checks that every tensor was written completely and publishes the file.
  Status close();
  /// The SHA-256 of the published file (64 hex digits), computed while it
  /// was written; empty when tensors were not written front to back in
  /// fileOrder(), or before close().
  const std::string &sha256Hex() const { return digest_; }

  /// Names in the order their data is laid out in the file. Writing tensors
  /// in this order produces a purely sequential write.
  std::vector<std::string> fileOrder() const;

private:
  struct Slot {
    std::string name;
    TensorDesc desc;
    uint64_t offset = 0; // Within the data buffer.
    uint64_t bytes = 0;
    uint64_t written = 0;
    bool begun = false;
  };

  Status fail(const std::string &msg);
  /// Marks the writer failed, stops the stream, removes the temporary file.
  Status failWith(Status st);
  Status finishCurrent();

  /// Writes and hashes the file while it is written front to back; declared
  /// after file_ so that its thread stops before the file closes.
  AtomicFile file_;
  std::unique_ptr<HashingWriter> stream_;
  /// Whether every byte so far went through stream_ in file order.
  bool sequential_ = true;
  std::string digest_;
  std::string path_;
  std::vector<Slot> slots_; // In file order.
  std::unordered_map<std::string, size_t> byName_;
  uint64_t dataStart_ = 0;
  int current_ = -1;
  bool failed_ = false;
  bool opened_ = false;
};

/// A tensor inside a mapped safetensors file.
struct SafetensorsTensor {
  std::string name;
  TensorDesc desc;
  /// Points into the mapping; valid while the SafetensorsFile lives. Aligned
  /// to the element size if the writer laid the file out that way (ours
  /// does; others usually do).
  const void *data = nullptr;
  size_t size = 0;
  /// Absolute offset of the data in the file.
  uint64_t fileOffset = 0;
};

/// A validated, memory-mapped safetensors file. Move-only.
class SafetensorsFile {
public:
  /// Maps `path` and validates its header completely: a sane header length,
  /// well-formed JSON without duplicate names, known dtypes, non-negative
  /// integer shapes, byte ranges that match shape x element size, lie within
  /// the file and tile the data buffer without gaps or overlaps.
  static Status open(const std::string &path, SafetensorsFile &out);

  /// Tensors ordered by their position in the file.
  const std::vector<SafetensorsTensor> &tensors() const { return tensors_; }
  /// nullptr when there is no tensor of that name.
  const SafetensorsTensor *find(const std::string &name) const;
  const std::map<std::string, std::string> &metadata() const {
    return metadata_;
  }
  const MappedFile &file() const { return file_; }
  /// Absolute offset of the data buffer (8 + header length).
  uint64_t dataOffset() const { return dataOffset_; }

private:
  MappedFile file_;
  std::vector<SafetensorsTensor> tensors_;
  std::unordered_map<std::string, size_t> byName_;
  std::map<std::string, std::string> metadata_;
  uint64_t dataOffset_ = 0;
};

} // namespace tpc

#endif // TPC_RUNTIME_IO_SAFETENSORS_H
