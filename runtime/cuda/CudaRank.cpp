//===- CudaRank.cpp - One rank of an engine on a GPU ----------------------===//
#include "runtime/cuda/CudaRank.h"

#include "kernels/cuda/Check.h"

#include <exception>
#include <map>

namespace tpc::runtime {

void DeviceMemory::release(uint8_t *data) {
  if (data)
    (void)cudaFree(data);
}

Status DeviceMemory::acquire(size_t bytes, const std::string &what,
                             uint8_t *&out) {
  const size_t rounded = std::max<size_t>(bytes, 1);
  void *raw = nullptr;
  cudaError_t err = cudaMalloc(&raw, rounded);
  if (err != cudaSuccess)
    return cuda::cudaStatus(err, "allocating " + std::to_string(bytes) +
                                     " bytes of device memory for the " +
                                     what);
  err = cudaMemset(raw, 0, rounded);
  if (err != cudaSuccess) {
    (void)cudaFree(raw);
    return cuda::cudaStatus(err, "zeroing the device memory for the " + what);
  }
  out = static_cast<uint8_t *>(raw);
  return Status::ok();
}

Status CudaRank::create(RankEngine &engine, int device, cudaStream_t stream,
                        const CudaRankOptions &options,
                        std::unique_ptr<CudaRank> &out) {
  out.reset();
  std::unique_ptr<CudaRank> r(new CudaRank(engine));
  r->device_ = device;
  r->stream_ = stream;
  r->options_ = options;
  const std::string who = "rank " + std::to_string(engine.rank()) + ": ";
  TPC_RETURN_IF_ERROR(
      cuda::cudaResult(cudaSetDevice(device), "cudaSetDevice")
          .withContext(who));
  TPC_RETURN_IF_ERROR(cuda::KernelContext::create(options.gemmWorkspaceBytes,
                                                  options.allowTf32,
                                                  r->context_)
                          .withContext(who));
  TPC_RETURN_IF_ERROR(r->uploadWeights().withContext(who));
  TPC_RETURN_IF_ERROR(r->prepareSteps());
  // cudaMemset and pageable cudaMemcpy run on the legacy default stream and
  // may return before the device has finished; the rank's stream is
  // non-blocking and would not wait for them, so the first forward could
  // read weights or zeroes still in flight.
  TPC_RETURN_IF_ERROR(
      cuda::cudaResult(cudaDeviceSynchronize(),
                       "waiting for the weight upload and arena set-up")
          .withContext(who));
  out = std::move(r);
  return Status::ok();
}

CudaRank::~CudaRank() {
  // Work still queued may use the buffers freed below.
  if (stream_) {
    (void)cudaSetDevice(device_);
    (void)cudaStreamSynchronize(stream_);
  }
  steps_.clear();
  context_.reset();
}

std::string CudaRank::where(size_t step) const {
  return "rank " + std::to_string(rank()) + ": " +
         engine_.plan().describeStep(step) + ": ";
}

Status CudaRank::resetState() {
  TPC_CUDA_CHECK(cudaSetDevice(device_));
  // On the rank's stream, after any forward still queued there, and done
  // before the caller queues the next one.
  for (auto &[id, st] : states_)
    if (st.size())
      TPC_CUDA_CHECK(cudaMemsetAsync(st.data(), 0, st.size(), stream_));
  TPC_CUDA_CHECK(cudaStreamSynchronize(stream_));
  return Status::ok();
}

Status CudaRank::uploadWeights() {
  const RankPlan &plan = engine_.plan();
  bufferPtrs_.assign(plan.buffers.size(), nullptr);
  // Buffers naming the same tensor share its mapped bytes; copy each
  // tensor once, 256-byte aligned.
  std::map<const uint8_t *, size_t> offsets;
  size_t total = 0;
  for (const PlanBuffer &b : plan.buffers) {
    if (b.kind != BufferKind::Weight)
      continue;
    const uint8_t *host = engine_.bufferData(b.id);
    if (offsets.emplace(host, total).second)
      total += (size_t(b.bytes) + 255) / 256 * 256;
  }
  TPC_RETURN_IF_ERROR(weights_.allocate(total, "weights"));
  std::map<const uint8_t *, bool> copied;
  for (const PlanBuffer &b : plan.buffers) {
    if (b.kind != BufferKind::Weight)
      continue;
    const uint8_t *host = engine_.bufferData(b.id);
    uint8_t *dev = weights_.data() + offsets[host];
    bufferPtrs_[b.id] = dev;
    if (copied[host] || !b.bytes)
      continue;
    copied[host] = true;
    cudaError_t err =
        cudaMemcpy(dev, host, size_t(b.bytes), cudaMemcpyHostToDevice);
    if (err != cudaSuccess)
      return cuda::cudaStatus(err, "copying weight '" + b.tensor +
                                       "' to the device");
  }
  return Status::ok();
}

namespace {

std::string describeDescs(const std::vector<TensorDesc> &descs) {
  std::string s;
  for (const TensorDesc &d : descs)
    s += (s.empty() ? "" : ", ") +
         (d.shape.size() == 1 && d.shape[0] == -1 ? std::string("absent")
                                                  : d.str());
  return s;
}

} // namespace

Status CudaRank::prepareSteps() {
  const RankPlan &plan = engine_.plan();
  steps_.resize(plan.steps.size());
  size_t scratchBytes = 0;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep &ps = plan.steps[i];
    Step &step = steps_[i];
    if (ps.kind != StepKind::Kernel) {
      step.collective.init(engine_.steps()[i].collective);
      scratchBytes = std::max(scratchBytes, step.collective.scratchBytes());
      ++numCollectives_;
      continue;
    }
    std::vector<TensorDesc> in, out;
    for (uint32_t id : ps.inputs)
      in.push_back(id == kAbsentBuffer ? TensorDesc{DType::F32, {-1}}
                                       : plan.buffers[id].desc);
    for (uint32_t id : ps.outputs)
      out.push_back(plan.buffers[id].desc);
    const cuda::KernelDef *def = cuda::lookupCudaKernel(ps.kernel);
    if (!def)
      return Status::error(where(i) + "the CUDA backend has no kernel '" +
                           ps.kernel + "'");
    Status st;
    try {
      st = def->prepare(*context_, in, out, ps.attrs, step.kernel);
    } catch (const std::exception &ex) {
      st = Status::error(std::string("exception: ") + ex.what());
    }
    if (st && !step.kernel)
      st = Status::error("prepare returned no kernel");
    if (!st)
      return Status::error(where(i) + ps.kernel +
                           " rejected its operands on the GPU (inputs " +
                           describeDescs(in) + "; outputs " +
                           describeDescs(out) + "): " + st.message());
  }

