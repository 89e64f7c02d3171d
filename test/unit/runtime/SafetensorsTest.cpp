//===- SafetensorsTest.cpp ------------------------------------------------===//
#include "runtime/io/Safetensors.h"
#include "runtime/support/Sha256.h"
#include "test/unit/runtime/TempDir.h"

#include "test/unit/runtime/StatusAssert.h"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>

using namespace tpc;
using tpc::test::readAll;
using tpc::test::TempDir;

namespace {

/// A safetensors image from a header text and a data buffer.
std::string makeFile(std::string header, const std::string &buffer,
                     bool pad = true) {
  if (pad)
    header.append((8 - header.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i)
    out[size_t(i)] = char((uint64_t(header.size()) >> (8 * i)) & 0xff);
  return out + header + buffer;
}

void expectError(const std::string &path, const std::string &fragment) {
  SafetensorsFile f;
  Status st = SafetensorsFile::open(path, f);
  ASSERT_FALSE(st) << "expected an error containing '" << fragment << "'";
  EXPECT_NE(st.message().find(path), std::string::npos) << st.message();
  EXPECT_NE(st.message().find(fragment), std::string::npos) << st.message();
  EXPECT_TRUE(f.tensors().empty());
}

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = uint8_t(i * 131 + seed);
  return v;
}

} // namespace

TEST(Safetensors, RoundTripAllDTypes) {
  TempDir dir;
  std::string path = dir.file("model.safetensors");
  std::vector<SafetensorsEntry> entries = {{"flag", {DType::Bool, {3}}},
                                           {"bytes", {DType::U8, {5}}},
                                           {"emb.weight", {DType::F32, {4, 3}}},
                                           {"half", {DType::F16, {3}}},
                                           {"brain", {DType::BF16, {2, 1}}},
                                           {"dbl", {DType::F64, {2}}},
                                           {"idx", {DType::I64, {3}}},
                                           {"i32", {DType::I32, {1}}},
                                           {"i8", {DType::I8, {7}}},
                                           {"scalar", {DType::F32, {}}},
                                           {"empty", {DType::F32, {0, 5}}},
                                           {"f8", {DType::F8E4M3FN, {3}}},
                                           {"f8e5", {DType::F8E5M2, {2}}},
                                           {"fnuz", {DType::F8E4M3FNUZ, {4}}},
                                           {"i4", {DType::I4, {2}}}};
  std::map<std::string, std::vector<uint8_t>> data;
  for (size_t i = 0; i < entries.size(); ++i)
    data[entries[i].name] = pattern(entries[i].desc.bytes(), uint8_t(i));
  for (auto &b : data["flag"])
    b &= 1;

  SafetensorsWriter w;
  ASSERT_OK(w.open(path, entries, {{"format", "pt"}, {"origin", "tpc"}}));
  // Write in declaration order (not the file order), some in pieces.
  for (const SafetensorsEntry &e : entries) {
    const std::vector<uint8_t> &bytes = data[e.name];
    ASSERT_OK(w.beginTensor(e.name));
    for (size_t off = 0; off < bytes.size(); off += 5)
      ASSERT_OK(w.append(bytes.data() + off,
                         std::min<size_t>(5, bytes.size() - off)));
  }
  ASSERT_OK(w.close());
  EXPECT_EQ(dir.list(), std::vector<std::string>{"model.safetensors"});

  SafetensorsFile f;
  ASSERT_OK(SafetensorsFile::open(path, f));
  EXPECT_EQ(f.dataOffset() % 8, 0u);
  EXPECT_EQ(f.metadata().at("format"), "pt");
  EXPECT_EQ(f.metadata().at("origin"), "tpc");
  ASSERT_EQ(f.tensors().size(), entries.size());
  for (const SafetensorsEntry &e : entries) {
    const SafetensorsTensor *t = f.find(e.name);
    ASSERT_NE(t, nullptr) << e.name;
    // Types safetensors has no name for come back as their bytes.
    bool named = std::string(safetensorsDTypeName(e.desc.dtype)) != "U8" ||
                 e.desc.dtype == DType::U8;
    EXPECT_EQ(t->desc.dtype, named ? e.desc.dtype : DType::U8) << e.name;
    EXPECT_TRUE(safetensorsHolds(t->desc.dtype, e.desc.dtype)) << e.name;
    EXPECT_EQ(t->desc.shape, e.desc.shape) << e.name;
    ASSERT_EQ(t->size, e.desc.bytes()) << e.name;
    if (t->size)
      EXPECT_EQ(std::memcmp(t->data, data[e.name].data(), t->size), 0)
          << e.name;
    // Wider types are laid out first, so every view is naturally aligned.
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data) % dtypeSize(e.desc.dtype),
              0u)
        << e.name;
  }
  // tensors() is in file order: offsets increase.
  for (size_t i = 1; i < f.tensors().size(); ++i)
    EXPECT_LE(f.tensors()[i - 1].fileOffset, f.tensors()[i].fileOffset);
  EXPECT_EQ(f.find("nope"), nullptr);
}

