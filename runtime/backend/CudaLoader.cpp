//===- CudaLoader.cpp - Backend.h by opening the CUDA backend module ------===//
//
// Implements the Backend.h factories in every build: they open
// libtpc_backend_cuda.so (CudaModule.h) the first time one is called. The
// module is looked up in ../lib beside the running executable (the build
// tree and an installed tree have the same shape), then where the build put
// it.
//
//===----------------------------------------------------------------------===//
#include "runtime/backend/CudaModule.h"

#include <dlfcn.h>
#include <limits.h>
#include <mutex>
#include <unistd.h>

namespace tpc::runtime {

namespace {

#ifdef TPC_CUDA_MODULE_BUILD_PATH
constexpr const char *kModuleName = "libtpc_backend_cuda.so";

/// The folder of the running executable, "" if it cannot be read.
std::string executableDir() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0)
    return "";
  std::string path(buf, size_t(n));
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

/// The folder of the binary holding this code: the executable, or the
/// Python extension that links the runtime (its wheel keeps the module
/// beside it).
std::string codeDir() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(&codeDir), &info) || !info.dli_fname)
    return "";
  std::string path = info.dli_fname;
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

std::vector<std::string> candidatePaths() {
  std::vector<std::string> paths;
  if (std::string dir = executableDir(); !dir.empty())
    paths.push_back(dir + "/../lib/" + kModuleName);
  if (std::string dir = codeDir(); !dir.empty())
    paths.push_back(dir + "/" + kModuleName);
  paths.push_back(TPC_CUDA_MODULE_BUILD_PATH);
  return paths;
}
#endif // TPC_CUDA_MODULE_BUILD_PATH

struct Loaded {
  const CudaModuleApi *api = nullptr;
  Status status = Status::ok();
};

Loaded openModule() {
  Loaded l;
#ifndef TPC_CUDA_MODULE_BUILD_PATH
  l.status = Status::error("this tpc was built without CUDA (no nvcc when it "
                           "was configured); --backend cuda is unavailable");
  return l;
#else
  std::string tried, why;
  for (const std::string &path : candidatePaths()) {
    if (access(path.c_str(), F_OK) != 0) {
      tried += (tried.empty() ? "" : ", ") + path;
      continue;
    }
    // RTLD_LOCAL: the module's copies of runtime code stay its own.
    void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char *e = dlerror();
      l.status = Status::error("cannot load the CUDA backend '" + path +
                               "': " + (e ? e : "unknown error") +
                               " (are the CUDA 13 libraries installed?)");
      return l;
    }
    auto entry = reinterpret_cast<const CudaModuleApi *(*)()>(
        dlsym(handle, TPC_CUDA_MODULE_ENTRY));
    const CudaModuleApi *api = entry ? entry() : nullptr;
    if (!api || api->abi != kCudaModuleAbi ||
        api->optionsSize != sizeof(GpuRunOptions) ||
        api->manifestSize != sizeof(EngineManifest)) {
      l.status = Status::error("'" + path +
                               "' is not a CUDA backend module of this tpc "
                               "build (entry point or ABI differs)");
      return l;
    }
    l.api = api;
    return l;
  }
  l.status = Status::error("the CUDA backend module was not found (looked "
                           "for " + tried + ")");
  return l;
#endif
}

/// The module, opened once per process.
const Loaded &module() {
  static std::once_flag once;
  static Loaded loaded;
  std::call_once(once, [] { loaded = openModule(); });
  return loaded;
}

} // namespace

bool cudaBackendBuilt() {
#ifdef TPC_CUDA_MODULE_BUILD_PATH
  return true;
#else
  return false;
#endif
}

Status createCudaRunner(const std::string &dir, const GpuRunOptions &options,
                        std::unique_ptr<EngineRunner> &out) {
  out.reset();
  const Loaded &m = module();
  if (!m.api)
    return m.status;
  return m.api->createRunner(dir, options, out);
}

Status newNcclId(std::vector<uint8_t> &bytes) {
  bytes.clear();
  const Loaded &m = module();
  if (!m.api)
    return m.status;
  return m.api->newNcclId(bytes);
}

Status createCudaRankRunner(const EngineManifest &manifest, int rank,
                            int device, const std::vector<uint8_t> &ncclId,
                            const GpuRunOptions &options,
                            std::unique_ptr<EngineRunner> &out) {
  out.reset();
  const Loaded &m = module();
  if (!m.api)
    return m.status;
  return m.api->createRankRunner(manifest, rank, device, ncclId, options, out);
}

} // namespace tpc::runtime
