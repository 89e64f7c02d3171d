//===- MovementKernels.cpp - Adapters of the data-movement kernels --------===//
//
// Each adapter builds its params with the backend-neutral builder
// (kernels/Movement.h) and binds the CPU kernel. Kernels that read indices
// fail the run on an index outside [-dim, dim): runStatus() names the
// indices input, the element and its value, as onnxruntime does; the
// kernel itself has yielded zeros or skipped the element by then.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/Cast.h"
#include "kernels/cpu/KernelTable.h"
#include "kernels/cpu/Movement.h"

namespace tpc::cpu {
namespace {

/// Wraps a kernel whose input `input` holds indices: after each run, finds
/// the first element outside [-dim, dim), dim cycling through `dims` (one
/// bound per tuple component).
class IndexChecked final : public PreparedKernel {
public:
  IndexChecked(std::unique_ptr<PreparedKernel> inner, size_t input,
               DType indexType, int64_t count, std::vector<int64_t> dims)
      : inner_(std::move(inner)), input_(input), indexType_(indexType),
        count_(count), dims_(std::move(dims)) {}
  void run(const void *const *inputs, void *const *outputs,
           const ExecContext &ctx) override {
    inner_->run(inputs, outputs, ctx);
    status_ = Status::ok();
    const void *indices = inputs[input_];
    const size_t depth = dims_.size();
    for (int64_t k = 0; k < count_; ++k) {
      int64_t v = indexType_ == DType::I64
                      ? static_cast<const int64_t *>(indices)[k]
                      : static_cast<const int32_t *>(indices)[k];
      int64_t dim = dims_[size_t(k) % depth];
      if (v < -dim || v >= dim) {
        status_ = Status::outOfRange(
            "indices (input " + std::to_string(input_) + ") element " +
            std::to_string(k) + " is " + std::to_string(v) + ", outside [" +
            std::to_string(-dim) + ", " + std::to_string(dim) + ")");
        return;
      }
    }
  }
  Status runStatus() const override { return status_; }
  void bindConstantInput(size_t index, const void *data) override {
    inner_->bindConstantInput(index, data);
  }

private:
  std::unique_ptr<PreparedKernel> inner_;
  size_t input_;
  DType indexType_;
  int64_t count_;
  std::vector<int64_t> dims_;
  Status status_;
};

/// The bound of each index a kernel reads, cycling per element: the
/// tuple's dims for GatherND and ScatterND, the axis's for the others.
std::vector<int64_t> indexBounds(const GatherNDParams &p) { return p.dims; }
std::vector<int64_t> indexBounds(const ScatterNDParams &p) { return p.dims; }
template <class Params> std::vector<int64_t> indexBounds(const Params &p) {
  return {p.axisDim};
}

/// The kernel running `Run`, checked for indices (input 1) out of range.
template <auto Run, class Params>
std::unique_ptr<PreparedKernel> bindIndexChecked(const Params &p,
                                                 const Operands &in) {
  return std::make_unique<IndexChecked>(bindRun<Run>(p), 1, in[1].dtype,
                                        in[1].numel(), indexBounds(p));
}

/// The adapter of a kernel that reads indices.
template <auto Build, auto Run>
constexpr PrepareFn prepareIndexChecked =
    prepareBound<Build, bindIndexChecked<Run, BuiltParamsOf<Build>>>;

/// The position is checked before anything is written: a position outside
/// [0, length - n] fails the run and leaves the state as it was.
class CacheWriteKernel final : public PreparedKernel {
public:
  explicit CacheWriteKernel(const CacheWriteParams &p) : p_(p) {}
  void run(const void *const *inputs, void *const *outputs,
           const ExecContext &) override {
    const int64_t pos = *static_cast<const int64_t *>(inputs[2]);
    status_ = Status::ok();
    if (pos < 0 || pos > p_.length - p_.n) {
      status_ = Status::outOfRange("cache position " + std::to_string(pos) +
                                   " with " + std::to_string(p_.n) +
                                   " new entries lies outside the cache of " +
                                   std::to_string(p_.length) + " positions");
      return;
    }
    cacheWriteKernel(p_, inputs[0], inputs[1], pos, outputs[0]);
  }
  Status runStatus() const override { return status_; }

private:
  CacheWriteParams p_;
  Status status_;
};

/// Transpose, Expand, Tile and Slice: one strided copy.
Status buildStridedCopy(MovementOp op, const Operands &in, const Operands &out,
                        const Attrs &attrs, StridedCopyParams &p) {
  return stridedCopyBuilder(op)(in, out, attrs, p);
}

void runStridedCopy(const StridedCopyParams &p, const void *const *i,
                    void *const *o, const ExecContext &ctx) {
  stridedCopy(p, i[0], o[0], ctx.numThreads);
}

template <MovementOp Op>
constexpr PrepareFn prepareStridedCopy =
    prepareWith<buildStridedCopy, runStridedCopy, Op>;

/// Pad: the pad value converted once to the element type.
std::unique_ptr<PreparedKernel> bindPad(const PadParams &p,
                                        const Operands &in) {
  const uint64_t fill = scalarPattern(p.value, in[0].dtype);
  const size_t es = dtypeSize(in[0].dtype);
  return makeKernel([p, fill, es](const void *const *i, void *const *o,
                                  const ExecContext &ctx) {
    fillKernel(es, p.numel, &fill, o[0]);
    stridedCopy(p.copy, i[0], o[0], ctx.numThreads);
  });
}

void runConcat(const ConcatParams &p, const void *const *i, void *const *o,
               const ExecContext &ctx) {
  concatKernel(p, i, o[0], ctx.numThreads);
}

void runSplit(const ConcatParams &p, const void *const *i, void *const *o,
              const ExecContext &ctx) {
  splitKernel(p, i[0], o, ctx.numThreads);
}

void runGather(const GatherParams &p, const void *const *i, void *const *o,
               const ExecContext &) {
  gatherKernel(p, i[0], i[1], o[0]);
}

void runGatherElements(const GatherElementsParams &p, const void *const *i,
                       void *const *o, const ExecContext &) {
  gatherElementsKernel(p, i[0], i[1], o[0]);
}

void runGatherND(const GatherNDParams &p, const void *const *i, void *const *o,
                 const ExecContext &) {
  gatherNDKernel(p, i[0], i[1], o[0]);
}

void runScatterND(const ScatterNDParams &p, const void *const *i,
                  void *const *o, const ExecContext &) {
  scatterNDKernel(p, i[0], i[1], i[2], o[0]);
}

void runScatterElements(const ScatterElementsParams &p, const void *const *i,
                        void *const *o, const ExecContext &) {
  scatterElementsKernel(p, i[0], i[1], i[2], o[0]);
}

void runTrilu(const TriluParams &p, const void *const *i, void *const *o,
              const ExecContext &) {
  triluKernel(p, i[0], o[0]);
}

std::unique_ptr<PreparedKernel> bindCacheWrite(const CacheWriteParams &p,
                                               const Operands &) {
  return std::make_unique<CacheWriteKernel>(p);
}

} // namespace

void addMovementKernels(KernelTable &t) {
  addFamily(
      t, kMovementKernels,
      {{MovementOp::Transpose, prepareStridedCopy<MovementOp::Transpose>},
       {MovementOp::Expand, prepareStridedCopy<MovementOp::Expand>},
       {MovementOp::Tile, prepareStridedCopy<MovementOp::Tile>},
       {MovementOp::Slice, prepareStridedCopy<MovementOp::Slice>},
       {MovementOp::Pad, prepareBound<makePadParams, bindPad>},
       {MovementOp::Concat, prepareWith<makeConcatParams, runConcat>},
       {MovementOp::Split, prepareWith<makeSplitParams, runSplit>},
       {MovementOp::Gather, prepareIndexChecked<makeGatherParams, runGather>},
       {MovementOp::GatherElements,
        prepareIndexChecked<makeGatherElementsParams, runGatherElements>},
       {MovementOp::GatherND,
        prepareIndexChecked<makeGatherNDParams, runGatherND>},
       {MovementOp::ScatterND,
        prepareIndexChecked<makeScatterNDParams, runScatterND>},
       {MovementOp::ScatterElements,
        prepareIndexChecked<makeScatterElementsParams, runScatterElements>},
       {MovementOp::Trilu, prepareWith<makeTriluParams, runTrilu>},
       {MovementOp::CacheWrite,
        prepareBound<makeCacheWriteParams, bindCacheWrite>}});
}

} // namespace tpc::cpu
