//===- OutputDir.cpp - The engine folder a compile writes -----------------===//
#include "compiler/Engine/OutputDir.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <set>
#include <sys/file.h>
#include <sys/syscall.h>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;

namespace tpc {
namespace {

/// The temporary folder a signal must remove; empty when none.
char gCleanup[4096];
struct sigaction gOldInt, gOldTerm;

/// Removes the (flat) temporary folder with async-signal-safe calls only,
/// then ends the process as the signal would have.
void onSignal(int sig) {
  if (gCleanup[0]) {
    int fd = ::open(gCleanup, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
      char buf[4096];
      for (;;) {
        long n = ::syscall(SYS_getdents64, fd, buf, sizeof(buf));
        if (n <= 0)
          break;
        for (long off = 0; off < n;) {
          // struct linux_dirent64: ino (8), off (8), reclen (2), type (1),
          // name.
          unsigned short reclen;
          std::memcpy(&reclen, buf + off + 16, sizeof(reclen));
          const char *name = buf + off + 19;
          if (std::strcmp(name, ".") && std::strcmp(name, ".."))
            ::unlinkat(fd, name, 0);
          off += reclen;
        }
      }
      ::close(fd);
    }
    ::rmdir(gCleanup);
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void armSignals(const fs::path &dir) {
  std::string s = dir.string();
  if (s.size() >= sizeof(gCleanup))
    return;
  std::memcpy(gCleanup, s.c_str(), s.size() + 1);
  struct sigaction sa = {};
  sa.sa_handler = onSignal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, &gOldInt);
  ::sigaction(SIGTERM, &sa, &gOldTerm);
}

void disarmSignals() {
  if (!gCleanup[0])
    return;
  ::sigaction(SIGINT, &gOldInt, nullptr);
  ::sigaction(SIGTERM, &gOldTerm, nullptr);
  gCleanup[0] = 0;
}

/// Whether `dir` is an engine folder tpc wrote, holding nothing else; when
/// not, `why` says what is there.
bool isOwnEngine(const fs::path &dir, std::string &why) {
  auto buf = llvm::MemoryBuffer::getFile((dir / "engine.json").string());
  if (!buf) {
    why = "it is not empty and has no engine.json";
    return false;
  }
  llvm::Expected<llvm::json::Value> doc =
      llvm::json::parse((*buf)->getBuffer());
  const llvm::json::Object *root = doc ? doc->getAsObject() : nullptr;
  if (!doc)
    llvm::consumeError(doc.takeError());
  std::optional<llvm::StringRef> format =
      root ? root->getString("format") : std::nullopt;
  if (!format || *format != "tpc-engine") {
    why = "its engine.json is not one tpc wrote (no \"format\": "
          "\"tpc-engine\")";
    return false;
  }
  std::set<std::string> listed = {"engine.json"};
  if (const llvm::json::Array *ranks = root->getArray("ranks"))
    for (const llvm::json::Value &r : *ranks)
      if (const llvm::json::Object *ro = r.getAsObject())
        for (llvm::StringRef key : {"plan", "weights"})
          if (const llvm::json::Object *f = ro->getObject(key))
            if (std::optional<llvm::StringRef> file = f->getString("file"))
              listed.insert(file->str());
  std::error_code ec;
  for (const fs::directory_entry &e : fs::directory_iterator(dir, ec))
    if (!listed.count(e.path().filename().string())) {
      why = "it holds '" + e.path().filename().string() +
            "', which is not part of the engine";
      return false;
    }
  return true;
}

/// Whether process `pid` is gone (so its temporary folder is a leftover).
bool processGone(const std::string &pid) {
  if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos)
    return false;
  long p = std::strtol(pid.c_str(), nullptr, 10);
  if (p <= 0 || p == ::getpid())
    return false;
  return ::kill(pid_t(p), 0) != 0 && errno == ESRCH;
}

} // namespace

bool OutputDir::prepare(const std::string &outDir, std::string &error,
                        std::vector<std::string> &notes) {
  std::error_code ec;
  if (outDir.empty()) {
    error = "-o needs a folder name";
    return false;
  }
  fs::path p = fs::absolute(outDir, ec).lexically_normal();
  // "engine/" and "." normalise with an empty last component.
  if (!p.has_filename())
    p = p.parent_path();
  if (ec || !p.has_filename() || p == p.root_path()) {
    error = "cannot write an engine to '" + outDir + "'";
    return false;
  }
  targetPath = p;
  if (fs::exists(p, ec)) {
    if (!fs::is_directory(p, ec)) {
      error = "output '" + outDir + "' exists and is not a folder; refusing "
              "to replace it";
      return false;
    }
    std::string why;
    if (!fs::is_empty(p, ec) && !isOwnEngine(p, why)) {
      error = "output '" + outDir + "' is not an engine folder tpc wrote (" +
              why + "); refusing to replace it";
      return false;
    }
  }
  // Leftovers of compiles into this target that were killed.
  std::string prefix = "." + p.filename().string() + ".tmp-";
  for (const fs::directory_entry &e :
       fs::directory_iterator(p.parent_path(), ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || !e.is_directory(ec))
      continue;
    std::string pid = name.substr(prefix.size());
    if (size_t dash = pid.find('-'); dash != std::string::npos)
      pid = pid.substr(0, dash);
    if (!processGone(pid))
      continue;
    std::error_code rec;
    fs::remove_all(e.path(), rec);
    notes.push_back("removed '" + e.path().string() +
                    "', left by a compile that did not finish");
  }
  tempPath = p.parent_path() / (prefix + std::to_string(::getpid()));
  fs::remove_all(tempPath, ec);
  if (!fs::create_directories(tempPath, ec)) {
    error = "cannot create '" + tempPath.string() + "': " + ec.message();
    tempPath.clear();
    return false;
  }
  armSignals(tempPath);
  return true;
}

namespace {
/// Removes an old engine folder once no reader is opening its files: tpc's
/// readers hold a shared flock on the folder while they do (the runtime's
/// EngineFolder), so wait for an exclusive one, at most `patience`, then
/// remove it anyway (a reader that held it longer was not a tpc loader).
void removeOldEngine(const fs::path &dir, std::chrono::seconds patience) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    auto deadline = std::chrono::steady_clock::now() + patience;
    while (::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (fd >= 0)
    ::close(fd);
}
} // namespace

bool OutputDir::commit(std::string &error) {
  std::error_code ec;
  bool replace = fs::exists(targetPath, ec);
  if (replace) {
    // The new engine takes the old one's place in one step; the old one
    // is then at the temporary path and is removed with it.
    if (::renameat2(AT_FDCWD, tempPath.c_str(), AT_FDCWD, targetPath.c_str(),
                    RENAME_EXCHANGE) == 0) {
      committed = true;
      disarmSignals();
      removeOldEngine(tempPath, std::chrono::seconds(30));
      return true;
    }
    // A file system without exchange: the old engine goes first.
    if (errno != EINVAL && errno != ENOSYS) {
      error = "cannot move the engine into '" + targetPath.string() +
              "': " + std::strerror(errno);
      return false;
    }
    removeOldEngine(targetPath, std::chrono::seconds(30));
  }
  fs::rename(tempPath, targetPath, ec);
  if (ec) {
    error = "cannot move the engine into '" + targetPath.string() +
            "': " + ec.message();
    return false;
  }
  committed = true;
  disarmSignals();
  return true;
}

OutputDir::~OutputDir() {
  disarmSignals();
  std::error_code ec;
  if (!committed && !tempPath.empty())
    fs::remove_all(tempPath, ec);
}

} // namespace tpc
