//===- RankEngine.h - One rank of a loaded engine ---------------*- C++ -*-===//
//
// Loading a rank does all the work that can fail before anything runs: the
// files are checked against engine.json, the plan is parsed and validated,
// weight buffers are bound to tensors of the mapped safetensors file, every
// kernel is prepared for its operand shapes, and the arena is allocated.
// A Session then only moves pointers and calls kernels.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_ENGINE_RANKENGINE_H
#define TPC_RUNTIME_ENGINE_RANKENGINE_H

#include "kernels/cpu/Registry.h"
#include "runtime/engine/Collectives.h"
#include "runtime/engine/EngineManifest.h"
#include "runtime/engine/PreparedStep.h"
#include "runtime/engine/RankPlan.h"
#include "runtime/io/Safetensors.h"
#include "runtime/support/OwnedBuffer.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tpc::runtime {

/// Host memory aligned to a cache line, at least one line (even an empty
/// arena has a valid address), its pages touched when allocated.
struct AlignedHostMemory {
  static constexpr size_t kAlignment = 64;
  static Status acquire(size_t bytes, const std::string &what, uint8_t *&out);
  static void release(uint8_t *data);
};
using AlignedBuffer = OwnedBuffer<AlignedHostMemory>;

struct RankEngineOptions {
  /// Prepare the CPU kernels and allocate the host arena, so that a Session
  /// can run the engine. Off for engines that another backend runs (the
  /// plan, the mapped weights and the validated collectives are still
  /// loaded).
  bool hostExecution = true;
  /// Without hostExecution, still prepare every CPU kernel (and then drop
  /// it), so that a step the runtime would refuse is found: `tpc compile`
  /// loads each rank this way before it publishes an engine.
  bool checkKernels = false;
  /// Check the rank files' SHA-256 against engine.json (their sizes are
  /// always checked). Off only where the caller has just written them.
  bool verifyDigests = true;
};

class RankEngine {
public:
  /// A step ready to run: a prepared CPU kernel or a collective.
  using Step = PreparedStep<cpu::PreparedKernel, PreparedCollective>;

  /// Loads rank `rank` of the engine in `dir`.
  static Status load(const std::string &dir, int rank,
                     std::unique_ptr<RankEngine> &out);
  /// Loads rank `rank` of an engine whose manifest was already read.
  static Status load(const EngineManifest &manifest, int rank,
                     std::unique_ptr<RankEngine> &out);
  static Status load(const EngineManifest &manifest, int rank,
                     const RankEngineOptions &options,
                     std::unique_ptr<RankEngine> &out);
  /// Loads ranks `ranks` of `manifest` in parallel (loading hashes every
  /// file and maps the weights), out[i] for ranks[i]; the lowest failing
  /// rank's error is returned.
  static Status loadRanks(const EngineManifest &manifest,
                          const std::vector<int> &ranks,
                          const RankEngineOptions &options,
                          std::vector<std::unique_ptr<RankEngine>> &out);

  ~RankEngine();
  RankEngine(const RankEngine &) = delete;
  RankEngine &operator=(const RankEngine &) = delete;

  int rank() const { return plan_.rank; }
  int worldSize() const { return plan_.worldSize; }
  const EngineManifest &manifest() const { return manifest_; }
  const RankPlan &plan() const { return plan_; }
  const std::vector<Step> &steps() const { return steps_; }
  std::vector<Step> &steps() { return steps_; }

  /// Whether the engine was loaded for a Session (hostExecution).
  bool hostExecutable() const { return options_.hostExecution; }

  /// Address of buffer `id`: in the arena, or in the mapped weights. Arena
  /// buffers have no address without hostExecution.
  uint8_t *bufferData(uint32_t id) const { return bufferPtrs_[id]; }
  size_t arenaBytes() const { return arena_.size(); }
  /// Bytes of the weight tensors the plan uses.
  uint64_t weightBytes() const { return weightBytes_; }
  /// Bytes of the engine state (KV caches) this rank holds.
  uint64_t stateBytes() const { return stateBytes_; }
  /// Zeroes the engine state, so that the next forward starts a new
  /// sequence (a KV cache's stale entries are masked, but zeros keep them
  /// finite whatever ran before).
  void resetState();

  /// The values of the plan's run-time dimensions the steps are prepared
  /// for: every symbol's maximum after load; empty for a static plan.
  const SymbolValues &symbolValues() const { return values_; }
  /// Makes the next forward run at `values` (in RankPlan::symbols order):
  /// the steps whose shapes or attributes depend on the symbols are
  /// prepared for them, or taken back from an earlier forward at the same
  /// values (the last kKeptBindings are kept; weights packed at load are
  /// shared, not packed again). Arena offsets stay those of the maxima,
  /// which hold every smaller shape. A value outside its symbol's range is
  /// an error. Nothing to do for a static plan.
  Status bindSymbols(const SymbolValues &values);
  static constexpr size_t kKeptBindings = 8;

  /// The plan binding of a graph input or output; nullptr if there is none.
  const PlanBinding *findInput(const std::string &name) const;
  const PlanBinding *findOutput(const std::string &name) const;

private:
  RankEngine() = default;
  Status bindWeights();
  Status checkBindings();
  Status prepareSteps();
  /// Prepares step `index` for `values` into `kernel` / `collective`.
  Status prepareStep(size_t index, const SymbolValues &values,
                     std::unique_ptr<cpu::PreparedKernel> &kernel,
                     PreparedCollective &collective) const;

  /// The symbolic steps' prepared forms for one set of symbol values that
  /// is not running now, and the leading blocks of weights at those values.
  struct Binding {
    std::vector<std::unique_ptr<cpu::PreparedKernel>> kernels;
    std::vector<PreparedCollective> collectives;
    /// One per blockBuffers_ entry (none at the maxima: the whole tensor).
    std::vector<std::unique_ptr<AlignedBuffer>> blocks;
    uint64_t lastUse = 0;
  };
  /// The elements of an integer weight with value expressions at `values`.
  static Status valuesAt(const PlanBuffer &b, const SymbolValues &values,
                         std::vector<int64_t> &out);
  Status makeBinding(const SymbolValues &values, Binding &out) const;

  EngineManifest manifest_;
  RankEngineOptions options_;
  std::string planFile_;
  RankPlan plan_;
  SafetensorsFile weights_;
  /// Aligned copies of the weight tensors the file stores misaligned.
  std::map<std::string, AlignedBuffer> alignedCopies_;
  AlignedBuffer arena_;
  /// One zeroed buffer per state buffer of the plan, by buffer id.
  std::map<uint32_t, AlignedBuffer> states_;
  uint64_t stateBytes_ = 0;
  std::vector<uint8_t *> bufferPtrs_;
  std::vector<Step> steps_;
  uint64_t weightBytes_ = 0;
  /// Run-time dimensions: the values the steps run at, the steps that
  /// depend on them, the bindings kept from earlier forwards (the active
  /// one holds only its blocks), the kernels bound to the weights at load
  /// (by step; they live in steps_ or in the maxima's binding) and the
  /// leading-block weight buffers.
  SymbolValues values_;
  std::vector<size_t> symbolicSteps_;
  std::map<SymbolValues, Binding> bindings_;
  std::vector<const cpu::PreparedKernel *> loadKernels_;
  std::vector<uint32_t> blockBuffers_;
  uint64_t useClock_ = 0;
};

} // namespace tpc::runtime

#endif // TPC_RUNTIME_ENGINE_RANKENGINE_H
