//===- FuzzNpy.cpp - libFuzzer harness: the .npy reader -------------------===//
//
// Input: a whole .npy file. The header parser must accept it or return an
// error; an accepted header must describe exactly the bytes that follow.

#include "runtime/io/Npy.h"
#include "test/fuzz/FuzzSupport.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tpc::NpyHeader header;
  tpc::Status st = tpc::parseNpyHeader(data, size, "fuzz.npy", header);
  if (st.isOk()) {
    // The contract callers rely on: the data is in the file, and its size
    // is what the shape says.
    if (header.dataOffset > size ||
        size - header.dataOffset != header.desc.bytes())
      std::abort();
  }
  // The file path too: mapping, the header and the copy of the data.
  std::string path = tpc::fuzz::writeScratch("in.npy", data, size);
  tpc::NpyArray array;
  tpc::Status read = tpc::readNpy(path, array);
  if (read.isOk() != st.isOk())
    std::abort();
  return 0;
}
