//===- SupportTest.cpp - MappedFile, Sha256, AtomicFile, Half -------------===//
#include "runtime/support/AtomicFile.h"
#include "runtime/support/HashingWriter.h"
#include "kernels/Half.h"
#include "runtime/support/MappedFile.h"
#include "runtime/support/Sha256.h"
#include "test/unit/runtime/TempDir.h"

#include "test/unit/runtime/StatusAssert.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace tpc;
using tpc::test::TempDir;

//===----------------------------------------------------------------------===//
// Half
//===----------------------------------------------------------------------===//

TEST(Half, EveryHalfSurvivesAFloatRoundTrip) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = halfToFloat(uint16_t(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(f)))) << std::hex << h;
      continue;
    }
    EXPECT_EQ(floatToHalf(f), h) << std::hex << h;
  }
}

TEST(Half, KnownValues) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00); // Rounds to infinity.
  EXPECT_EQ(floatToHalf(65519.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(0x1p-24f), 0x0001); // Smallest subnormal.
  EXPECT_EQ(floatToHalf(0x1p-25f), 0x0000); // Tie rounds to even (zero).
  EXPECT_EQ(floatToHalf(0x1.8p-25f), 0x0001);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  // 1 + 2^-11 is halfway between 1 and the next half: ties go to even.
  EXPECT_EQ(floatToHalf(1.0f + 0x1p-11f), 0x3c00);
  EXPECT_EQ(floatToHalf(1.0f + 0x1p-10f + 0x1p-11f), 0x3c02);
  EXPECT_EQ(halfToFloat(0x3555), 0x1.554p-2f);
  EXPECT_EQ(floatToHalf(INFINITY), 0x7c00);
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(NAN))));
}

TEST(Half, Bfloat16) {
  EXPECT_EQ(floatToBf16(1.0f), 0x3f80);
  EXPECT_EQ(bf16ToFloat(0x3f80), 1.0f);
  EXPECT_EQ(floatToBf16(-3.0f), 0xc040);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties go to even.
  EXPECT_EQ(floatToBf16(1.0f + 0x1p-8f), 0x3f80);
  EXPECT_EQ(floatToBf16(1.0f + 0x1p-7f + 0x1p-8f), 0x3f82);
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBf16(NAN))));
  for (uint32_t b = 0; b < 0x10000; ++b) {
    float f = bf16ToFloat(uint16_t(b));
    if (!std::isnan(f))
      EXPECT_EQ(floatToBf16(f), b);
  }
}

//===----------------------------------------------------------------------===//
// Sha256
//===----------------------------------------------------------------------===//

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(Sha256::hashHex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256::hashHex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256::hashHex(
                "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256::hashHex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, HardwareAndPortableAgree) {
  // Both compression functions on many blocks of varied bytes; where the
  // CPU has no SHA extensions the hardware path reports so and the known
  // vectors above cover the portable one.
  std::vector<uint8_t> data(64 * 257);
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = uint8_t((i * 2654435761u) >> 13);
  uint32_t a[8] = {1, 2, 3, 4, 5, 6, 7, 8}, b[8];
  std::memcpy(b, a, sizeof(a));
  detail::sha256CompressPortable(a, data.data(), 257);
  if (!detail::sha256CompressHardware(b, data.data(), 257))
    GTEST_SKIP() << "this CPU has no SHA extensions";
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(a[i], b[i]) << "state word " << i;
}

TEST(Sha256, StreamingMatchesOneShot) {
  std::string msg;
  for (int i = 0; i < 1000; ++i)
    msg += char(i * 31 + 7);
  std::string expected = Sha256::hashHex(msg);
  // Chunk sizes that straddle the 64-byte block and the 56-byte padding
  // boundary in every way.
  for (size_t chunk : {1, 3, 55, 56, 63, 64, 65, 127, 1000}) {
    Sha256 h;
    for (size_t i = 0; i < msg.size(); i += chunk)
      h.update(msg.data() + i, std::min(chunk, msg.size() - i));
    EXPECT_EQ(h.finishHex(), expected) << "chunk " << chunk;
  }
  // Lengths around the padding boundary against the one-shot path.
  Sha256 h;
  h.update("abc");
  EXPECT_EQ(h.finishHex(), Sha256::hashHex("abc"));
  EXPECT_EQ(h.finishHex(), Sha256::hashHex("")); // finish() resets.
}

TEST(Sha256, MillionAsInChunks) {
  Sha256 h;
  std::string chunk(4096, 'a');
  size_t left = 1000000;
  while (left > 0) {
    size_t n = std::min(left, chunk.size());
    h.update(chunk.data(), n);
    left -= n;
  }
  EXPECT_EQ(h.finishHex(),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, File) {
  TempDir dir;
  // Larger than the reader's 4 MiB chunk, so several reads are needed.
  std::string big(9u << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i)
    big[i] = char(i * 2654435761u >> 24);
  std::string hex;
  ASSERT_OK(sha256File(dir.write("big.bin", big), hex));
  EXPECT_EQ(hex, Sha256::hashHex(big));
  ASSERT_OK(sha256File(dir.write("empty.bin", ""), hex));
  EXPECT_EQ(hex, Sha256::hashHex(""));

  Status st = sha256File(dir.file("missing.bin"), hex);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("missing.bin"), std::string::npos);
  EXPECT_NE(st.message().find("No such file"), std::string::npos);
  EXPECT_EQ(st.code(), StatusCode::NotFound);
  st = sha256File(dir.path(), hex);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find(dir.path()), std::string::npos);
}

