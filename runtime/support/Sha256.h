//===- Sha256.h - Streaming SHA-256 -----------------------------*- C++ -*-===//
//
// SHA-256 (FIPS 180-4) for fingerprinting weights and engine files: an engine
// records the digest of the weights it was built from so that loading it
// against different weights fails loudly instead of computing garbage.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_SUPPORT_SHA256_H
#define TPC_RUNTIME_SUPPORT_SHA256_H

#include "kernels/Types.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tpc {

class Sha256 {
public:
  using Digest = std::array<uint8_t, 32>;

  Sha256() { reset(); }

  /// Starts a new message.
  void reset();
  /// Appends `size` bytes to the message.
  void update(const void *data, size_t size);
  void update(std::string_view bytes) { update(bytes.data(), bytes.size()); }
  /// Completes the message and returns its digest; the object is reset and
  /// can hash another message.
  Digest finish();
  /// finish(), as 64 lower-case hex digits.
  std::string finishHex() { return toHex(finish()); }

  static std::string toHex(const Digest &digest);
  /// One-shot digest of a buffer.
  static Digest hash(const void *data, size_t size);
  static std::string hashHex(std::string_view bytes);

private:
  /// Runs `blocks` 64-byte blocks through the compression function.
  void compress(const uint8_t *data, size_t blocks);

  uint32_t state_[8];
  uint8_t buffer_[64];
  size_t buffered_ = 0;
  uint64_t totalBytes_ = 0;
};

namespace detail {
/// The round constants: the first 32 bits of the fractional parts of the
/// cube roots of the first 64 primes (FIPS 180-4, section 4.2.2), 16-byte
/// aligned for vector loads.
alignas(16) extern const uint32_t kSha256Round[64];

/// The compression function over whole blocks: portable C++, and with the
/// x86 SHA extensions (false, doing nothing, where the CPU lacks them).
/// Sha256 uses the second where it can; tests compare the two.
void sha256CompressPortable(uint32_t state[8], const uint8_t *data,
                            size_t blocks);
bool sha256CompressHardware(uint32_t state[8], const uint8_t *data,
                            size_t blocks);
} // namespace detail

/// Hashes the file at `path`, reading it in chunks so that files larger than
/// memory can be hashed; `hexOut` receives 64 lower-case hex digits.
Status sha256File(const std::string &path, std::string &hexOut);

} // namespace tpc

#endif // TPC_RUNTIME_SUPPORT_SHA256_H
