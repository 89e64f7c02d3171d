//===- FuzzSupport.cpp - Shared helpers of the libFuzzer harnesses --------===//

#include "test/fuzz/FuzzSupport.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <unistd.h>

namespace tpc::fuzz {

namespace {
std::string makeScratch() {
  const char *base = std::getenv("TPC_FUZZ_SCRATCH");
  std::string root = base && *base ? base
                     : std::filesystem::is_directory("/dev/shm") ? "/dev/shm"
                                                                 : "/tmp";
  std::string templ = root + "/tpc-fuzz-XXXXXX";
  if (!::mkdtemp(templ.data())) {
    std::perror("tpc fuzz: mkdtemp");
    std::abort();
  }
  return templ;
}

struct Scratch {
  std::string dir = makeScratch();
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};
} // namespace

const std::string &scratchDir() {
  static Scratch scratch;
  return scratch.dir;
}

std::string writeScratch(const std::string &name, const uint8_t *data,
                         size_t size) {
  std::string path = scratchDir() + "/" + name;
  std::FILE *f = std::fopen(path.c_str(), "wb");
  if (!f || (size && std::fwrite(data, 1, size, f) != size) ||
      std::fclose(f) != 0) {
    std::perror(("tpc fuzz: writing " + path).c_str());
    std::abort();
  }
  return path;
}

} // namespace tpc::fuzz