//===----------------------------------------------------------------------===//
// Status
//===----------------------------------------------------------------------===//

TEST(HashingWriter, WritesInOrderAndHashesEverything) {
  std::string msg;
  for (int i = 0; i < 100000; ++i)
    msg += char(i * 131 + i / 7);
  // Buffers smaller than, equal to and larger than the appends, and appends
  // that straddle buffers in every way; the sink sees each byte once, at its
  // offset, and the digest covers them all.
  for (size_t bufferBytes : {1, 7, 64, 4096, 1 << 20})
    for (size_t chunk : {1, 63, 64, 1000, 65536, 100000}) {
      std::string file(5, '?');
      size_t calls = 0;
      HashingWriter w(
          [&](uint64_t at, const void *data, size_t size) {
            EXPECT_LE(size, bufferBytes);
            if (file.size() < at + size)
              file.resize(at + size, '?');
            std::memcpy(&file[at], data, size);
            ++calls;
            return Status::ok();
          },
          5, bufferBytes);
      for (size_t i = 0; i < msg.size(); i += chunk)
        ASSERT_OK(w.append(msg.data() + i, std::min(chunk, msg.size() - i)));
      EXPECT_EQ(w.end(), 5 + msg.size());
      ASSERT_OK(w.flush());
      EXPECT_EQ(file, "?????" + msg)
          << "buffer " << bufferBytes << ", chunk " << chunk;
      EXPECT_EQ(calls, (msg.size() + bufferBytes - 1) / bufferBytes);
      EXPECT_EQ(w.finishHex(), Sha256::hashHex(msg));
    }
}

TEST(HashingWriter, ReportsTheSinksError) {
  HashingWriter w(
      [](uint64_t at, const void *, size_t) {
        return at >= 8 ? Status::error("f: write failed: No space left")
                       : Status::ok();
      },
      0, 8);
  ASSERT_OK(w.append("12345678", 8)); // The first buffer is written.
  ASSERT_OK(w.append("abc", 3));
  Status st = w.flush();
  ASSERT_FALSE(st);
  EXPECT_EQ(st.message(), "f: write failed: No space left");
}

TEST(HashingWriter, DroppedUnflushedStopsItsThread) {
  size_t written = 0;
  {
    HashingWriter w(
        [&](uint64_t, const void *, size_t size) {
          written += size;
          return Status::ok();
        },
        0, 4);
    ASSERT_OK(w.append("0123456789", 10));
  }
  EXPECT_EQ(written, 8u); // Two whole buffers; the last two bytes dropped.
}

TEST(Status, CodesAndContext) {
  Status ok = Status::ok();
  EXPECT_TRUE(ok.isOk());
  EXPECT_EQ(ok.code(), StatusCode::Ok);
  EXPECT_TRUE(ok.withContext("x: ").isOk());

  Status bad = Status::outOfRange("index 9");
  EXPECT_FALSE(bad);
  EXPECT_EQ(bad.code(), StatusCode::OutOfRange);
  Status wrapped = bad.withContext("step 3 (Gather): ");
  EXPECT_EQ(wrapped.code(), StatusCode::OutOfRange);
  EXPECT_EQ(wrapped.message(), "step 3 (Gather): index 9");

  // An unclassified error, and an error made with the Ok code, are Unknown:
  // a failed Status never reads as success.
  EXPECT_EQ(Status::error("x").code(), StatusCode::Unknown);
  Status notOk = Status::error(StatusCode::Ok, "x");
  EXPECT_FALSE(notOk.isOk());
  EXPECT_EQ(notOk.code(), StatusCode::Unknown);

  EXPECT_STREQ(statusCodeName(StatusCode::InvalidArgument),
               "INVALID_ARGUMENT");
  EXPECT_STREQ(statusCodeName(StatusCode::DeadlineExceeded),
               "DEADLINE_EXCEEDED");
  EXPECT_STREQ(statusCodeName(StatusCode::Ok), "OK");
}

