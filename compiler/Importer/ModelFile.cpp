//===- ModelFile.cpp - Reading ONNX files and their weights ---------------===//
//
// The model file is mapped, not read: protobuf parses the graph from the
// mapping, and each initializer's raw_data is located by a walk over the
// protobuf wire format so that later stages slice weights from the file
// instead of from memory.
//
//===----------------------------------------------------------------------===//
#include "compiler/Importer/ModelFile.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace tpc {
namespace {

/// A read-only mapping of a whole file.
class Mapping {
public:
  ~Mapping() {
    if (data_ && size_)
      ::munmap(const_cast<uint8_t *>(data_), size_);
  }
  bool open(const std::string &path, std::string &error) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      error = "cannot open '" + path + "': " + std::strerror(errno);
      return false;
    }
    struct stat st;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      error = "'" + path + "' is not a regular file";
      return false;
    }
    size_ = size_t(st.st_size);
    if (size_ > 0) {
      void *p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED) {
        ::close(fd);
        error = "cannot map '" + path + "': " + std::strerror(errno);
        return false;
      }
      data_ = static_cast<const uint8_t *>(p);
    }
    ::close(fd);
    return true;
  }
  const uint8_t *data() const { return data_; }
  size_t size() const { return size_; }

private:
  const uint8_t *data_ = nullptr;
  size_t size_ = 0;
};

/// Minimal protobuf wire-format reader over a byte range.
struct Wire {
  const uint8_t *p, *end;
  bool varint(uint64_t &v) {
    v = 0;
    for (int shift = 0; shift < 64 && p < end; shift += 7) {
      uint8_t b = *p++;
      v |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80))
        return true;
    }
    return false;
  }
  /// Skips one field of wire type `wt`; for LEN fields returns the payload.
  bool field(uint32_t wt, const uint8_t *&payload, uint64_t &len) {
    uint64_t v;
    switch (wt) {
    case 0:
      return varint(v);
    case 1:
      if (end - p < 8)
        return false;
      p += 8;
      return true;
    case 5:
      if (end - p < 4)
        return false;
      p += 4;
      return true;
    case 2:
      if (!varint(len) || uint64_t(end - p) < len)
        return false;
      payload = p;
      p += len;
      return true;
    default:
      return false;
    }
  }
  /// Calls fn(field number, payload, length) for each LEN field up to the
  /// end; false when a field is malformed (the walk stops there).
  template <typename Fn> bool forEachLen(Fn &&fn) {
    while (p < end) {
      uint64_t key;
      if (!varint(key))
        return false;
      const uint8_t *payload = nullptr;
      uint64_t len = 0;
      if (!field(uint32_t(key & 7), payload, len))
        return false;
      if ((key & 7) == 2)
        fn(key >> 3, payload, len);
    }
    return true;
  }
};

/// Records the file offset of raw_data (field 9) for each initializer
/// (GraphProto field 5) of the graph (ModelProto field 7).
void scanInitializers(const uint8_t *base, size_t size,
                      std::map<std::string, WeightLocation> &out,
                      const std::string &fileName) {
  // Each LEN field numbered `want` in [b, e).
  auto forEachLen = [](const uint8_t *b, const uint8_t *e, uint64_t want,
                       auto &&fn) {
    Wire{b, e}.forEachLen(
        [&](uint64_t number, const uint8_t *payload, uint64_t len) {
          if (number == want)
            fn(payload, len);
        });
  };
  forEachLen(base, base + size, 7, [&](const uint8_t *g, uint64_t glen) {
    forEachLen(g, g + glen, 5, [&](const uint8_t *t, uint64_t tlen) {
      std::string name;
      const uint8_t *raw = nullptr;
      uint64_t rawLen = 0;
      bool wellFormed = Wire{t, t + tlen}.forEachLen(
          [&](uint64_t number, const uint8_t *payload, uint64_t len) {
            if (number == 8)
              name.assign(reinterpret_cast<const char *>(payload), len);
            else if (number == 9) {
              raw = payload;
              rawLen = len;
            }
          });
      if (wellFormed && raw)
        out[name] = WeightLocation{fileName, int64_t(raw - base),
                                   int64_t(rawLen)};
    });
  });
}

} // namespace

