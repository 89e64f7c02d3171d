//===- TempDir.h - Scratch directories for runtime unit tests ---*- C++ -*-===//
#ifndef TPC_TEST_UNIT_RUNTIME_TEMPDIR_H
#define TPC_TEST_UNIT_RUNTIME_TEMPDIR_H

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace tpc::test {

/// A fresh directory under $TMPDIR (or /tmp), removed with its contents on
/// destruction.
class TempDir {
public:
  TempDir() {
    const char *base = std::getenv("TMPDIR");
    std::string templ =
        std::string(base && *base ? base : "/tmp") + "/tpc-rt-test-XXXXXX";
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    if (char *p = ::mkdtemp(buf.data()))
      path_ = p;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty())
      std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  const std::string &path() const { return path_; }
  std::string file(const std::string &name) const { return path_ + "/" + name; }

  /// Writes raw bytes to `name` and returns its path.
  std::string write(const std::string &name, const std::string &bytes) const {
    std::string p = file(name);
    std::ofstream(p, std::ios::binary)
        .write(bytes.data(), std::streamsize(bytes.size()));
    return p;
  }

  /// Names of the entries in the directory.
  std::vector<std::string> list() const {
    std::vector<std::string> names;
    for (const auto &e : std::filesystem::directory_iterator(path_))
      names.push_back(e.path().filename().string());
    return names;
  }

private:
  std::string path_;
};

/// The whole content of a file.
inline std::string readAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

} // namespace tpc::test

#endif // TPC_TEST_UNIT_RUNTIME_TEMPDIR_H
