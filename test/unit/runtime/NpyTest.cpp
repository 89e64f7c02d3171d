//===- NpyTest.cpp --------------------------------------------------------===//
#include "runtime/io/Npy.h"
#include "test/unit/runtime/TempDir.h"

#include "test/unit/runtime/StatusAssert.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace tpc;
using tpc::test::readAll;
using tpc::test::TempDir;

namespace {

/// A .npy image with the given version, header dict and data, padded the
/// way NumPy pads (unless `pad` is false).
std::string makeNpy(const std::string &dict, const std::string &data,
                    int major = 1, bool pad = true) {
  std::string header = dict;
  size_t preamble = major == 1 ? 10 : 12;
  if (pad)
    header += std::string((64 - (preamble + header.size() + 1) % 64) % 64, ' ');
  header += "\n";
  std::string out("\x93NUMPY", 6);
  out += char(major);
  out += char(0);
  for (size_t i = 0; i < (major == 1 ? 2u : 4u); ++i)
    out += char((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

std::string bytesOf(const void *p, size_t n) {
  return std::string(static_cast<const char *>(p), n);
}

void expectError(const std::string &path, const std::string &fragment) {
  NpyArray a;
  Status st = readNpy(path, a);
  ASSERT_FALSE(st) << "expected an error containing '" << fragment << "'";
  EXPECT_NE(st.message().find(path), std::string::npos) << st.message();
  EXPECT_NE(st.message().find(fragment), std::string::npos) << st.message();
}

} // namespace

TEST(Npy, RoundTripEveryDType) {
  TempDir dir;
  for (DType t : {DType::F32, DType::F64, DType::F16, DType::I64, DType::I32,
                  DType::I8, DType::U8, DType::Bool, DType::BF16}) {
    TensorDesc desc{t, {2, 3, 5}};
    std::vector<uint8_t> data(desc.bytes());
    for (size_t i = 0; i < data.size(); ++i)
      data[i] = uint8_t(t == DType::Bool ? i % 2 : i * 37 + 1);
    std::string path = dir.file(std::string(dtypeName(t)) + ".npy");
    ASSERT_OK(writeNpy(path, desc, data.data()));

    std::string raw = readAll(path);
    EXPECT_EQ(raw[6], 1) << "version 1.0 expected";
    size_t headerLen = uint8_t(raw[8]) | size_t(uint8_t(raw[9])) << 8;
    EXPECT_EQ((10 + headerLen) % 64, 0u) << "data must start 64-aligned";
    EXPECT_EQ(raw[10 + headerLen - 1], '\n');

    NpyArray a;
    ASSERT_OK(readNpy(path, a));
    EXPECT_EQ(a.desc.dtype, t);
    EXPECT_EQ(a.desc.shape, desc.shape);
    EXPECT_EQ(a.data, data);
  }
}

TEST(Npy, ShapesScalarsAndEmpty) {
  TempDir dir;
  float pi = 3.25f;
  ASSERT_OK(writeNpy(dir.file("s.npy"), TensorDesc{DType::F32, {}}, &pi));
  std::string raw = readAll(dir.file("s.npy"));
  EXPECT_NE(raw.find("'shape': ()"), std::string::npos);
  NpyArray a;
  ASSERT_OK(readNpy(dir.file("s.npy"), a));
  EXPECT_TRUE(a.desc.shape.empty());
  ASSERT_EQ(a.data.size(), 4u);
  EXPECT_EQ(std::memcmp(a.data.data(), &pi, 4), 0);

  int64_t v[3] = {1, -2, 3};
  ASSERT_OK(writeNpy(dir.file("v.npy"), TensorDesc{DType::I64, {3}}, v));
  EXPECT_NE(readAll(dir.file("v.npy")).find("'shape': (3,)"),
            std::string::npos);

  ASSERT_OK(
      writeNpy(dir.file("e.npy"), TensorDesc{DType::F32, {4, 0}}, nullptr));
  ASSERT_OK(readNpy(dir.file("e.npy"), a));
  EXPECT_EQ(a.desc.shape, (Shape{4, 0}));
  EXPECT_TRUE(a.data.empty());
}

TEST(Npy, LongHeaderUsesVersion2) {
  TempDir dir;
  // 30000 dimensions of size 1 need a header longer than 65535 bytes.
  TensorDesc desc{DType::U8, Shape(30000, 1)};
  uint8_t one = 7;
  ASSERT_OK(writeNpy(dir.file("long.npy"), desc, &one));
  std::string raw = readAll(dir.file("long.npy"));
  EXPECT_EQ(raw[6], 2);
  NpyArray a;
  ASSERT_OK(readNpy(dir.file("long.npy"), a));
  EXPECT_EQ(a.desc.shape.size(), 30000u);
  EXPECT_EQ(a.data, std::vector<uint8_t>{7});
}

TEST(Npy, ReadsNumpyVariants) {
  TempDir dir;
  int32_t v[4] = {1, 2, 3, 4};
  std::string data = bytesOf(v, sizeof(v));
  NpyArray a;

  // Version 2.0, double quotes, different key order, no padding, Python 2
  // long suffixes, '=' native byte order.
  ASSERT_OK(readNpy(
      dir.write("v2.npy", makeNpy("{'shape': (2L, 2L), 'fortran_order': "
                                  "False, \"descr\": \"=i4\"}",
                                  data, 2, false)),
      a));
  EXPECT_EQ(a.desc.dtype, DType::I32);
  EXPECT_EQ(a.desc.shape, (Shape{2, 2}));
  EXPECT_EQ(a.data.size(), 16u);

  // Fortran order of a 1-d array is the same layout as C order.
  ASSERT_OK(
      readNpy(dir.write("f1.npy", makeNpy("{'descr': '<i4', 'fortran_order': "
                                          "True, 'shape': (4,), }",
                                          data)),
              a));
  // One-byte types with any byte-order character.
  ASSERT_OK(readNpy(
      dir.write("u1.npy", makeNpy("{'descr': '|u1', 'fortran_order': False, "
                                  "'shape': (4,), }",
                                  "abcd")),
      a));
  EXPECT_EQ(a.desc.dtype, DType::U8);
}

TEST(Npy, RejectsBadFiles) {
  TempDir dir;
  float v[6] = {};
  std::string data = bytesOf(v, sizeof(v));
  auto npy = [&](const std::string &name, const std::string &descr,
                 const std::string &extra = "",
                 const std::string &shape = "(2, 3)",
                 const std::string &payload = "") {
    return dir.write(name, makeNpy("{'descr': '" + descr +
                                       "', 'fortran_order': False, 'shape': " +
                                       shape + ", " + extra + "}",
                                   payload.empty() ? data : payload));
  };

  expectError(dir.write("magic.npy", "PK\x03\x04 not numpy at all"),
              "bad magic");
  expectError(dir.write("short.npy", "\x93NUMPY"), "bad magic");
  expectError(npy("big.npy", ">f4"), "'>f4'");
  expectError(npy("big.npy", ">f4"), "big-endian");
  expectError(npy("complex.npy", "<c8"), "'<c8'");
  expectError(npy("object.npy", "|O"), "'|O'");
  expectError(dir.write("struct.npy",
                        makeNpy("{'descr': [('a', '<f4')], 'fortran_order': "
                                "False, 'shape': (2,), }",
                                std::string(8, '\0'))),
              "structured");
  expectError(dir.write("fortran.npy",
                        makeNpy("{'descr': '<f4', 'fortran_order': True, "
                                "'shape': (2, 3), }",
                                data)),
              "Fortran order");
  expectError(npy("trunc.npy", "<f4", "", "(2, 3)", data.substr(0, 20)),
              "truncated");
  expectError(npy("extra.npy", "<f4", "", "(2, 3)", data + "xx"),
              "unexpected bytes");
  expectError(npy("key.npy", "<f4", "'extra': False, "),
              "unexpected header key");
  expectError(npy("neg.npy", "<f4", "", "(-2, 3)"), "malformed header");
  expectError(dir.write("nokey.npy",
                        makeNpy("{'descr': '<f4', 'shape': (6,), }", data)),
              "lacks");
  expectError(npy("huge.npy", "<f4", "", "(4294967296, 4294967296)"),
              "too large");
  // Past int64 but within uint64.
  expectError(npy("huge2.npy", "|b1", "", "(3037000500, 3037000500)"),
              "too large");
  // A zero dimension does not excuse non-zero ones that overflow (numpy:
  // "array is too big"); found by the npy fuzzer, whose input this is.
  expectError(dir.write("zerohuge.npy",
                        makeNpy("{'descr': '|b1', 'fortran_order': False, "
                                "'shape': (6314046677573435392, 1, 2, 0), }",
                                "")),
              "too large");
  expectError(dir.write("version.npy", makeNpy("{}", "", 4)),
              "unsupported .npy format version 4.0");
  // Header length pointing past the end of the file.
  std::string cut = makeNpy("{'descr': '<f4', 'fortran_order': False, "
                            "'shape': (6,), }",
                            "");
  expectError(dir.write("cut.npy", cut.substr(0, 30)), "truncated header");
  expectError(dir.file("absent.npy"), "No such file");
}

TEST(Npy, EmptyWithLargeDimensions) {
  // An empty tensor whose other dimensions are large but multiply within
  // int64 is a valid file (numpy writes it): zero elements, zero bytes.
  TempDir dir;
  std::string path = dir.write(
      "empty.npy", makeNpy("{'descr': '<f4', 'fortran_order': False, "
                           "'shape': (576460752303423488, 0, 2), }",
                           ""));
  NpyArray a;
  ASSERT_OK(readNpy(path, a));
  EXPECT_EQ(a.desc.numel(), 0);
  EXPECT_EQ(a.desc.bytes(), 0u);
  EXPECT_TRUE(a.data.empty());
  EXPECT_EQ(numElements({INT64_MAX, 2, 0}), 0);
  EXPECT_EQ(checkedByteSize(Shape{int64_t(1) << 58, 0, 3}, 4), 0u);
  EXPECT_FALSE(checkedByteSize(Shape{int64_t(1) << 62, 0, 3}, 4));
}

TEST(Npy, Bfloat16IsTwoByteOpaque) {
  // What NumPy writes for an ml_dtypes.bfloat16 array.
  TempDir dir;
  std::string raw = makeNpy("{'descr': '<V2', 'fortran_order': False, "
                            "'shape': (2,), }",
                            std::string("\x80\x3f\x00\x40", 4));
  NpyArray a;
  ASSERT_OK(readNpy(dir.write("bf.npy", raw), a));
  EXPECT_EQ(a.desc.dtype, DType::BF16);
  EXPECT_EQ(a.desc.shape, std::vector<int64_t>{2});
  ASSERT_EQ(a.data.size(), 4u);
  EXPECT_EQ(a.data[1], 0x3f); // 1.0 in bf16 is 0x3f80
  EXPECT_EQ(std::string(npyDescr(DType::BF16)), "<V2");
}

TEST(Npy, WriteErrors) {
  TempDir dir;
  uint16_t v = 0;
  Status st = writeNpy(dir.file("x/y.npy"), TensorDesc{DType::U8, {1}}, &v);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("x/y.npy"), std::string::npos);
}