TEST(Safetensors, WriteInFileOrderAndEmptyFile) {
  TempDir dir;
  std::vector<SafetensorsEntry> entries = {{"a", {DType::U8, {3}}},
                                           {"b", {DType::F64, {2}}}};
  SafetensorsWriter w;
  ASSERT_OK(w.open(dir.file("x.safetensors"), entries));
  EXPECT_EQ(w.fileOrder(), (std::vector<std::string>{"b", "a"}));
  double b[2] = {1.5, -2};
  uint8_t a[3] = {1, 2, 3};
  ASSERT_OK(w.writeTensor("b", b));
  ASSERT_OK(w.writeTensor("a", a));
  ASSERT_OK(w.close());
  std::string raw = readAll(dir.file("x.safetensors"));
  EXPECT_EQ(raw.size() % 8, 3u); // Header padded; 16 + 3 data bytes.
  EXPECT_EQ(raw.substr(raw.size() - 3), "\x01\x02\x03");
  // Written front to back: the digest came with the writing.
  EXPECT_EQ(w.sha256Hex(), Sha256::hashHex(raw));

  // Out of file order the file is the same, but not hashed on the way.
  SafetensorsWriter reordered;
  ASSERT_OK(reordered.open(dir.file("y.safetensors"), entries));
  ASSERT_OK(reordered.writeTensor("a", a));
  ASSERT_OK(reordered.writeTensor("b", b));
  ASSERT_OK(reordered.close());
  EXPECT_EQ(readAll(dir.file("y.safetensors")), raw);
  EXPECT_EQ(reordered.sha256Hex(), "");

  SafetensorsWriter empty;
  ASSERT_OK(empty.open(dir.file("empty.safetensors"), {}));
  ASSERT_OK(empty.close());
  SafetensorsFile f;
  ASSERT_OK(SafetensorsFile::open(dir.file("empty.safetensors"), f));
  EXPECT_TRUE(f.tensors().empty());
  EXPECT_TRUE(f.metadata().empty());
  EXPECT_EQ(empty.sha256Hex(),
            Sha256::hashHex(readAll(dir.file("empty.safetensors"))));
}

