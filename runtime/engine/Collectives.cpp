//===- Collectives.cpp - The collective steps of a plan -------------------===//
#include "runtime/engine/Collectives.h"

#include <cstring>

namespace tpc::runtime {

namespace {

size_t product(const Shape &s, size_t begin, size_t end) {
  size_t n = 1;
  for (size_t i = begin; i < end; ++i)
    n *= size_t(s[i]);
  return n;
}

/// Checks the `axis` and `sizes` attributes of a sharding collective whose
/// full tensor is `full` and whose shard on this rank is `shard`.
Status checkSharding(const Attrs &attrs, const TensorDesc &full,
                     const char *fullName, const TensorDesc &shard,
                     const char *shardName, int rank, int worldSize,
                     size_t &axisOut, std::vector<int64_t> &sizes) {
  if (full.shape.empty() || full.shape.size() != shard.shape.size())
    return Status::error(std::string(fullName) + " " + full.str() + " and " +
                         shardName + " " + shard.str() +
                         " must have the same rank, at least 1");
  const std::vector<int64_t> *axisAttr = attrs.getInts("axis");
  if (!axisAttr || axisAttr->size() != 1)
    return Status::error("needs an integer attribute 'axis'");
  int64_t rankN = int64_t(full.shape.size());
  int64_t axis = (*axisAttr)[0];
  if (axis < -rankN || axis >= rankN)
    return Status::error("axis " + std::to_string(axis) +
                         " is out of range for rank " + std::to_string(rankN));
  if (axis < 0)
    axis += rankN;
  axisOut = size_t(axis);
  for (size_t d = 0; d < full.shape.size(); ++d)
    if (d != axisOut && full.shape[d] != shard.shape[d])
      return Status::error(std::string(fullName) + " " + full.str() + " and " +
                           shardName + " " + shard.str() +
                           " differ outside axis " + std::to_string(axis));
  const int64_t total = full.shape[axisOut], mine = shard.shape[axisOut];
  // `parts` (the compiler's sharding of a fused projection: the axis
  // concatenates parts, and each rank holds a block of every part) is
  // accepted only in its trivial form, one part that is the whole axis.
  if (const std::vector<int64_t> *parts = attrs.getInts("parts")) {
    if (parts->size() > 1)
      return Status::error("attribute 'parts' lists " +
                           std::to_string(parts->size()) +
                           " parts; gathering or scattering a fused "
                           "projection is not supported by this runtime");
    if (parts->size() == 1 && (*parts)[0] != total)
      return Status::error("attribute 'parts' [" + std::to_string((*parts)[0]) +
                           "] does not match the " + fullName + "'s " +
                           std::to_string(total) + " along axis " +
                           std::to_string(axis));
  }
  if (const std::vector<int64_t> *s = attrs.getInts("sizes")) {
    if (s->size() != size_t(worldSize))
      return Status::error("attribute 'sizes' has " +
                           std::to_string(s->size()) + " entries for " +
                           std::to_string(worldSize) + " ranks");
    int64_t sum = 0;
    for (int64_t v : *s) {
      if (v < 0)
        return Status::error("attribute 'sizes' has a negative entry");
      sum += v;
    }
    if (sum != total)
      return Status::error("attribute 'sizes' sums to " + std::to_string(sum) +
                           ", but the " + fullName + " has " +
                           std::to_string(total) + " along axis " +
                           std::to_string(axis));
    if ((*s)[size_t(rank)] != mine)
      return Status::error("attribute 'sizes' gives rank " +
                           std::to_string(rank) + " " +
                           std::to_string((*s)[size_t(rank)]) +
                           " along axis " + std::to_string(axis) +
                           ", but its " + shardName + " has " +
                           std::to_string(mine));
    sizes = *s;
  } else {
    if (mine * worldSize != total)
      return Status::error(std::string(shardName) + " " + shard.str() +
                           " times " + std::to_string(worldSize) +
                           " ranks does not make the " + fullName + " " +
                           full.str() + " along axis " + std::to_string(axis) +
                           " (give 'sizes' for unequal shards)");
    sizes.assign(size_t(worldSize), mine);
  }
  return Status::ok();
}

} // namespace

Status PreparedCollective::prepare(const PlanStep &step, const TensorDesc &in,
                                   const TensorDesc &out, bool overlap,
                                   int rank, int worldSize,
                                   PreparedCollective &r) {
  r = PreparedCollective();
  CollectiveGeometry &g = r.geometry_;
  g.kind = step.kind;
  g.dtype = in.dtype;
  g.elemSize = dtypeSize(in.dtype);
  g.rank = rank;
  g.worldSize = worldSize;
  g.overlap = overlap;
  if (in.dtype != out.dtype)
    return Status::error("input " + in.str() + " and output " + out.str() +
                         " have different dtypes");
  bool reduces = step.kind != StepKind::AllGather;
  if (reduces && !isReducibleDType(in.dtype))
    return Status::error(std::string("cannot sum dtype ") +
                         dtypeName(in.dtype));

  if (step.kind == StepKind::AllReduce) {
    if (in.shape != out.shape)
      return Status::error("input " + in.str() + " and output " + out.str() +
                           " differ in shape");
    g.count = size_t(in.numel());
    g.tensorBytes = in.bytes();
    return Status::ok();
  }

  const bool gather = step.kind == StepKind::AllGather;
  const TensorDesc &full = gather ? out : in;
  const TensorDesc &shard = gather ? in : out;
  size_t axis = 0;
  TPC_RETURN_IF_ERROR(checkSharding(
      step.attrs, full, gather ? "output" : "input", shard,
      gather ? "input" : "output", rank, worldSize, axis, g.sizes));
  g.outer = product(full.shape, 0, axis);
  g.inner = product(full.shape, axis + 1, full.shape.size());
  g.axisTotal = size_t(full.shape[axis]);
  g.tensorBytes = full.bytes();
  int64_t start = 0;
  for (int64_t v : g.sizes) {
    g.starts.push_back(start);
    start += v;
    g.equalShards = g.equalShards && v == g.sizes[0];
  }
  if (gather) {
    // Gathered blocks are in rank order; they are the output itself only
    // when nothing precedes the axis.
    if (g.outer != 1)
      r.rowsScratchBytes_ = full.bytes();
    r.scratchBytes_ += r.rowsScratchBytes_;
    if (overlap)
      r.scratchBytes_ += shard.bytes();
  } else if (!(g.equalShards && g.outer == 1 && !overlap)) {
    r.scratchBytes_ = full.bytes();
  }
  return Status::ok();
}

Status PreparedCollective::run(Communicator *comm, const void *in, void *out,
                               void *scratch) const {
  const CollectiveGeometry &g = geometry_;
  if (g.worldSize == 1) {
    // A world of one: the sum, the concatenation and the shard are the
    // input itself.
    if (in != out)
      std::memmove(out, in, size_t(g.tensorBytes));
    return Status::ok();
  }
  if (!comm)
    return Status::error("no communicator for a world of " +
                         std::to_string(g.worldSize) + " ranks");
  switch (g.kind) {
  case StepKind::AllReduce:
    return runAllReduce(comm, in, out);
  case StepKind::AllGather:
    return runAllGather(comm, in, out, static_cast<uint8_t *>(scratch));
  case StepKind::ReduceScatter:
    return runReduceScatter(comm, in, out, static_cast<uint8_t *>(scratch));
  case StepKind::Kernel:
    break;
  }
  return Status::error("not a collective");
}

Status PreparedCollective::runAllReduce(Communicator *comm, const void *in,
                                        void *out) const {
  const CollectiveGeometry &g = geometry_;
  if (in == out || !g.overlap)
    return comm->allReduce(in, out, g.count, g.dtype);
  // Partly overlapping operands: move the input onto the output first and
  // reduce in place.
  std::memmove(out, in, g.count * g.elemSize);
  return comm->allReduce(out, out, g.count, g.dtype);
}

Status PreparedCollective::runAllGather(Communicator *comm, const void *in,
                                        void *out, uint8_t *scratch) const {
  const CollectiveGeometry &g = geometry_;
  const size_t es = g.elemSize;
  const size_t fullBytes = g.outer * g.axisTotal * g.inner * es;
  const size_t myElems = g.outer * size_t(g.sizes[size_t(g.rank)]) * g.inner;
  const bool direct = g.outer == 1;
  // The gathered blocks go to the front of scratch unless the communicator
  // places the rows itself.
  const bool blocks = !direct && !comm->gathersRowsInPlace();
  const void *send = in;
  if (g.overlap) {
    uint8_t *stage = scratch + (blocks ? fullBytes : 0);
    std::memcpy(stage, in, myElems * es);
    send = stage;
  }
  if (!direct) {
    // Rank r holds outer rows of sizes[r] x inner elements; the output
    // interleaves them along the axis.
    std::vector<size_t> rows;
    rows.reserve(g.sizes.size());
    for (int64_t v : g.sizes)
      rows.push_back(size_t(v) * g.inner);
    return comm->allGatherRows(send, out, g.outer, rows, g.dtype, scratch);
  }
  if (g.equalShards)
    return comm->allGather(send, out, myElems, g.dtype);
  std::vector<size_t> counts;
  counts.reserve(g.sizes.size());
  for (int64_t v : g.sizes)
    counts.push_back(size_t(v) * g.inner);
  return comm->allGatherV(send, out, counts, g.dtype);
}

Status PreparedCollective::runReduceScatter(Communicator *comm, const void *in,
                                            void *out,
                                            uint8_t *scratch) const {
  const CollectiveGeometry &g = geometry_;
  const size_t es = g.elemSize;
  const size_t total = g.outer * g.axisTotal * g.inner;
  const size_t myElems = g.outer * size_t(g.sizes[size_t(g.rank)]) * g.inner;
  if (g.equalShards && g.outer == 1 && !g.overlap)
    return comm->reduceScatter(in, out, myElems, g.dtype);

  // Lay the input out as rank-ordered blocks of outer x sizes[r] x inner.
  const void *blocks = in;
  if (g.outer != 1 || g.overlap) {
    const uint8_t *src = static_cast<const uint8_t *>(in);
    size_t blockStart = 0;
    for (int r = 0; r < g.worldSize; ++r) {
      const size_t rowElems = size_t(g.sizes[size_t(r)]) * g.inner;
      const size_t shardStart = size_t(g.starts[size_t(r)]);
      for (size_t o = 0; o < g.outer; ++o)
        std::memcpy(scratch + (blockStart + o * rowElems) * es,
                    src + ((o * g.axisTotal + shardStart) * g.inner) * es,
                    rowElems * es);
      blockStart += g.outer * rowElems;
    }
    blocks = scratch;
  }
  if (g.equalShards)
    return comm->reduceScatter(blocks, out, myElems, g.dtype);
  // The communicator scatters equal blocks only: reduce everything, then
  // keep this rank's block.
  TPC_RETURN_IF_ERROR(comm->allReduce(blocks, scratch, total, g.dtype));
  const size_t myStart = g.outer * size_t(g.starts[size_t(g.rank)]) * g.inner;
  std::memcpy(out, scratch + myStart * es, myElems * es);
  return Status::ok();
}

} // namespace tpc::runtime
