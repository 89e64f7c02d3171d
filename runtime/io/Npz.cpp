//===- Npz.cpp - NumPy .npz archives --------------------------------------===//
#include "runtime/io/Npz.h"

#include "runtime/support/MappedFile.h"

#include <zlib.h>

#include <cstring>

namespace tpc {

namespace {

uint64_t le(const uint8_t *p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}

constexpr uint32_t kEndOfCentralDir = 0x06054b50;
constexpr uint32_t kZip64EndOfCentralDir = 0x06064b50;
constexpr uint32_t kZip64Locator = 0x07064b50;
constexpr uint32_t kCentralHeader = 0x02014b50;
constexpr uint32_t kLocalHeader = 0x04034b50;

struct Member {
  std::string name;
  uint16_t method = 0;
  uint32_t crc = 0;
  uint64_t compressed = 0, size = 0, localOffset = 0;
};

/// Replaces 0xFFFFFFFF fields by the zip64 extra field's values, in order.
bool applyZip64(const uint8_t *extra, size_t len, Member &m, bool sizeMax,
                bool compMax, bool offMax) {
  size_t i = 0;
  while (i + 4 <= len) {
    uint16_t id = uint16_t(le(extra + i, 2)), n = uint16_t(le(extra + i + 2, 2));
    if (i + 4 + n > len)
      return false;
    if (id == 1) {
      const uint8_t *p = extra + i + 4;
      size_t left = n;
      auto take = [&](uint64_t &field) {
        if (left < 8)
          return false;
        field = le(p, 8);
        p += 8;
        left -= 8;
        return true;
      };
      return (!sizeMax || take(m.size)) && (!compMax || take(m.compressed)) &&
             (!offMax || take(m.localOffset));
    }
    i += 4 + n;
  }
  return !sizeMax && !compMax && !offMax;
}

Status fail(const std::string &path, const std::string &what) {
  return Status::error(path + ": " + what);
}

} // namespace

Status readNpz(const std::string &path,
               std::vector<std::pair<std::string, NpyArray>> &out) {
  out.clear();
  MappedFile file;
  TPC_RETURN_IF_ERROR(MappedFile::open(path, file));
  const uint8_t *d = file.data();
  const uint64_t size = file.size();
  // The end-of-central-directory record: 22 bytes and a comment of at most
  // 65535, at the end.
  int64_t eocd = -1;
  for (int64_t i = int64_t(size) - 22; i >= 0 && i >= int64_t(size) - 22 - 65535;
       --i)
    if (le(d + i, 4) == kEndOfCentralDir) {
      eocd = i;
      break;
    }
  if (eocd < 0)
    return fail(path, "not a .npz (zip) archive: no end of central directory");
  uint64_t count = le(d + eocd + 10, 2);
  uint64_t dirSize = le(d + eocd + 12, 4), dirOffset = le(d + eocd + 16, 4);
  if (count == 0xFFFF || dirOffset == 0xFFFFFFFFu || dirSize == 0xFFFFFFFFu) {
    if (eocd < 20 || le(d + eocd - 20, 4) != kZip64Locator)
      return fail(path, "zip64 archive without a zip64 locator");
    uint64_t z = le(d + eocd - 20 + 8, 8);
    if (z + 56 > size || le(d + z, 4) != kZip64EndOfCentralDir)
      return fail(path, "bad zip64 end of central directory");
    count = le(d + z + 32, 8);
    dirSize = le(d + z + 40, 8);
    dirOffset = le(d + z + 48, 8);
  }
  if (dirOffset > size || dirSize > size - dirOffset)
    return fail(path, "central directory outside the file (truncated?)");
  uint64_t pos = dirOffset;
  for (uint64_t k = 0; k < count; ++k) {
    if (pos + 46 > dirOffset + dirSize || le(d + pos, 4) != kCentralHeader)
      return fail(path, "bad central directory entry " + std::to_string(k));
    Member m;
    m.method = uint16_t(le(d + pos + 10, 2));
    m.crc = uint32_t(le(d + pos + 16, 4));
    m.compressed = le(d + pos + 20, 4);
    m.size = le(d + pos + 24, 4);
    uint64_t nameLen = le(d + pos + 28, 2), extraLen = le(d + pos + 30, 2),
             commentLen = le(d + pos + 32, 2);
    m.localOffset = le(d + pos + 42, 4);
    if (pos + 46 + nameLen + extraLen + commentLen > dirOffset + dirSize)
      return fail(path, "bad central directory entry " + std::to_string(k));
    m.name.assign(reinterpret_cast<const char *>(d + pos + 46), nameLen);
    if (!applyZip64(d + pos + 46 + nameLen, extraLen, m,
                    m.size == 0xFFFFFFFFu, m.compressed == 0xFFFFFFFFu,
                    m.localOffset == 0xFFFFFFFFu))
      return fail(path, "member '" + m.name + "': bad zip64 sizes");
    pos += 46 + nameLen + extraLen + commentLen;

    const std::string where = "member '" + m.name + "'";
    if (m.name.size() < 5 || m.name.compare(m.name.size() - 4, 4, ".npy"))
      return fail(path, where + " is not a .npy array");
    if (m.localOffset + 30 > size || le(d + m.localOffset, 4) != kLocalHeader)
      return fail(path, where + ": bad local header");
    uint64_t data = m.localOffset + 30 + le(d + m.localOffset + 26, 2) +
                    le(d + m.localOffset + 28, 2);
    if (data > size || m.compressed > size - data)
      return fail(path, where + ": data outside the file (truncated?)");
    if (m.size > (uint64_t(1) << 40))
      return fail(path, where + ": too large");
    std::vector<uint8_t> bytes(m.size);
    if (m.method == 0) {
      if (m.compressed != m.size)
        return fail(path, where + ": stored sizes disagree");
      std::memcpy(bytes.data(), d + data, m.size);
    } else if (m.method == 8) {
      z_stream zs{};
      if (inflateInit2(&zs, -MAX_WBITS) != Z_OK)
        return fail(path, where + ": cannot start inflate");
      zs.next_in = const_cast<Bytef *>(d + data);
      zs.avail_in = uInt(m.compressed);
      zs.next_out = bytes.data();
      zs.avail_out = uInt(m.size);
      int rc = inflate(&zs, Z_FINISH);
      uint64_t produced = zs.total_out;
      inflateEnd(&zs);
      if (rc != Z_STREAM_END || produced != m.size)
        return fail(path, where + ": corrupt deflate data");
    } else {
      return fail(path, where + ": compression method " +
                            std::to_string(m.method) +
                            " (only stored and deflate, as numpy writes)");
    }
    if (uint32_t(crc32(0, bytes.data(), uInt(bytes.size()))) != m.crc)
      return fail(path, where + ": CRC mismatch");
    NpyHeader header;
    TPC_RETURN_IF_ERROR(
        parseNpyHeader(bytes.data(), bytes.size(), path + ": " + where, header));
    NpyArray a;
    a.desc = header.desc;
    a.data.assign(bytes.begin() + header.dataOffset, bytes.end());
    out.emplace_back(m.name.substr(0, m.name.size() - 4), std::move(a));
  }
  return Status::ok();
}

} // namespace tpc