TEST(Safetensors, WriterChecksByteCounts) {
  TempDir dir;
  std::string path = dir.file("w.safetensors");
  std::vector<SafetensorsEntry> entries = {{"a", {DType::F32, {4}}},
                                           {"b", {DType::F32, {2}}}};
  float v[8] = {};

  auto expectFailure = [&](SafetensorsWriter &w, Status st,
                           const std::string &fragment) {
    ASSERT_FALSE(st);
    EXPECT_NE(st.message().find(path), std::string::npos) << st.message();
    EXPECT_NE(st.message().find(fragment), std::string::npos) << st.message();
    // The writer is now dead and nothing was published.
    EXPECT_FALSE(w.close());
    EXPECT_TRUE(dir.list().empty());
  };

  {
    SafetensorsWriter w;
    ASSERT_OK(w.open(path, entries));
    ASSERT_OK(w.beginTensor("a"));
    ASSERT_OK(w.append(v, 8));
    expectFailure(w, w.append(v, 12), "16 bytes, but 20 were appended");
  }
  {
    SafetensorsWriter w;
    ASSERT_OK(w.open(path, entries));
    ASSERT_OK(w.beginTensor("a"));
    ASSERT_OK(w.append(v, 12));
    expectFailure(w, w.beginTensor("b"), "received 12 of 16 bytes");
  }
  {
    SafetensorsWriter w;
    ASSERT_OK(w.open(path, entries));
    ASSERT_OK(w.writeTensor("a", v));
    expectFailure(w, w.close(), "'b' was never written");
  }
  {
    SafetensorsWriter w;
    ASSERT_OK(w.open(path, entries));
    ASSERT_OK(w.writeTensor("a", v));
    expectFailure(w, w.writeTensor("a", v), "written twice");
  }
  {
    SafetensorsWriter w;
    ASSERT_OK(w.open(path, entries));
    expectFailure(w, w.beginTensor("c"), "'c' was not declared");
  }
  {
    SafetensorsWriter w;
    ASSERT_OK(w.open(path, entries));
    expectFailure(w, w.append(v, 4), "without a current tensor");
  }
  {
    SafetensorsWriter w;
    ASSERT_OK(w.open(path, entries));
    ASSERT_OK(w.writeTensor("a", v));
    // Destroyed without close(): nothing is published.
  }
  EXPECT_TRUE(dir.list().empty());

  SafetensorsWriter w;
  expectFailure(
      w, w.open(path, {{"a", {DType::F32, {1}}}, {"a", {DType::F32, {1}}}}),
      "duplicate tensor name 'a'");
  expectFailure(w, w.open(path, {{"__metadata__", {DType::F32, {1}}}}),
                "reserved");
  expectFailure(w, w.open(path, {{"n", {DType::F32, {-1}}}}), "invalid shape");
}

TEST(Safetensors, StreamsLargeTensorInChunks) {
  TempDir dir;
  std::string path = dir.file("big.safetensors");
  const size_t n = 3u << 20; // 12 MiB of f32, appended 1 MiB at a time.
  SafetensorsWriter w;
  ASSERT_OK(w.open(path, {{"w", {DType::F32, {int64_t(n)}}}}));
  ASSERT_OK(w.beginTensor("w"));
  std::vector<float> chunk(1u << 18);
  for (size_t base = 0; base < n; base += chunk.size()) {
    for (size_t i = 0; i < chunk.size(); ++i)
      chunk[i] = float(base + i);
    ASSERT_OK(w.append(chunk.data(), chunk.size() * sizeof(float)));
  }
  ASSERT_OK(w.close());
  SafetensorsFile f;
  ASSERT_OK(SafetensorsFile::open(path, f));
  const float *p = static_cast<const float *>(f.find("w")->data);
  for (size_t i = 0; i < n; i += 4097)
    ASSERT_EQ(p[i], float(i));
  EXPECT_EQ(p[n - 1], float(n - 1));
  // Several buffers of the hashing writer, hashed on its thread.
  std::string hash;
  ASSERT_OK(sha256File(path, hash));
  EXPECT_EQ(w.sha256Hex(), hash);
}