  const std::string who = "rank " + std::to_string(rank()) + ": ";
  TPC_RETURN_IF_ERROR(
      arena_.allocate(size_t(plan.arena.bytes), "arena").withContext(who));
  TPC_RETURN_IF_ERROR(scratch_.allocate(scratchBytes, "collective scratch")
                          .withContext(who));
  for (const PlanBuffer &b : plan.buffers) {
    if (b.kind == BufferKind::Arena)
      bufferPtrs_[b.id] = arena_.data() + b.offset;
    if (b.kind == BufferKind::State) {
      TPC_RETURN_IF_ERROR(states_[b.id]
                              .allocate(size_t(b.bytes), "state '" + b.name + "'")
                              .withContext(who));
      bufferPtrs_[b.id] = states_[b.id].data();
    }
  }

  // Kernels load whole elements: every operand must be aligned to its
  // element size (the compiler aligns arena offsets to 64 bytes).
  for (const PlanBuffer &b : plan.buffers)
    if (bufferPtrs_[b.id] &&
        reinterpret_cast<uintptr_t>(bufferPtrs_[b.id]) %
                dtypeSize(b.desc.dtype) !=
            0)
      return Status::error(who + plan.describeBuffer(b.id) +
                           " is not aligned to its element size (arena "
                           "offset " +
                           std::to_string(b.offset) +
                           "); the CUDA backend needs aligned buffers");

  for (size_t i = 0; i < steps_.size(); ++i)
    steps_[i].bindOperands(plan.steps[i], bufferPtrs_);
  return Status::ok();
}

Status CudaRank::enqueueKernels(size_t &pos, bool syncEachStep) {
  for (; pos < steps_.size() && steps_[pos].kernel; ++pos) {
    Step &s = steps_[pos];
    Status st =
        s.kernel->run(s.inputs.data(), s.outputs.data(), stream_);
    if (st && syncEachStep)
      st = cuda::cudaResult(cudaStreamSynchronize(stream_),
                            "the step's kernel");
    if (!st)
      return st.withContext(where(pos));
  }
  return Status::ok();
}

Status CudaRank::collectiveBefore(size_t i) {
  Step &s = steps_[i];
  return s.collective.before(s.inputs[0], s.outputs[0], scratch_.data(),
                             stream_)
      .withContext(where(i));
}

Status CudaRank::collectiveCommunicate(size_t i, Communicator *comm) {
  Step &s = steps_[i];
  return s.collective.communicate(comm, s.inputs[0], s.outputs[0],
                                  scratch_.data())
      .withContext(where(i));
}

Status CudaRank::collectiveAfter(size_t i) {
  Step &s = steps_[i];
  return s.collective.after(s.inputs[0], s.outputs[0], scratch_.data(),
                            stream_)
      .withContext(where(i));
}

Status CudaRank::checkIndices() {
  int64_t record[cuda::KernelContext::kIndexRecordWords];
  TPC_RETURN_IF_ERROR(context_->readIndexRecord(record));
  if (record[0] == 0)
    return Status::ok();
  const int64_t slot = record[0] - 1, k = record[1], v = record[2];
  for (size_t i = 0; i < steps_.size(); ++i) {
    const cuda::IndexCheck *c =
        steps_[i].kernel ? steps_[i].kernel->indexCheck() : nullptr;
    if (!c || c->slot != slot)
      continue;
    const int64_t dim = c->dims[size_t(k % c->depth)];
    return Status::outOfRange(where(i) + "indices (input " +
                         std::to_string(c->input) + ") element " +
                         std::to_string(k) + " is " + std::to_string(v) +
                         ", outside [" + std::to_string(-dim) + ", " +
                         std::to_string(dim) + ")");
  }
  return Status::error("rank " + std::to_string(rank()) +
                       ": an index was out of range in a step this rank "
                       "does not know (index slot " +
                       std::to_string(slot) + ")");
}

} // namespace tpc::runtime