bool loadModelFile(const std::string &path, ::onnx::ModelProto &model,
                   std::map<std::string, WeightLocation> &inlineWeights,
                   std::string &error) {
  Mapping map;
  if (!map.open(path, error))
    return false;
  google::protobuf::io::ArrayInputStream raw(map.data(), int(std::min<size_t>(
                                                             map.size(), INT_MAX)));
  google::protobuf::io::CodedInputStream in(&raw);
  in.SetTotalBytesLimit(INT_MAX);
  // A ModelProto starts with ir_version (field 1, varint): key byte 0x08.
  bool looksLikeModel = map.size() > 0 && map.data()[0] == 0x08;
  if (map.size() > size_t(INT_MAX)) {
    error = "'" + path + "' is larger than 2 GB; store the weights as ONNX "
            "external data (onnx.save(..., save_as_external_data=True))";
    return false;
  }
  if (!model.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage()) {
    error = looksLikeModel ? "'" + path + "' is truncated or corrupt: it "
                                         "does not parse as an ONNX model"
                           : "'" + path + "' is not an ONNX model";
    return false;
  }
  if (!model.has_graph() || model.ir_version() == 0) {
    error = "'" + path + "' is not an ONNX model (no graph or IR version)";
    return false;
  }
  std::string fileName = fs::path(path).filename().string();
  scanInitializers(map.data(), map.size(), inlineWeights, fileName);
  // The weights stay in the mapped file; drop the parsed copies.
  for (::onnx::TensorProto &t : *model.mutable_graph()->mutable_initializer())
    if (inlineWeights.count(t.name()))
      t.clear_raw_data();
  return true;
}

bool resolveExternalData(const ::onnx::TensorProto &tensor,
                         const std::string &modelDir, int64_t expectedBytes,
                         WeightLocation &loc, std::string &error,
                         std::string what) {
  std::string location;
  int64_t offset = 0, length = -1;
  if (what.empty())
    what = "external data of initializer '" + tensor.name() + "'";
  // ONNX writes these as plain decimal numbers; anything else ("0x40",
  // "1e3", "12abc", "+64") is refused rather than read as something else.
  auto decimal = [&](const std::string &key, const std::string &text,
                     int64_t &out) {
    bool ok = !text.empty() && text.size() <= 18 &&
              text.find_first_not_of("0123456789") == std::string::npos;
    if (ok)
      out = std::stoll(text);
    else
      error = what + ": " + key + " '" + text +
              "' is not a non-negative decimal number";
    return ok;
  };
  for (const auto &kv : tensor.external_data()) {
    if (kv.key() == "location")
      location = kv.value();
    else if (kv.key() == "offset" && !decimal("offset", kv.value(), offset))
      return false;
    else if (kv.key() == "length" && !decimal("length", kv.value(), length))
      return false;
  }
  if (location.empty()) {
    error = what + " has no location";
    return false;
  }
  fs::path rel(location);
  fs::path dir = fs::weakly_canonical(fs::path(modelDir));
  fs::path full = fs::weakly_canonical(dir / rel);
  auto [dirEnd, fullIt] =
      std::mismatch(dir.begin(), dir.end(), full.begin(), full.end());
  if (rel.is_absolute() || dirEnd != dir.end()) {
    error = what + ": location '" + location +
            "' leaves the model's folder '" + modelDir + "'";
    return false;
  }
  std::error_code ec;
  if (!fs::is_regular_file(full, ec)) {
    error = what + ": file '" + full.string() + "' does not exist";
    return false;
  }
  int64_t fileSize = int64_t(fs::file_size(full, ec));
  if (length < 0)
    length = expectedBytes;
  if (offset < 0 || length != expectedBytes) {
    error = what + ": length " + std::to_string(length) + " at offset " +
            std::to_string(offset) + " does not match the " +
            std::to_string(expectedBytes) + " bytes of its type";
    return false;
  }
  // Both are below 10^18, so the sum cannot overflow.
  if (offset + length > fileSize) {
    error = what + ": file '" + full.string() + "' is too short (" +
            std::to_string(fileSize) + " bytes, needs " +
            std::to_string(offset + length) + ")";
    return false;
  }
  loc.file = fs::relative(full, dir).string();
  loc.offset = offset;
  loc.length = length;
  return true;
}

} // namespace tpc
