//===- IoInterop.cpp - Files for the NumPy/safetensors cross-checks -------===//
//
// Driven by check_npy.py and check_safetensors.py, which hold a copy of the
// table and value formula below:
//   tpc_io_interop write-safetensors FILE       (every tensor but bf16)
//   tpc_io_interop write-safetensors-bf16 FILE  (every tensor)
//   tpc_io_interop check-safetensors FILE
//   tpc_io_interop write-npy DIR
//   tpc_io_interop check-npy DIR
// "write" produces files for Python to verify; "check" verifies files that
// Python wrote. NumPy has no bfloat16, so safetensors.numpy.load_file can
// only read files without it. Exit status 0 on success, 1 on a mismatch, 2 on
// misuse.
//
//===----------------------------------------------------------------------===//
#include "runtime/io/Npy.h"
#include "runtime/io/Safetensors.h"
#include "test/unit/runtime/CommTestUtil.h"

#include <cstdio>
#include <cstring>

using namespace tpc;

namespace {

struct Spec {
  const char *name;
  DType dtype;
  Shape shape;
};

/// bf16 only travels through safetensors: NumPy has no such dtype.
const std::vector<Spec> &specs() {
  static const std::vector<Spec> table = {
      {"f32", DType::F32, {2, 3}},   {"f16", DType::F16, {5}},
      {"f64", DType::F64, {3}},      {"i64", DType::I64, {4}},
      {"i32", DType::I32, {2, 2}},   {"i8", DType::I8, {6}},
      {"u8", DType::U8, {7}},        {"bool", DType::Bool, {5}},
      {"scalar", DType::F32, {}},    {"empty", DType::F32, {0, 3}},
      {"big", DType::F32, {300, 7}}, {"bf16", DType::BF16, {2, 4}}};
  return table;
}

/// Element i of a tensor of type t; exactly representable in every type.
double value(DType t, size_t i) {
  switch (t) {
  case DType::F32:
  case DType::F64:
  case DType::F16:
  case DType::BF16: return double(i % 11) * 0.5 - 2.5;
  case DType::I64:
  case DType::I32:
  case DType::I8: return double(int64_t(i * 37 % 201) - 100);
  case DType::U8: return double(i * 37 % 256);
  case DType::Bool: return i % 3 == 0 ? 1 : 0;
  }
  return 0;
}

std::vector<uint8_t> makeData(const Spec &s) {
  TensorDesc desc{s.dtype, s.shape};
  std::vector<uint8_t> out(desc.bytes());
  for (size_t i = 0; i < size_t(desc.numel()); ++i)
    test::setValue(s.dtype, out.data(), i, value(s.dtype, i));
  return out;
}

int failures = 0;

void check(bool ok, const std::string &what) {
  if (!ok) {
    std::fprintf(stderr, "MISMATCH: %s\n", what.c_str());
    ++failures;
  }
}

void checkTensor(const Spec &s, DType dtype, const Shape &shape,
                 const void *data, size_t size, const std::string &where) {
  check(dtype == s.dtype, where + ": dtype " + dtypeName(dtype) +
                              ", expected " + dtypeName(s.dtype));
  check(shape == s.shape, where + ": shape " + shapeToString(shape) +
                              ", expected " + shapeToString(s.shape));
  std::vector<uint8_t> expected = makeData(s);
  check(size == expected.size() &&
            (size == 0 || std::memcmp(data, expected.data(), size) == 0),
        where + ": data differs");
}

Status writeSafetensors(const std::string &path, bool withBf16) {
  std::vector<const Spec *> chosen;
  std::vector<SafetensorsEntry> entries;
  for (const Spec &s : specs())
    if (withBf16 || s.dtype != DType::BF16) {
      chosen.push_back(&s);
      entries.push_back({s.name, {s.dtype, s.shape}});
    }
  SafetensorsWriter w;
  TPC_RETURN_IF_ERROR(
      w.open(path, entries, {{"producer", "tpc"}, {"format", "np"}}));
  for (const Spec *s : chosen) {
    std::vector<uint8_t> data = makeData(*s);
    TPC_RETURN_IF_ERROR(w.beginTensor(s->name));
    // Two pieces, to exercise chunked appends.
    size_t half = data.size() / 2;
    TPC_RETURN_IF_ERROR(w.append(data.data(), half));
    TPC_RETURN_IF_ERROR(w.append(data.data() + half, data.size() - half));
  }
  return w.close();
}

Status checkSafetensors(const std::string &path) {
  SafetensorsFile f;
  TPC_RETURN_IF_ERROR(SafetensorsFile::open(path, f));
  for (const Spec &s : specs()) {
    if (s.dtype == DType::BF16)
      continue;
    const SafetensorsTensor *t = f.find(s.name);
    check(t != nullptr, path + ": tensor '" + s.name + "' missing");
    if (t)
      checkTensor(s, t->desc.dtype, t->desc.shape, t->data, t->size,
                  path + ": " + s.name);
  }
  auto it = f.metadata().find("producer");
  check(it != f.metadata().end() && it->second == "numpy",
        path + ": metadata 'producer' should be 'numpy'");
  return Status::ok();
}

Status writeNpyFiles(const std::string &dir) {
  for (const Spec &s : specs())
    if (s.dtype != DType::BF16)
      TPC_RETURN_IF_ERROR(writeNpy(dir + "/" + s.name + ".npy",
                                   {s.dtype, s.shape}, makeData(s).data()));
  return Status::ok();
}

Status checkNpyFiles(const std::string &dir) {
  for (const Spec &s : specs()) {
    if (s.dtype == DType::BF16)
      continue;
    NpyArray a;
    std::string path = dir + "/" + s.name + ".npy";
    TPC_RETURN_IF_ERROR(readNpy(path, a));
    checkTensor(s, a.desc.dtype, a.desc.shape, a.data.data(), a.data.size(),
                path);
  }
  NpyArray a;
  // Files that must be refused, and the words the refusal must contain.
  const std::pair<const char *, const char *> refused[] = {
      {"fortran.npy", "Fortran order"},
      {"bigendian.npy", "'>f4'"},
      {"complex.npy", "'<c8'"},
      {"object.npy", "'|O'"}};
  for (const auto &[name, words] : refused) {
    Status st = readNpy(dir + "/" + name, a);
    check(!st && st.message().find(words) != std::string::npos,
          std::string(name) + " should be refused mentioning " + words +
              ", got: " + (st ? "success" : st.message()));
  }
  return Status::ok();
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr,
                 "usage: %s write-safetensors|write-safetensors-bf16|"
                 "check-safetensors|write-npy|check-npy PATH\n",
                 argv[0]);
    return 2;
  }
  std::string cmd = argv[1], path = argv[2];
  Status st = cmd == "write-safetensors"        ? writeSafetensors(path, false)
              : cmd == "write-safetensors-bf16" ? writeSafetensors(path, true)
              : cmd == "check-safetensors"      ? checkSafetensors(path)
              : cmd == "write-npy"              ? writeNpyFiles(path)
              : cmd == "check-npy"
                  ? checkNpyFiles(path)
                  : Status::error("unknown command '" + cmd + "'");
  if (!st) {
    std::fprintf(stderr, "error: %s\n", st.message().c_str());
    return 1;
  }
  return failures ? 1 : 0;
}
