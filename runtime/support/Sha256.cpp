//===- Sha256.cpp ---------------------------------------------------------===//
#include "runtime/support/Sha256.h"

#include "runtime/support/UniqueFd.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>
#include <vector>

namespace tpc {

namespace detail {
alignas(16) const uint32_t kSha256Round[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
} // namespace detail

namespace {

inline uint32_t rotr(uint32_t x, unsigned n) {
  return (x >> n) | (x << (32 - n));
}

inline uint32_t loadBigEndian32(const uint8_t *p) {
  return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) |
         (uint32_t(p[2]) << 8) | uint32_t(p[3]);
}

} // namespace

void Sha256::reset() {
  // First 32 bits of the fractional parts of the square roots of the first
  // eight primes (section 5.3.3).
  static constexpr uint32_t kInit[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372,
                                        0xa54ff53a, 0x510e527f, 0x9b05688c,
                                        0x1f83d9ab, 0x5be0cd19};
  std::memcpy(state_, kInit, sizeof(state_));
  buffered_ = 0;
  totalBytes_ = 0;
}

namespace {

/// One block through the FIPS 180-4 compression function.
void compressOne(uint32_t state[8], const uint8_t *block) {
  uint32_t w[64];
  for (int i = 0; i < 16; ++i)
    w[i] = loadBigEndian32(block + 4 * i);
  for (int i = 16; i < 64; ++i) {
    uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
  uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
  for (int i = 0; i < 64; ++i) {
    uint32_t s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
    uint32_t ch = (e & f) ^ (~e & g);
    uint32_t t1 = h + s1 + ch + detail::kSha256Round[i] + w[i];
    uint32_t s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
    uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
    uint32_t t2 = s0 + maj;
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  state[0] += a;
  state[1] += b;
  state[2] += c;
  state[3] += d;
  state[4] += e;
  state[5] += f;
  state[6] += g;
  state[7] += h;
}

} // namespace

namespace detail {

void sha256CompressPortable(uint32_t state[8], const uint8_t *data,
                            size_t blocks) {
  for (; blocks > 0; --blocks, data += 64)
    compressOne(state, data);
}

} // namespace detail

void Sha256::compress(const uint8_t *data, size_t blocks) {
  if (!detail::sha256CompressHardware(state_, data, blocks))
    detail::sha256CompressPortable(state_, data, blocks);
}

void Sha256::update(const void *data, size_t size) {
  const uint8_t *p = static_cast<const uint8_t *>(data);
  totalBytes_ += size;
  if (buffered_ > 0) {
    size_t take = std::min(size, sizeof(buffer_) - buffered_);
    std::memcpy(buffer_ + buffered_, p, take);
    buffered_ += take;
    p += take;
    size -= take;
    if (buffered_ < sizeof(buffer_))
      return;
    compress(buffer_, 1);
    buffered_ = 0;
  }
  // Whole blocks are compressed straight from the caller's memory.
  const size_t blocks = size / 64;
  compress(p, blocks);
  p += blocks * 64;
  size -= blocks * 64;
  if (size > 0) {
    std::memcpy(buffer_, p, size);
    buffered_ = size;
  }
}

Sha256::Digest Sha256::finish() {
  uint64_t bitLength = totalBytes_ * 8;
  // Padding: a single 1 bit, zeros up to 56 mod 64, then the 64-bit
  // big-endian message length in bits.
  uint8_t pad[72] = {0x80};
  size_t padLength = (buffered_ < 56 ? 56 : 120) - buffered_;
  for (int i = 0; i < 8; ++i)
    pad[padLength + i] = uint8_t(bitLength >> (56 - 8 * i));
  update(pad, padLength + 8);

  Digest digest;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 4; ++j)
      digest[4 * i + j] = uint8_t(state_[i] >> (24 - 8 * j));
  reset();
  return digest;
}

std::string Sha256::toHex(const Digest &digest) {
  static const char kHex[] = "0123456789abcdef";
  std::string out(64, '0');
  for (size_t i = 0; i < digest.size(); ++i) {
    out[2 * i] = kHex[digest[i] >> 4];
    out[2 * i + 1] = kHex[digest[i] & 0xf];
  }
  return out;
}

Sha256::Digest Sha256::hash(const void *data, size_t size) {
  Sha256 h;
  h.update(data, size);
  return h.finish();
}

std::string Sha256::hashHex(std::string_view bytes) {
  return toHex(hash(bytes.data(), bytes.size()));
}

Status sha256File(const std::string &path, std::string &hexOut) {
  UniqueFd fd;
  TPC_RETURN_IF_ERROR(openForReading(path, fd));
  // Plain reads rather than a mapping: the file is touched once, and reads
  // work for anything (pipes included) without tying up address space.
  (void)::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  std::vector<uint8_t> chunk(size_t(4) << 20);
  Sha256 h;
  for (;;) {
    ssize_t n = ::read(fd.get(), chunk.data(), chunk.size());
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return Status::error(path + ": read failed: " + std::strerror(errno));
    }
    if (n == 0)
      break;
    h.update(chunk.data(), size_t(n));
  }
  hexOut = h.finishHex();
  return Status::ok();
}

} // namespace tpc
