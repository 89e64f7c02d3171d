//===- CudaRunner.cpp - The CUDA backend module: CudaEngine behind Backend.h ===//
#include "runtime/backend/CudaModule.h"

#include "runtime/cuda/CudaEngine.h"
#ifdef TPC_HAVE_NCCL
#include "runtime/comm/NcclComm.h"
#endif

namespace tpc::runtime {

namespace {

class CudaRunner final : public EngineRunner {
public:
  explicit CudaRunner(std::unique_ptr<CudaEngine> engine)
      : engine_(std::move(engine)) {}
  int tp() const override { return engine_->tp(); }
  Status setInput(const std::string &name, const TensorDesc &desc,
                  const void *data) override {
    return engine_->setInput(name, desc, data);
  }
  Status run() override { return engine_->run(); }
  Status resetState() override { return engine_->resetState(); }
  double lastRunMillis() const override { return engine_->lastRunMillis(); }
  double lastDeviceMillis() const override {
    return engine_->lastGpuMillis();
  }
  bool output(const std::string &name, TensorDesc &desc,
              const void *&data) const override {
    return engine_->output(name, desc, data);
  }
  std::vector<std::string> outputNames() const override {
    return engine_->outputNames();
  }
  std::vector<std::string> notes() const override { return engine_->notes(); }
  std::string describe() const override { return engine_->describe(); }

private:
  std::unique_ptr<CudaEngine> engine_;
};

CudaEngineOptions engineOptions(const GpuRunOptions &o) {
  CudaEngineOptions e;
  static_cast<GpuRunOptions &>(e) = o;
  return e;
}

#ifdef TPC_HAVE_NCCL
struct RankGroupContext {
  const std::vector<uint8_t> *id;
  int tp;
  int rank;
  int device;
  NcclOptions options;
};

Status makeRankGroup(void *ctx, cudaStream_t stream,
                     std::unique_ptr<DeviceCommGroup> &out) {
  auto *c = static_cast<RankGroupContext *>(ctx);
  std::unique_ptr<NcclGroup> g;
  TPC_RETURN_IF_ERROR(NcclGroup::createRank(*c->id, c->tp, c->rank, c->device,
                                            stream, c->options, g));
  out = std::move(g);
  return Status::ok();
}
#endif

Status moduleCreateRunner(const std::string &dir, const GpuRunOptions &options,
                          std::unique_ptr<EngineRunner> &out) {
  out.reset();
  std::unique_ptr<CudaEngine> engine;
  TPC_RETURN_IF_ERROR(CudaEngine::load(dir, engineOptions(options), engine));
  out = std::make_unique<CudaRunner>(std::move(engine));
  return Status::ok();
}

Status moduleNewNcclId(std::vector<uint8_t> &bytes) {
#ifdef TPC_HAVE_NCCL
  return NcclGroup::newUniqueId(bytes);
#else
  bytes.clear();
  return Status::error("this tpc was built without NCCL");
#endif
}

Status moduleCreateRankRunner(const EngineManifest &manifest, int rank,
                              int device, const std::vector<uint8_t> &ncclId,
                              const GpuRunOptions &options,
                              std::unique_ptr<EngineRunner> &out) {
  out.reset();
  std::unique_ptr<CudaEngine> engine;
#ifdef TPC_HAVE_NCCL
  RankGroupContext ctx{&ncclId, manifest.tp, rank, device, NcclOptions()};
  ctx.options.timeout = options.commTimeout;
  TPC_RETURN_IF_ERROR(CudaEngine::loadRank(manifest, rank, device,
                                           engineOptions(options),
                                           makeRankGroup, &ctx, engine));
#else
  (void)ncclId;
  if (manifest.tp > 1)
    return Status::error("this tpc was built without NCCL; one rank per "
                         "process on GPUs needs it");
  TPC_RETURN_IF_ERROR(CudaEngine::loadRank(
      manifest, rank, device, engineOptions(options), nullptr, nullptr,
      engine));
#endif
  out = std::make_unique<CudaRunner>(std::move(engine));
  return Status::ok();
}

} // namespace
} // namespace tpc::runtime

extern "C" __attribute__((visibility("default"))) const
    tpc::runtime::CudaModuleApi *
    tpcCudaModuleApi() {
  using namespace tpc::runtime;
  static const CudaModuleApi api = {kCudaModuleAbi,
                                    uint32_t(sizeof(GpuRunOptions)),
                                    uint32_t(sizeof(EngineManifest)),
                                    moduleCreateRunner,
                                    moduleNewNcclId,
                                    moduleCreateRankRunner};
  return &api;
}
