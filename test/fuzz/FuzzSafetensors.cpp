//===- FuzzSafetensors.cpp - libFuzzer harness: safetensors files ---------===//
//
// Input: a whole .safetensors file. Opening it must succeed or fail with an
// error; every tensor of a file that opens must lie inside the mapping.

#include "runtime/io/Safetensors.h"
#include "test/fuzz/FuzzSupport.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = tpc::fuzz::writeScratch("in.safetensors", data, size);
  tpc::SafetensorsFile file;
  if (!tpc::SafetensorsFile::open(path, file).isOk())
    return 0;
  const uint8_t *begin = file.file().data();
  const uint8_t *end = begin + file.file().size();
  for (const tpc::SafetensorsTensor &t : file.tensors()) {
    const uint8_t *p = static_cast<const uint8_t *>(t.data);
    if (t.size != t.desc.bytes() || (t.size && (p < begin || p > end ||
                                                size_t(end - p) < t.size)))
      std::abort();
    // Touch the first and last byte: the mapping must cover them.
    if (t.size) {
      volatile uint8_t first = p[0], last = p[t.size - 1];
      (void)first;
      (void)last;
    }
  }
  return 0;
}
