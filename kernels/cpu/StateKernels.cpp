//===- StateKernels.cpp - Writing engine state (the KV cache) -------------===//
//
// CacheWrite(state, update, position) copies `update` into `state` at
// [position, position + n) of `axis` and outputs the state itself: the
// runtime hands the state's buffer as input 0 and output 0, and the copy
// writes only the new rows (a whole-cache copy would cost the cache per
// step). A position outside the cache fails the run (runStatus) and writes
// nothing.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/KernelTable.h"
#include "kernels/cpu/Support.h"

#include <cstring>

namespace tpc::cpu {
namespace {

class CacheWriteKernel final : public PreparedKernel {
public:
  /// The state is [outer, length, inner] bytes around `axis`; the update
  /// [outer, n, inner].
  CacheWriteKernel(int64_t outer, int64_t length, int64_t n, size_t rowBytes)
      : outer_(outer), length_(length), n_(n), rowBytes_(rowBytes) {}

  void run(const void *const *inputs, void *const *outputs,
           const ExecContext &) override {
    auto *state = static_cast<uint8_t *>(outputs[0]);
    const auto *src = static_cast<const uint8_t *>(inputs[1]);
    int64_t pos = *static_cast<const int64_t *>(inputs[2]);
    status_ = Status::ok();
    if (pos < 0 || pos > length_ - n_) {
      status_ = Status::outOfRange(
          "cache position " + std::to_string(pos) + " with " +
          std::to_string(n_) + " new entries lies outside the cache of " +
          std::to_string(length_) + " positions");
      return;
    }
    // The state arrives as input 0 in the same buffer: keep its contents.
    if (inputs[0] != outputs[0])
      std::memmove(state, inputs[0], size_t(outer_ * length_) * rowBytes_);
    for (int64_t o = 0; o < outer_; ++o)
      std::memmove(state + (size_t(o * length_ + pos)) * rowBytes_,
                  src + size_t(o * n_) * rowBytes_, size_t(n_) * rowBytes_);
  }
  Status runStatus() const override { return status_; }

private:
  int64_t outer_, length_, n_;
  size_t rowBytes_;
  Status status_;
};

Status prepareCacheWrite(const std::vector<TensorDesc> &in,
                         const std::vector<TensorDesc> &out, const Attrs &attrs,
                         std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(checkArity(in, out, 3, 3, 1, 1));
  TPC_RETURN_IF_ERROR(checkDescs(in, out));
  const TensorDesc &state = in[0], &update = in[1], &position = in[2];
  TPC_RETURN_IF_ERROR(checkSameDType(state, "input 0", update, "input 1"));
  TPC_RETURN_IF_ERROR(checkSameDType(state, "input 0", out[0], "output 0"));
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], state.shape));
  TPC_RETURN_IF_ERROR(checkDType(position, "input 2", {DType::I64}));
  if (position.numel() != 1)
    return Status::error("input 2 (the position) must hold one value, not " +
                         fmtShape(position.shape));
  int64_t rank = int64_t(state.shape.size()), axis;
  TPC_RETURN_IF_ERROR(normalizeAxis(attrs.getInt("axis", 2), rank, "axis", axis));
  if (update.shape.size() != state.shape.size())
    return Status::error("input 1 " + fmtShape(update.shape) +
                         " and the state " + fmtShape(state.shape) +
                         " differ in rank");
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) {
    bool ok = d == axis ? update.shape[d] <= state.shape[d]
                        : update.shape[d] == state.shape[d];
    if (!ok)
      return Status::error("input 1 " + fmtShape(update.shape) +
                           " does not fit the state " +
                           fmtShape(state.shape) + " along axis " +
                           std::to_string(axis));
    if (d < axis)
      outer *= state.shape[d];
    if (d > axis)
      inner *= state.shape[d];
  }
  kernel = std::make_unique<CacheWriteKernel>(
      outer, state.shape[axis], update.shape[axis],
      size_t(inner) * dtypeSize(state.dtype));
  return Status::ok();
}

} // namespace

void addStateKernels(KernelTable &t) {
  t.push_back({"CacheWrite",
               "write new KV-cache entries at a position, in place",
               prepareCacheWrite});
}

} // namespace tpc::cpu
