//===- RankEngine.cpp - Loading one rank of an engine ---------------------===//
#include "runtime/engine/RankEngine.h"

#include "runtime/support/MappedFile.h"

#include <climits>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <set>
#include <thread>

namespace tpc::runtime {

void AlignedHostMemory::release(uint8_t *data) { std::free(data); }

Status AlignedHostMemory::acquire(size_t bytes, const std::string &what,
                                  uint8_t *&out) {
  size_t rounded = (std::max<size_t>(bytes, 1) + kAlignment - 1) / kAlignment *
                   kAlignment;
  if (rounded < bytes)
    return Status::error("cannot allocate " + std::to_string(bytes) +
                         " bytes for the " + what);
  out = static_cast<uint8_t *>(std::aligned_alloc(kAlignment, rounded));
  if (!out)
    return Status::error("cannot allocate " + std::to_string(bytes) +
                         " bytes for the " + what + " (out of memory)");
  // Touching every page now moves the page faults out of the first forward
  // and makes an over-commit fail here rather than mid-run.
  std::memset(out, 0, rounded);
  return Status::ok();
}

RankEngine::~RankEngine() = default;

Status RankEngine::load(const std::string &dir, int rank,
                        std::unique_ptr<RankEngine> &out) {
  EngineManifest manifest;
  TPC_RETURN_IF_ERROR(EngineManifest::load(dir, manifest, /*holdFolder=*/true));
  Status st = load(manifest, rank, out);
  manifest.releaseFolder();
  return st;
}

Status RankEngine::load(const EngineManifest &manifest, int rank,
                        std::unique_ptr<RankEngine> &out) {
  return load(manifest, rank, RankEngineOptions(), out);
}

Status RankEngine::load(const EngineManifest &manifest, int rank,
                        const RankEngineOptions &options,
                        std::unique_ptr<RankEngine> &out) {
  out.reset();
  if (rank < 0 || rank >= manifest.tp)
    return Status::error("rank " + std::to_string(rank) +
                         " does not exist in an engine with tp " +
                         std::to_string(manifest.tp));
  const RankRecord &rec = manifest.ranks[size_t(rank)];
  TPC_RETURN_IF_ERROR(verifyFile(manifest, rec.plan, options.verifyDigests));
  TPC_RETURN_IF_ERROR(
      verifyFile(manifest, rec.weights, options.verifyDigests));

  std::unique_ptr<RankEngine> e(new RankEngine());
  e->manifest_ = manifest;
  e->options_ = options;
  e->planFile_ = rec.plan.file;
  {
    MappedFile planFile;
    TPC_RETURN_IF_ERROR(MappedFile::open(manifest.pathOf(rec.plan.file),
                                         planFile)
                            .withContext(rec.plan.file + ": "));
    TPC_RETURN_IF_ERROR(parseRankPlan(planFile.data(), planFile.size(),
                                      rec.plan.file, e->plan_));
  }
  if (e->plan_.rank != rank || e->plan_.worldSize != manifest.tp)
    return Status::error(rec.plan.file + ": the plan is for rank " +
                         std::to_string(e->plan_.rank) + " of " +
                         std::to_string(e->plan_.worldSize) +
                         ", but engine.json lists it for rank " +
                         std::to_string(rank) + " of " +
                         std::to_string(manifest.tp));
  TPC_RETURN_IF_ERROR(
      SafetensorsFile::open(manifest.pathOf(rec.weights.file), e->weights_)
          .withContext(rec.weights.file + ": "));
  TPC_RETURN_IF_ERROR(e->bindWeights());
  TPC_RETURN_IF_ERROR(e->checkBindings());
  TPC_RETURN_IF_ERROR(e->prepareSteps());
  out = std::move(e);
  return Status::ok();
}

Status RankEngine::loadRanks(const EngineManifest &manifest,
                             const std::vector<int> &ranks,
                             const RankEngineOptions &options,
                             std::vector<std::unique_ptr<RankEngine>> &out) {
  out.clear();
  out.resize(ranks.size());
  std::vector<Status> loaded(ranks.size());
  std::vector<std::thread> threads;
  // The first rank loads on this thread.
  for (size_t i = 1; i < ranks.size(); ++i)
    threads.emplace_back(
        [&, i] { loaded[i] = load(manifest, ranks[i], options, out[i]); });
  if (!ranks.empty())
    loaded[0] = load(manifest, ranks[0], options, out[0]);
  for (std::thread &t : threads)
    t.join();
  for (const Status &st : loaded)
    TPC_RETURN_IF_ERROR(st);
  return Status::ok();
}

Status RankEngine::bindWeights() {
  const std::string &weightsFile = manifest_.ranks[size_t(rank())].weights.file;
  bufferPtrs_.assign(plan_.buffers.size(), nullptr);
  std::set<std::string> counted;
  for (const PlanBuffer &b : plan_.buffers) {
    if (b.kind != BufferKind::Weight)
      continue;
    const SafetensorsTensor *t = weights_.find(b.tensor);
    if (!t)
      return Status::error(planFile_ + ": " + plan_.describeBuffer(b.id) +
                           " names weight tensor '" + b.tensor +
                           "', which " + weightsFile + " does not have");
    if (!safetensorsHolds(t->desc.dtype, b.desc.dtype) ||
        t->desc.shape != b.desc.shape)
      return Status::error(planFile_ + ": " + plan_.describeBuffer(b.id) +
                           " names weight tensor '" + b.tensor + "', which is " +
                           t->desc.str() + " in " + weightsFile);
    // Steps never write weight buffers (parseRankPlan refuses that), so the
    // read-only mapping may be handed out as a mutable pointer.
    auto *data = const_cast<uint8_t *>(static_cast<const uint8_t *>(t->data));
    // Kernels load elements with typed (vector) loads. A file laid out by
    // tpc aligns every tensor; one whose header was edited by hand may not,
    // and such a tensor is read from an aligned copy instead.
    if (reinterpret_cast<uintptr_t>(data) % dtypeSize(t->desc.dtype) != 0) {
      auto [it, fresh] = alignedCopies_.try_emplace(b.tensor);
      if (fresh) {
        TPC_RETURN_IF_ERROR(it->second.allocate(
            t->size, "an aligned copy of weight '" + b.tensor + "'"));
        std::memcpy(it->second.data(), data, t->size);
      }
      data = it->second.data();
    }
    bufferPtrs_[b.id] = data;
    if (counted.insert(b.tensor).second)
      weightBytes_ += t->size;
  }
  return Status::ok();
}

/// The plan's graph inputs and outputs must be exactly those of engine.json,
/// with the same descriptions, so that setInput() can check against either.
Status RankEngine::checkBindings() {
  auto check = [&](const std::vector<PlanBinding> &bindings,
                   const std::vector<TensorSpec> &specs,
                   const char *what) -> Status {
    for (const TensorSpec &spec : specs) {
      const PlanBinding *b = nullptr;
      for (const PlanBinding &pb : bindings)
        if (pb.name == spec.name)
          b = &pb;
      if (!b)
        return Status::error(planFile_ + ": engine.json lists " + what + " '" +
                             spec.name + "', which the plan does not bind");
      const TensorDesc &d = plan_.buffers[b->buffer].desc;
      if (d.dtype != spec.desc.dtype || d.shape != spec.desc.shape)
        return Status::error(planFile_ + ": " + what + " '" + spec.name +
                             "' is " + d.str() + " in the plan but " +
                             spec.desc.str() + " in engine.json");
    }
    for (const PlanBinding &pb : bindings) {
      bool listed = false;
      for (const TensorSpec &spec : specs)
        listed = listed || spec.name == pb.name;
      if (!listed)
        return Status::error(planFile_ + ": the plan binds " + what + " '" +
                             pb.name + "', which engine.json does not list");
    }
    return Status::ok();
  };
  bool sameSymbols = plan_.symbols.size() == manifest_.symbols.size();
  for (size_t k = 0; sameSymbols && k < plan_.symbols.size(); ++k)
    sameSymbols = plan_.symbols[k].name == manifest_.symbols[k].name &&
                  plan_.symbols[k].min == manifest_.symbols[k].min &&
                  plan_.symbols[k].max == manifest_.symbols[k].max;
  if (!sameSymbols)
    return Status::error(planFile_ + ": the plan's run-time dimensions are "
                                     "not those engine.json lists");
  TPC_RETURN_IF_ERROR(check(plan_.inputs, manifest_.inputs, "input"));
  return check(plan_.outputs, manifest_.outputs, "output");
}

namespace {

std::string describeDescs(const std::vector<TensorDesc> &descs) {
  std::string s;
  for (const TensorDesc &d : descs) {
    if (!s.empty())
      s += ", ";
    s += cpu::isAbsent(d) ? std::string("absent") : d.str();
  }
  return s;
}

} // namespace

Status RankEngine::prepareSteps() {
  steps_.resize(plan_.steps.size());
  for (size_t i = 0; i < plan_.steps.size(); ++i) {
    const PlanStep &ps = plan_.steps[i];
    Step &step = steps_[i];
    auto fail = [&](const std::string &msg) {
      return Status::error(planFile_ + ": " + plan_.describeStep(i) + ": " +
                           msg);
    };
    if (ps.kind == StepKind::Kernel && !options_.hostExecution &&
        !options_.checkKernels)
      continue;
    if (Status st =
            prepareStep(i, plan_.maxValues(), step.kernel, step.collective);
        !st)
      return fail(st.message());
    if (!options_.hostExecution)
      step.kernel.reset();
  }

  if (!options_.hostExecution)
    return Status::ok();
  TPC_RETURN_IF_ERROR(
      arena_.allocate(size_t(plan_.arena.bytes), "arena of " + planFile_));
  for (const PlanBuffer &b : plan_.buffers) {
    if (b.kind == BufferKind::Arena)
      bufferPtrs_[b.id] = arena_.data() + b.offset;
    if (b.kind == BufferKind::State) {
      AlignedBuffer &state = states_[b.id];
      TPC_RETURN_IF_ERROR(state.allocate(
          size_t(b.bytes), "state '" + b.name + "' of " + planFile_));
      bufferPtrs_[b.id] = state.data();
      stateBytes_ += b.bytes;
    }
  }
  for (size_t i = 0; i < steps_.size(); ++i) {
    const PlanStep &ps = plan_.steps[i];
    steps_[i].bindOperands(ps, bufferPtrs_);
    // Weights never change: kernels may repack them once, here.
    if (!steps_[i].kernel)
      continue;
    try {
      for (size_t j = 0; j < ps.inputs.size(); ++j)
        if (ps.inputs[j] != kAbsentBuffer &&
            plan_.buffers[ps.inputs[j]].kind == BufferKind::Weight)
          steps_[i].kernel->bindConstantInput(j, bufferPtrs_[ps.inputs[j]]);
    } catch (const std::exception &ex) {
      return Status::error(planFile_ + ": " + plan_.describeStep(i) +
                           ": binding its weights failed: " + ex.what());
    }
  }
  if (!plan_.symbols.empty()) {
    values_ = plan_.maxValues();
    loadKernels_.assign(steps_.size(), nullptr);
    for (size_t i = 0; i < steps_.size(); ++i) {
      loadKernels_[i] = steps_[i].kernel.get();
      if (plan_.steps[i].symbolic)
        symbolicSteps_.push_back(i);
    }
    for (const PlanBuffer &b : plan_.buffers) {
      if (b.leadingBlock || !b.values.empty())
        blockBuffers_.push_back(b.id);
      // The tensor must hold the values at the maxima.
      if (!b.values.empty()) {
        std::vector<int64_t> want;
        TPC_RETURN_IF_ERROR(valuesAt(b, values_, want));
        for (size_t e = 0; e < want.size(); ++e) {
          int64_t have =
              b.desc.dtype == DType::I64
                  ? reinterpret_cast<const int64_t *>(bufferPtrs_[b.id])[e]
                  : reinterpret_cast<const int32_t *>(bufferPtrs_[b.id])[e];
          if (have != want[e])
            return Status::error(planFile_ + ": weight '" + b.tensor +
                                 "' element " + std::to_string(e) + " is " +
                                 std::to_string(have) +
                                 ", but its value expression gives " +
                                 std::to_string(want[e]) + " at the maxima");
        }
      }
    }
    bindings_[values_].lastUse = ++useClock_;
  }
  return Status::ok();
}

Status RankEngine::prepareStep(size_t index, const SymbolValues &values,
                               std::unique_ptr<cpu::PreparedKernel> &kernel,
                               PreparedCollective &collective) const {
  const PlanStep &ps = plan_.steps[index];
  std::vector<TensorDesc> in, out;
  for (uint32_t id : ps.inputs)
    in.push_back(id == kAbsentBuffer ? cpu::absentOperand()
                                     : plan_.descAt(id, values));
  for (uint32_t id : ps.outputs)
    out.push_back(plan_.descAt(id, values));
  PlanStep step = ps;
  step.attrs = plan_.attrsAt(index, values);
  if (ps.kind != StepKind::Kernel) {
    if (ps.inputs.size() != 1 || ps.outputs.size() != 1 ||
        ps.inputs[0] == kAbsentBuffer)
      return Status::error("a collective takes one input and one output, got " +
                           std::to_string(ps.inputs.size()) + " and " +
                           std::to_string(ps.outputs.size()));
    bool overlap =
        arenaOverlap(plan_.buffers[ps.inputs[0]], plan_.buffers[ps.outputs[0]]);
    return PreparedCollective::prepare(step, in[0], out[0], overlap, rank(),
                                       worldSize(), collective);
  }
  const cpu::KernelDef *def = cpu::lookupKernel(ps.kernel);
  if (!def)
    return Status::error("unknown kernel '" + ps.kernel +
                         "' (this runtime has no CPU kernel of that name)");
  Status st;
  try {
    st = def->prepare(in, out, step.attrs, kernel);
  } catch (const std::exception &ex) {
    st = Status::error(std::string("exception: ") + ex.what());
  }
  if (st && !kernel)
    st = Status::error("prepare returned no kernel");
  if (!st)
    return Status::error(ps.kernel + " rejected its operands (inputs " +
                         describeDescs(in) + "; outputs " + describeDescs(out) +
                         "): " + st.message());
  return Status::ok();
}

Status RankEngine::valuesAt(const PlanBuffer &b, const SymbolValues &values,
                            std::vector<int64_t> &out) {
  out.resize(b.values.size());
  for (size_t e = 0; e < b.values.size(); ++e) {
    bool fits = b.values[e].eval(values, out[e]);
    if (fits && b.desc.dtype == DType::I32)
      fits = out[e] >= INT32_MIN && out[e] <= INT32_MAX;
    if (!fits)
      return Status::outOfRange("weight '" + b.tensor + "' element " +
                                std::to_string(e) + " overflows its type");
  }
  return Status::ok();
}

namespace {

/// Copies the leading `block` of a row-major `full`-shaped tensor.
void copyLeadingBlock(const uint8_t *from, const Shape &full,
                      const Shape &block, size_t elem, uint8_t *to) {
  if (block.empty()) {
    std::memcpy(to, from, elem);
    return;
  }
  int64_t fullStride = int64_t(elem), blockStride = int64_t(elem);
  for (size_t d = 1; d < full.size(); ++d) {
    fullStride *= full[d];
    blockStride *= block[d];
  }
  Shape fullRest(full.begin() + 1, full.end());
  Shape blockRest(block.begin() + 1, block.end());
  for (int64_t i = 0; i < block[0]; ++i)
    copyLeadingBlock(from + i * fullStride, fullRest, blockRest, elem,
                     to + i * blockStride);
}

} // namespace

Status RankEngine::makeBinding(const SymbolValues &values, Binding &out) const {
  const std::string where =
      planFile_ + ": at " + plan_.describeValues(values) + ": ";
  std::map<uint32_t, const uint8_t *> blockData;
  for (uint32_t id : blockBuffers_) {
    TensorDesc full = plan_.buffers[id].desc, block = plan_.descAt(id, values);
    auto buf = std::make_unique<AlignedBuffer>();
    TPC_RETURN_IF_ERROR(buf->allocate(size_t(block.bytes()),
                                      "the block of weight '" +
                                          plan_.buffers[id].tensor + "'"));
    const PlanBuffer &pb = plan_.buffers[id];
    if (!pb.values.empty()) {
      std::vector<int64_t> v;
      TPC_RETURN_IF_ERROR(valuesAt(pb, values, v).withContext(where));
      for (size_t e = 0; e < v.size(); ++e) {
        if (full.dtype == DType::I64)
          reinterpret_cast<int64_t *>(buf->data())[e] = v[e];
        else
          reinterpret_cast<int32_t *>(buf->data())[e] = int32_t(v[e]);
      }
    } else if (block.bytes()) {
      copyLeadingBlock(bufferPtrs_[id], full.shape, block.shape,
                       dtypeSize(full.dtype), buf->data());
    }
    blockData[id] = buf->data();
    out.blocks.push_back(std::move(buf));
  }
  out.kernels.resize(symbolicSteps_.size());
  out.collectives.resize(symbolicSteps_.size());
  for (size_t j = 0; j < symbolicSteps_.size(); ++j) {
    size_t i = symbolicSteps_[j];
    if (Status st = prepareStep(i, values, out.kernels[j], out.collectives[j]);
        !st)
      return Status::error(where + plan_.describeStep(i) + ": " + st.message());
    cpu::PreparedKernel *k = out.kernels[j].get();
    if (!k)
      continue;
    const PlanStep &ps = plan_.steps[i];
    try {
      for (size_t n = 0; n < ps.inputs.size(); ++n) {
        uint32_t id = ps.inputs[n];
        if (id == kAbsentBuffer || plan_.buffers[id].kind != BufferKind::Weight)
          continue;
        if (auto b = blockData.find(id); b != blockData.end())
          k->bindConstantInput(n, b->second);
        else if (!loadKernels_[i] ||
                 !k->shareConstantInput(n, *loadKernels_[i]))
          k->bindConstantInput(n, bufferPtrs_[id]);
      }
    } catch (const std::exception &ex) {
      return Status::error(where + plan_.describeStep(i) +
                           ": binding its weights failed: " + ex.what());
    }
  }
  return Status::ok();
}

Status RankEngine::bindSymbols(const SymbolValues &values) {
  if (plan_.symbols.empty() && values.empty())
    return Status::ok();
  if (values.size() != plan_.symbols.size())
    return Status::invalidArgument(
        planFile_ + ": " + std::to_string(values.size()) +
        " values for the plan's " + std::to_string(plan_.symbols.size()) +
        " run-time dimensions");
  for (size_t k = 0; k < values.size(); ++k)
    if (values[k] < plan_.symbols[k].min || values[k] > plan_.symbols[k].max)
      return Status::invalidArgument(
          "'" + plan_.symbols[k].name + "' is " + std::to_string(values[k]) +
          ", outside the range " + std::to_string(plan_.symbols[k].min) + ".." +
          std::to_string(plan_.symbols[k].max) +
          " the engine was compiled for");
  if (!options_.hostExecution)
    return Status::error(planFile_ + ": the engine was loaded for another "
                                     "backend (without host execution)");
  if (values == values_)
    return Status::ok();
  auto next = bindings_.find(values);
  if (next == bindings_.end() || next->second.kernels.empty()) {
    Binding fresh;
    TPC_RETURN_IF_ERROR(makeBinding(values, fresh));
    if (next == bindings_.end())
      next = bindings_.emplace(values, Binding()).first;
    next->second = std::move(fresh);
  }
  // Park the running steps with their binding, then run the new ones.
  Binding &cur = bindings_[values_];
  cur.kernels.resize(symbolicSteps_.size());
  cur.collectives.resize(symbolicSteps_.size());
  for (size_t j = 0; j < symbolicSteps_.size(); ++j) {
    Step &step = steps_[symbolicSteps_[j]];
    cur.kernels[j] = std::move(step.kernel);
    cur.collectives[j] = step.collective;
    step.kernel = std::move(next->second.kernels[j]);
    step.collective = next->second.collectives[j];
  }
  next->second.kernels.clear();
  next->second.collectives.clear();
  next->second.lastUse = ++useClock_;
  const bool atMax = values == plan_.maxValues();
  std::map<uint32_t, uint8_t *> blockData;
  for (size_t b = 0; b < blockBuffers_.size(); ++b)
    blockData[blockBuffers_[b]] =
        atMax ? bufferPtrs_[blockBuffers_[b]] : next->second.blocks[b]->data();
  for (size_t i : symbolicSteps_) {
    const PlanStep &ps = plan_.steps[i];
    for (size_t n = 0; n < ps.inputs.size(); ++n)
      if (auto b = blockData.find(ps.inputs[n]); b != blockData.end())
        steps_[i].inputs[n] = b->second;
  }
  values_ = values;
  // Keep the maxima's binding (its kernels own the weights packed at load)
  // and the most recent others.
  while (bindings_.size() > kKeptBindings) {
    auto oldest = bindings_.end();
    for (auto it = bindings_.begin(); it != bindings_.end(); ++it)
      if (it->first != values_ && it->first != plan_.maxValues() &&
          (oldest == bindings_.end() ||
           it->second.lastUse < oldest->second.lastUse))
        oldest = it;
    if (oldest == bindings_.end())
      break;
    bindings_.erase(oldest);
  }
  return Status::ok();
}

void RankEngine::resetState() {
  for (auto &[id, state] : states_)
    std::memset(state.data(), 0, state.size());
}

const PlanBinding *RankEngine::findInput(const std::string &name) const {
  for (const PlanBinding &b : plan_.inputs)
    if (b.name == name)
      return &b;
  return nullptr;
}

const PlanBinding *RankEngine::findOutput(const std::string &name) const {
  for (const PlanBinding &b : plan_.outputs)
    if (b.name == name)
      return &b;
  return nullptr;
}

} // namespace tpc::runtime