//===----------------------------------------------------------------------===//
// MappedFile
//===----------------------------------------------------------------------===//

TEST(MappedFile, MapsContents) {
  TempDir dir;
  std::string path = dir.write("data.bin", "hello, mapped world");
  MappedFile f;
  ASSERT_OK(MappedFile::open(path, f));
  ASSERT_TRUE(f.isOpen());
  EXPECT_EQ(f.path(), path);
  ASSERT_EQ(f.size(), 19u);
  EXPECT_EQ(std::memcmp(f.data(), "hello, mapped world", 19), 0);
  EXPECT_OK(f.adviseSequential());
  EXPECT_OK(f.adviseWillNeed(3, 5));
  EXPECT_OK(f.adviseDontNeed(0, 19));
  // Still readable after MADV_DONTNEED: the pages come back from the file.
  EXPECT_EQ(std::memcmp(f.data(), "hello", 5), 0);
  // Out-of-range hints are ignored rather than passed to the kernel.
  EXPECT_OK(f.adviseWillNeed(100, 5));

  MappedFile moved(std::move(f));
  EXPECT_FALSE(f.isOpen());
  EXPECT_EQ(f.data(), nullptr);
  ASSERT_TRUE(moved.isOpen());
  EXPECT_EQ(std::memcmp(moved.data(), "hello", 5), 0);
  MappedFile assigned;
  assigned = std::move(moved);
  EXPECT_EQ(assigned.size(), 19u);
  assigned.close();
  EXPECT_FALSE(assigned.isOpen());
}

TEST(MappedFile, EmptyFile) {
  TempDir dir;
  MappedFile f;
  ASSERT_OK(MappedFile::open(dir.write("empty", ""), f));
  EXPECT_TRUE(f.isOpen());
  EXPECT_EQ(f.size(), 0u);
  EXPECT_EQ(f.data(), nullptr);
  EXPECT_OK(f.adviseSequential());
}

TEST(MappedFile, Errors) {
  TempDir dir;
  MappedFile f;
  Status st = MappedFile::open(dir.file("nope.bin"), f);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find(dir.file("nope.bin")), std::string::npos);
  EXPECT_NE(st.message().find("No such file or directory"), std::string::npos);
  EXPECT_EQ(st.code(), StatusCode::NotFound);
  EXPECT_FALSE(f.isOpen());

  st = MappedFile::open(dir.path(), f);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("not a regular file"), std::string::npos);
}

//===----------------------------------------------------------------------===//
// AtomicFile
//===----------------------------------------------------------------------===//

TEST(AtomicFile, CommitPublishesDiscardLeavesNothing) {
  TempDir dir;
  std::string path = dir.file("out.bin");
  {
    AtomicFile f;
    ASSERT_OK(f.open(path));
    ASSERT_OK(f.write("abc", 3));
    ASSERT_OK(f.writeAt(6, "xyz", 3));
    ASSERT_OK(f.writeAt(3, "def", 3));
    EXPECT_TRUE(dir.list().size() == 1 && dir.list()[0] != "out.bin");
    ASSERT_OK(f.commit());
  }
  EXPECT_EQ(tpc::test::readAll(path), "abcdefxyz");
  EXPECT_EQ(dir.list(), std::vector<std::string>{"out.bin"});

  {
    AtomicFile f;
    ASSERT_OK(f.open(path));
    ASSERT_OK(f.write("garbage", 7));
    // Destroyed without commit: the old file stays, the temporary goes.
  }
  EXPECT_EQ(tpc::test::readAll(path), "abcdefxyz");
  EXPECT_EQ(dir.list(), std::vector<std::string>{"out.bin"});

  AtomicFile f;
  Status st = f.open(dir.file("no-such-dir/out.bin"));
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("no-such-dir/out.bin"), std::string::npos);
}