TEST(Safetensors, ReaderRejectsCorruption) {
  TempDir dir;
  std::string buf8(8, '\0');
  auto file = [&](const std::string &name, const std::string &header,
                  const std::string &buffer) {
    return dir.write(name, makeFile(header, buffer));
  };

  // A valid reference, then variations of it.
  ASSERT_OK([&] {
    SafetensorsFile f;
    return SafetensorsFile::open(
        file("ok.st",
             R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", buf8),
        f);
  }());

  expectError(dir.write("tiny.st", "abc"), "too small");
  expectError(dir.write("empty.st", ""), "too small");
  {
    // Header length larger than the file.
    std::string raw = makeFile(R"({})", "");
    raw[0] = char(200);
    expectError(dir.write("len.st", raw), "exceeds the file size");
    raw[5] = char(1); // About 1 TB.
    expectError(dir.write("huge.st", raw), "100 MB limit");
  }
  {
    // Truncated: the last tensor's bytes are missing.
    std::string raw = makeFile(
        R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", buf8);
    expectError(dir.write("trunc.st", raw.substr(0, raw.size() - 3)),
                "out of bounds");
    expectError(dir.write("trunc2.st", raw.substr(0, 20)), "exceeds the file");
  }
  // Headers a reader must refuse, over 8 data bytes (or none), with the
  // message fragment naming the problem.
  struct BadHeader {
    const char *name, *header;
    bool data;
    const char *fragment;
  };
  const BadHeader bad[] = {
      {"json.st", R"({"a":{"dtype":"F32",)", true, "not valid JSON"},
      {"notobj.st", R"([1,2])", false, "JSON object"},
      {"oob.st", R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,16]}})",
       true, "out of bounds"},
      {"overlap.st",
       R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
       R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
       true, "overlap"},
      {"hole.st", R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
       true, "hole"},
      {"tail.st", R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
       true, "cover 4 bytes but the data buffer has 8"},
      {"count.st", R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})",
       true, "needs 12 bytes"},
      {"dtype.st", R"({"a":{"dtype":"C64","shape":[1],"data_offsets":[0,8]}})",
       true, "unsupported dtype 'C64'"},
      {"f8.st", R"({"a":{"dtype":"F8_E8M0","shape":[8],"data_offsets":[0,8]}})",
       true, "'F8_E8M0'"},
      {"negshape.st",
       R"({"a":{"dtype":"U8","shape":[-8],"data_offsets":[0,8]}})", true,
       "not a non-negative integer"},
      {"fshape.st",
       R"({"a":{"dtype":"U8","shape":[8.0],"data_offsets":[0,8]}})", true,
       "not a non-negative integer"},
      {"reversed.st",
       R"({"a":{"dtype":"U8","shape":[0],"data_offsets":[8,0]}})", true,
       "end before they begin"},
      {"offs.st", R"({"a":{"dtype":"U8","shape":[8],"data_offsets":[0]}})",
       true, "data_offsets"},
      {"missing.st", R"({"a":{"dtype":"U8","shape":[8]}})", true,
       "needs 'dtype', 'shape' and 'data_offsets'"},
      {"field.st",
       R"({"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8],"x":1}})", true,
       "unexpected field 'x'"},
      {"dup.st",
       R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},)"
       R"("a":{"dtype":"U8","shape":[4],"data_offsets":[4,8]}})",
       true, "'a' more than once"},
      {"meta.st", R"({"__metadata__":{"k":1}})", false,
       "'__metadata__' entry 'k' is not a string"},
      {"shapeover.st",
       R"({"a":{"dtype":"F64","shape":[4294967296,4294967296],)"
       R"("data_offsets":[0,8]}})",
       true, "too large"},
  };
  for (const BadHeader &c : bad) {
    SCOPED_TRACE(c.name);
    expectError(file(c.name, c.header, c.data ? buf8 : ""), c.fragment);
  }
  expectError(dir.file("absent.st"), "No such file");
}

TEST(Safetensors, ReaderAcceptsForeignLayouts) {
  TempDir dir;
  // Unpadded header, tensors listed out of offset order, zero-size tensors
  // sharing an offset, metadata.
  std::string buf(12, '\0');
  std::iota(buf.begin(), buf.end(), '\0');
  std::string path = dir.write(
      "foreign.st",
      makeFile(R"({"b":{"dtype":"U8","shape":[4],"data_offsets":[8,12]},)"
               R"("z":{"dtype":"F32","shape":[0],"data_offsets":[8,8]},)"
               R"("__metadata__":{"format":"np"},)"
               R"("a":{"dtype":"I32","shape":[2],"data_offsets":[0,8]}})",
               buf, /*pad=*/false));
  SafetensorsFile f;
  ASSERT_OK(SafetensorsFile::open(path, f));
  ASSERT_EQ(f.tensors().size(), 3u);
  EXPECT_EQ(f.tensors()[0].name, "a");
  EXPECT_EQ(f.find("b")->size, 4u);
  EXPECT_EQ(static_cast<const uint8_t *>(f.find("b")->data)[0], 8);
  EXPECT_EQ(f.find("z")->size, 0u);
  EXPECT_EQ(f.metadata().at("format"), "np");

  SafetensorsFile moved = std::move(f);
  EXPECT_EQ(moved.find("a")->desc.str(), "i32[2]");
}
