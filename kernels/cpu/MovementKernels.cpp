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

using Operands = std::vector<TensorDesc>;

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

template <class Fn>
std::unique_ptr<PreparedKernel> indexChecked(Fn fn, const TensorDesc &indices,
                                             std::vector<int64_t> dims) {
  return std::make_unique<IndexChecked>(makeKernel(std::move(fn)), 1,
                                        indices.dtype, indices.numel(),
                                        std::move(dims));
}

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

/// The adapter of movement op Op. The primary template is that of the ops
/// that are one strided copy (Transpose, Expand, Tile, Slice); the others
/// are specialized below.
template <MovementOp Op>
Status prepareMovement(const Operands &in, const Operands &out,
                       const Attrs &attrs,
                       std::unique_ptr<PreparedKernel> &kernel) {
  StridedCopyParams p;
  TPC_RETURN_IF_ERROR(stridedCopyBuilder(Op)(in, out, attrs, p));
  kernel = makeKernel(
      [p](const void *const *i, void *const *o, const ExecContext &ctx) {
        stridedCopy(p, i[0], o[0], ctx.numThreads);
      });
  return Status::ok();
}

template <>
Status
prepareMovement<MovementOp::Pad>(const Operands &in, const Operands &out,
                                 const Attrs &attrs,
                                 std::unique_ptr<PreparedKernel> &kernel) {
  PadParams p;
  TPC_RETURN_IF_ERROR(makePadParams(in, out, attrs, p));
  // The pad value converted once to the element type.
  const uint64_t fill = scalarPattern(p.value, in[0].dtype);
  const size_t es = dtypeSize(in[0].dtype);
  kernel = makeKernel([p, fill, es](const void *const *i, void *const *o,
                                    const ExecContext &ctx) {
    fillKernel(es, p.numel, &fill, o[0]);
    stridedCopy(p.copy, i[0], o[0], ctx.numThreads);
  });
  return Status::ok();
}

template <>
Status
prepareMovement<MovementOp::Concat>(const Operands &in, const Operands &out,
                                    const Attrs &attrs,
                                    std::unique_ptr<PreparedKernel> &kernel) {
  ConcatParams p;
  TPC_RETURN_IF_ERROR(makeConcatParams(in, out, attrs, p));
  kernel = makeKernel(
      [p](const void *const *i, void *const *o, const ExecContext &ctx) {
        concatKernel(p, i, o[0], ctx.numThreads);
      });
  return Status::ok();
}

template <>
Status
prepareMovement<MovementOp::Split>(const Operands &in, const Operands &out,
                                   const Attrs &attrs,
                                   std::unique_ptr<PreparedKernel> &kernel) {
  ConcatParams p;
  TPC_RETURN_IF_ERROR(makeSplitParams(in, out, attrs, p));
  kernel = makeKernel(
      [p](const void *const *i, void *const *o, const ExecContext &ctx) {
        splitKernel(p, i[0], o, ctx.numThreads);
      });
  return Status::ok();
}

template <>
Status
prepareMovement<MovementOp::Gather>(const Operands &in, const Operands &out,
                                    const Attrs &attrs,
                                    std::unique_ptr<PreparedKernel> &kernel) {
  GatherParams p;
  TPC_RETURN_IF_ERROR(makeGatherParams(in, out, attrs, p));
  kernel = indexChecked(
      [p](const void *const *i, void *const *o, const ExecContext &) {
        gatherKernel(p, i[0], i[1], o[0]);
      },
      in[1], {p.axisDim});
  return Status::ok();
}

template <>
Status prepareMovement<MovementOp::GatherElements>(
    const Operands &in, const Operands &out, const Attrs &attrs,
    std::unique_ptr<PreparedKernel> &kernel) {
  GatherElementsParams p;
  TPC_RETURN_IF_ERROR(makeGatherElementsParams(in, out, attrs, p));
  kernel = indexChecked(
      [p](const void *const *i, void *const *o, const ExecContext &) {
        gatherElementsKernel(p, i[0], i[1], o[0]);
      },
      in[1], {p.axisDim});
  return Status::ok();
}

template <>
Status
prepareMovement<MovementOp::GatherND>(const Operands &in, const Operands &out,
                                      const Attrs &attrs,
                                      std::unique_ptr<PreparedKernel> &kernel) {
  GatherNDParams p;
  TPC_RETURN_IF_ERROR(makeGatherNDParams(in, out, attrs, p));
  kernel = indexChecked(
      [p](const void *const *i, void *const *o, const ExecContext &) {
        gatherNDKernel(p, i[0], i[1], o[0]);
      },
      in[1], p.dims);
  return Status::ok();
}

template <>
Status prepareMovement<MovementOp::ScatterND>(
    const Operands &in, const Operands &out, const Attrs &attrs,
    std::unique_ptr<PreparedKernel> &kernel) {
  ScatterNDParams p;
  TPC_RETURN_IF_ERROR(makeScatterNDParams(in, out, attrs, p));
  kernel = indexChecked(
      [p](const void *const *i, void *const *o, const ExecContext &) {
        scatterNDKernel(p, i[0], i[1], i[2], o[0]);
      },
      in[1], p.dims);
  return Status::ok();
}

template <>
Status prepareMovement<MovementOp::ScatterElements>(
    const Operands &in, const Operands &out, const Attrs &attrs,
    std::unique_ptr<PreparedKernel> &kernel) {
  ScatterElementsParams p;
  TPC_RETURN_IF_ERROR(makeScatterElementsParams(in, out, attrs, p));
  kernel = indexChecked(
      [p](const void *const *i, void *const *o, const ExecContext &) {
        scatterElementsKernel(p, i[0], i[1], i[2], o[0]);
      },
      in[1], {p.axisDim});
  return Status::ok();
}

template <>
Status
prepareMovement<MovementOp::Trilu>(const Operands &in, const Operands &out,
                                   const Attrs &attrs,
                                   std::unique_ptr<PreparedKernel> &kernel) {
  TriluParams p;
  TPC_RETURN_IF_ERROR(makeTriluParams(in, out, attrs, p));
  kernel = makeKernel([p](const void *const *i, void *const *o,
                          const ExecContext &) { triluKernel(p, i[0], o[0]); });
  return Status::ok();
}

template <>
Status prepareMovement<MovementOp::CacheWrite>(
    const Operands &in, const Operands &out, const Attrs &attrs,
    std::unique_ptr<PreparedKernel> &kernel) {
  CacheWriteParams p;
  TPC_RETURN_IF_ERROR(makeCacheWriteParams(in, out, attrs, p));
  kernel = std::make_unique<CacheWriteKernel>(p);
  return Status::ok();
}

} // namespace

TPC_DEFINE_LISTED_KERNELS(addMovementKernels, KernelTable, kMovementKernels,
                          prepareMovement)

} // namespace tpc::cpu
