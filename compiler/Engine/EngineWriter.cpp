//===- EngineWriter.cpp - Writing engine folders --------------------------===//
#include "compiler/Engine/EngineWriter.h"
#include "base/Cores.h"
#include "compiler/Dialect/ONNX/IR/KernelBridge.h"
#include "compiler/Dialect/TP/IR/TPOps.h"
#include "compiler/Engine/OutputDir.h"
#include "compiler/Engine/PlanSerializer.h"
#include "kernels/Half.h"
#include "runtime/engine/EngineManifest.h"
#include "runtime/io/Safetensors.h"
#include "runtime/support/MappedFile.h"
#include "runtime/support/Sha256.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <unistd.h>

using namespace mlir;
namespace fs = std::filesystem;

namespace tpc {
namespace {

class Writer {
public:
  Writer(ModuleOp module, const EngineWriteOptions &options)
      : module(module), options(options) {}
  LogicalResult run();

private:
  /// What writing one rank's files gave: their digests, or an error.
  struct RankFiles {
    Status status = Status::ok();
    std::string planHash, weightHash;
  };

  InFlightDiagnostic error() { return module.emitError(); }
  /// Maps every source file the ranks read (before any thread starts, so
  /// that the writers only read the map).
  LogicalResult openSources(const std::vector<SerializedRank> &ranks);
  /// Writes rank `rank`'s plan and weight files into `dir`. Thread-safe
  /// against other ranks: it reads only `s` and the mapped sources.
  RankFiles writeRank(const SerializedRank &s, int rank,
                      const fs::path &dir) const;
  /// Writes the weight file and returns its SHA-256, computed on the way.
  Status writeWeights(const SerializedRank &s, const fs::path &path,
                      std::string &hash) const;

  ModuleOp module;
  const EngineWriteOptions &options;
  std::string sourceDir;
  std::map<std::string, std::unique_ptr<MappedFile>> sources;
};

/// Elements narrowed per append: a fixed buffer, so memory stays flat.
constexpr size_t kNarrowChunk = 1 << 16;

/// Appends `count` f32 values from `from` (unaligned) as f16 or bf16,
/// rounded to nearest even and saturating, as --tpc-convert-float-type
/// converts constants.
Status appendNarrowed(SafetensorsWriter &writer, const uint8_t *from,
                      size_t count, bool bf16, std::vector<uint16_t> &buf) {
  for (size_t i = 0; i < count; ++i) {
    float v;
    std::memcpy(&v, from + 4 * i, sizeof v);
    buf[i] = bf16 ? floatToBf16Saturating(v) : floatToHalfSaturating(v);
  }
  return writer.append(buf.data(), count * sizeof(uint16_t));
}

/// Element i of a float source of dtype `t` (f32, f16 or bf16) as f32.
float sourceFloat(const uint8_t *base, int64_t i, DType t) {
  if (t == DType::F32) {
    float v;
    std::memcpy(&v, base + 4 * i, sizeof v);
    return v;
  }
  uint16_t h;
  std::memcpy(&h, base + 2 * i, sizeof h);
  return t == DType::BF16 ? bf16ToFloat(h) : halfToFloat(h);
}

/// The source indices of the slice `w` keeps along source axis `axis`.
std::vector<int64_t> sliceIndices(const WeightSlice &w, int64_t axis) {
  std::vector<int64_t> idx;
  if (!w.ranges.empty() && w.axis == axis) {
    for (size_t r = 0; r + 1 < w.ranges.size(); r += 2)
      for (int64_t i = 0; i < w.ranges[r + 1]; ++i)
        idx.push_back(w.ranges[r] + i);
  } else {
    for (int64_t i = 0; i < w.sourceShape[size_t(axis)]; ++i)
      idx.push_back(i);
  }
  return idx;
}

/// One block of K quantized by round to nearest: `v` holds blockSize
/// values (zeros past K). Symmetric: the value of largest magnitude maps to
/// code 0 (scale = it / -2^(bits-1), zero point 2^(bits-1)); asymmetric:
/// [min(v, 0), max(v, 0)] maps onto [0, 2^bits - 1]. A block of zeros gets
/// scale 1.
void quantizeBlock(const float *v, int64_t count, int bits, bool symmetric,
                   uint8_t *codes, float &scale, uint8_t &zero) {
  const int top = (1 << bits) - 1;
  if (symmetric) {
    float vmax = 0;
    for (int64_t i = 0; i < count; ++i)
      if (std::fabs(v[i]) > std::fabs(vmax))
        vmax = v[i];
    scale = vmax / float(-(1 << (bits - 1)));
    if (scale == 0)
      scale = 1;
    zero = uint8_t(1 << (bits - 1));
  } else {
    float lo = 0, hi = 0;
    for (int64_t i = 0; i < count; ++i) {
      lo = std::min(lo, v[i]);
      hi = std::max(hi, v[i]);
    }
    scale = (hi - lo) / float(top);
    if (scale == 0)
      scale = 1;
    zero = uint8_t(std::min<float>(
        std::max<float>(std::nearbyint(-lo / scale), 0), float(top)));
  }
  for (int64_t i = 0; i < count; ++i) {
    float c = std::nearbyint(v[i] / scale) + float(zero);
    codes[i] = uint8_t(std::min<float>(std::max<float>(c, 0), float(top)));
  }
}

/// Appends `count` codes to `out` packed as MatMulNBits packs them: 8-bit
/// one a byte, 4-bit two a byte, the first in the low nibble.
void appendPacked(std::vector<uint8_t> &out, const uint8_t *codes,
                  int64_t count, int bits) {
  if (bits == 8) {
    out.insert(out.end(), codes, codes + count);
    return;
  }
  for (int64_t i = 0; i < count; i += 2)
    out.push_back(uint8_t(codes[i] | (i + 1 < count ? codes[i + 1] << 4 : 0)));
}

/// Appends part `w.quantPart` of the block quantization of the float
/// source at `base` (the rank's slice of it), a chunk of columns at a time.
Status appendQuantized(SafetensorsWriter &writer, const WeightSlice &w,
                       const uint8_t *base) {
  const std::vector<int64_t> ks = sliceIndices(w, w.kAxis),
                             ns = sliceIndices(w, 1 - w.kAxis);
  const int64_t k = int64_t(ks.size()), n = int64_t(ns.size());
  const int64_t bs = w.quantBlock, blocks = (k + bs - 1) / bs;
  const int bits = w.quantBits;
  const int64_t stride = w.sourceShape[1];
  constexpr int64_t kChunk = 64;
  if (w.quantPart != "codes" && w.quantPart != "scales" &&
      w.quantPart != "zeros")
    return Status::error("weight '" + w.tensor +
                         "': unknown quantized part '" + w.quantPart + "'");
  std::vector<float> values(static_cast<size_t>(kChunk * blocks * bs));
  std::vector<uint8_t> codes(static_cast<size_t>(blocks * bs)), out;
  std::vector<float> scales(static_cast<size_t>(blocks));
  std::vector<uint8_t> zeros(static_cast<size_t>(blocks));
  std::vector<uint16_t> narrowed(static_cast<size_t>(blocks));
  for (int64_t n0 = 0; n0 < n; n0 += kChunk) {
    const int64_t cols = std::min(kChunk, n - n0);
    std::fill(values.begin(), values.end(), 0.0f);
    for (int64_t j = 0; j < cols; ++j)
      for (int64_t i = 0; i < k; ++i) {
        int64_t at = w.kAxis == 0 ? ks[size_t(i)] * stride + ns[size_t(n0 + j)]
                                  : ns[size_t(n0 + j)] * stride + ks[size_t(i)];
        values[size_t(j * blocks * bs + i)] =
            sourceFloat(base, at, w.sourceDType);
      }
    for (int64_t j = 0; j < cols; ++j) {
      for (int64_t b = 0; b < blocks; ++b)
        quantizeBlock(values.data() + (j * blocks + b) * bs, bs, bits,
                      w.quantSymmetric, codes.data() + b * bs,
                      scales[size_t(b)], zeros[size_t(b)]);
      Status st = Status::ok();
      out.clear();
      if (w.quantPart == "scales") {
        const auto *bytes = reinterpret_cast<const uint8_t *>(scales.data());
        st = w.desc.dtype == DType::F32
                 ? writer.append(bytes, size_t(blocks) * 4)
                 : appendNarrowed(writer, bytes, size_t(blocks),
                                  w.desc.dtype == DType::BF16, narrowed);
      } else {
        const bool isCodes = w.quantPart == "codes";
        appendPacked(out, isCodes ? codes.data() : zeros.data(),
                     isCodes ? blocks * bs : blocks, bits);
        st = writer.append(out.data(), out.size());
      }
      TPC_RETURN_IF_ERROR(st);
    }
  }
  return Status::ok();
}

/// The rank's slice of a weight of `elem`-byte elements as row runs:
/// `ranges` ([start, size] pairs) along `axis`, repeated for each of the
/// `outer` leading indices, each element of the axis `inner` bytes long.
struct SliceGeometry {
  std::vector<int64_t> ranges;
  int64_t axis = 0, outer = 1, inner = 1, axisDim = 1;
};
SliceGeometry sliceGeometry(const WeightSlice &w, size_t elem) {
  SliceGeometry g;
  g.ranges = w.ranges;
  g.axis = w.axis;
  if (g.ranges.empty()) {
    g.axis = 0;
    g.ranges = {0, w.sourceShape.empty() ? 1 : w.sourceShape[0]};
  }
  g.inner = int64_t(elem);
  for (int64_t d = 0; d < int64_t(w.sourceShape.size()); ++d) {
    if (d < g.axis)
      g.outer *= w.sourceShape[size_t(d)];
    else if (d > g.axis)
      g.inner *= w.sourceShape[size_t(d)];
  }
  g.axisDim = w.sourceShape.empty() ? 1 : w.sourceShape[size_t(g.axis)];
  return g;
}

/// Part `w.quantPart` ("repack_codes", "repack_scales", "repack_zeros") of
/// a QDQ weight rearranged from its initializer's bytes at `src` into the
/// MatMulNBits layout, whole (the caller slices it): codes [k, n] (4-bit
/// two to a byte, low nibble first along the flat index) into [n, blocks,
/// block * bits / 8], scales [blocks, n] into [n, blocks], zero points
/// [blocks, n] into [n, ceil(blocks * bits / 8)]; signed codes and zero
/// points offset by 2^(bits - 1) into unsigned ones.
std::vector<uint8_t> repackQdq(const WeightSlice &w, const uint8_t *src) {
  const int64_t k = w.repackK, n = w.repackN, bs = w.quantBlock;
  const int64_t blocks = k / bs;
  const int bits = w.quantBits;
  const int flip = w.repackSigned ? 1 << (bits - 1) : 0;
  auto codeAt = [&](int64_t i) {
    int v = bits == 8 ? src[i] : (i % 2 ? src[i / 2] >> 4 : src[i / 2] & 15);
    return uint8_t(v ^ flip);
  };
  std::vector<uint8_t> out;
  if (w.quantPart == "repack_scales") {
    const size_t e = dtypeSize(w.sourceDType);
    out.resize(size_t(n * blocks) * e);
    for (int64_t c = 0; c < n; ++c)
      for (int64_t b = 0; b < blocks; ++b)
        std::memcpy(out.data() + size_t(c * blocks + b) * e,
                    src + size_t(b * n + c) * e, e);
    return out;
  }
  if (w.quantPart == "repack_zeros") {
    const int64_t per = (blocks * bits + 7) / 8;
    out.assign(size_t(n * per), 0);
    for (int64_t c = 0; c < n; ++c)
      for (int64_t b = 0; b < blocks; ++b) {
        uint8_t z = codeAt(b * n + c);
        if (bits == 8)
          out[size_t(c * per + b)] = z;
        else
          out[size_t(c * per + b / 2)] |= uint8_t(b % 2 ? z << 4 : z);
      }
    return out;
  }
  const int64_t blob = bs * bits / 8;
  out.assign(size_t(n * blocks * blob), 0);
  for (int64_t kk = 0; kk < k; ++kk)
    for (int64_t c = 0; c < n; ++c) {
      uint8_t code = codeAt(kk * n + c);
      const int64_t b = kk / bs, i = kk % bs;
      uint8_t *dst = out.data() + (c * blocks + b) * blob;
      if (bits == 8)
        dst[i] = code;
      else
        dst[i / 2] |= uint8_t(i % 2 ? code << 4 : code);
    }
  return out;
}

LogicalResult Writer::openSources(const std::vector<SerializedRank> &ranks) {
  for (const SerializedRank &s : ranks)
    for (const WeightSlice &w : s.weights) {
      if (w.isConstant || sources.count(w.file))
        continue;
      auto m = std::make_unique<MappedFile>();
      Status st = MappedFile::open((fs::path(sourceDir) / w.file).string(), *m);
      if (!st.isOk())
        return error() << "cannot read weights: " << st.message();
      sources[w.file] = std::move(m);
    }
  return success();
}

Status Writer::writeWeights(const SerializedRank &s, const fs::path &path,
                            std::string &hash) const {
  std::vector<SafetensorsEntry> entries;
  for (const WeightSlice &w : s.weights)
    entries.push_back({w.tensor, w.desc});
  SafetensorsWriter writer;
  std::vector<uint16_t> narrowed(kNarrowChunk);
  std::map<std::string, std::string> meta = {{"format", "pt"},
                                             {"producer", "tpc"}};
  if (Status st = writer.open(path.string(), entries, meta); !st.isOk())
    return st;
  // In the file's order, so that the writer hashes the file as it writes it
  // and every write extends the file.
  std::map<std::string, size_t> position;
  for (const std::string &name : writer.fileOrder())
    position.emplace(name, position.size());
  std::vector<const WeightSlice *> order;
  for (const WeightSlice &w : s.weights)
    order.push_back(&w);
  std::stable_sort(order.begin(), order.end(),
                   [&](const WeightSlice *a, const WeightSlice *b) {
                     return position[a->tensor] < position[b->tensor];
                   });
  for (const WeightSlice *slice : order) {
    const WeightSlice &w = *slice;
    if (Status st = writer.beginTensor(w.tensor); !st.isOk())
      return st;
    if (w.isConstant) {
      if (Status st = writer.append(w.data.data(), w.data.size()); !st.isOk())
        return st;
      continue;
    }
    const MappedFile *src = sources.at(w.file).get();
    if (StringRef(w.quantPart).starts_with("repack_")) {
      uint64_t end = 0;
      if (w.offset < 0 || w.sourceLength < 0 ||
          __builtin_add_overflow(uint64_t(w.offset), uint64_t(w.sourceLength),
                                 &end) ||
          end > src->size())
        return Status::error("weight '" + w.tensor + "' lies outside '" +
                             w.file + "'");
      const std::vector<uint8_t> whole = repackQdq(w, src->data() + w.offset);
      (void)src->adviseDontNeed(size_t(w.offset), size_t(w.sourceLength));
      // The rank's slice of the repacked tensor, as for any weight.
      const SliceGeometry geo = sliceGeometry(w, dtypeSize(w.sourceDType));
      const std::vector<int64_t> &ranges = geo.ranges;
      const int64_t outer = geo.outer, inner = geo.inner,
                    axisDim = geo.axisDim;
      if (outer * axisDim * inner != int64_t(whole.size()))
        return Status::error("weight '" + w.tensor +
                             "': its repacked bytes do not match its shape");
      const bool narrow = w.sourceDType != w.desc.dtype;
      for (int64_t o = 0; o < outer; ++o)
        for (size_t r = 0; r + 1 < ranges.size(); r += 2) {
          const uint8_t *from =
              whole.data() + (o * axisDim + ranges[r]) * inner;
          const int64_t bytes = ranges[r + 1] * inner;
          for (int64_t done = 0; done < bytes;) {
            const int64_t chunk = std::min<int64_t>(
                bytes - done, int64_t(narrowed.size()) * 4);
            TPC_RETURN_IF_ERROR(
                narrow ? appendNarrowed(writer, from + done, size_t(chunk / 4),
                                        w.desc.dtype == DType::BF16, narrowed)
                       : writer.append(from + done, size_t(chunk)));
            done += chunk;
          }
        }
      continue;
    }
    if (!w.quantPart.empty()) {
      std::optional<uint64_t> srcBytes =
          checkedByteSize(w.sourceShape, dtypeSize(w.sourceDType));
      uint64_t end = 0;
      if (w.offset < 0 || !srcBytes || w.sourceShape.size() != 2 ||
          __builtin_add_overflow(uint64_t(w.offset), *srcBytes, &end) ||
          end > src->size())
        return Status::error("weight '" + w.tensor + "' lies outside '" +
                             w.file + "'");
      TPC_RETURN_IF_ERROR(appendQuantized(writer, w, src->data() + w.offset));
      (void)src->adviseDontNeed(size_t(w.offset), size_t(*srcBytes));
      continue;
    }
    // Bytes are counted in the source's element type; a converted weight
    // is narrowed chunk by chunk on its way to the writer.
    size_t elem = dtypeSize(w.sourceDType);
    bool convert = w.sourceDType != w.desc.dtype;
    bool to16 = w.desc.dtype == DType::F16 || w.desc.dtype == DType::BF16;
    if (convert && !(w.sourceDType == DType::F32 && to16))
      return Status::error("weight '" + w.tensor + "': cannot convert " +
                           dtypeName(w.sourceDType) + " to " +
                           dtypeName(w.desc.dtype));
    std::optional<uint64_t> srcBytes = checkedByteSize(w.sourceShape, elem);
    uint64_t end = 0;
    if (w.offset < 0 || !srcBytes ||
        __builtin_add_overflow(uint64_t(w.offset), *srcBytes, &end) ||
        end > src->size())
      return Status::error("weight '" + w.tensor + "' lies outside '" +
                           w.file + "'");
    const uint8_t *base = src->data() + w.offset;
    const SliceGeometry geo = sliceGeometry(w, elem);
    const std::vector<int64_t> &ranges = geo.ranges;
    const int64_t outer = geo.outer, inner = geo.inner, axisDim = geo.axisDim;
    // Source pages are needed once: release them every few MiB so that
    // resident memory stays flat however large the weights are.
    constexpr int64_t kReleaseEvery = 4 << 20;
    int64_t released = 0;
    auto copy = [&](const uint8_t *from, int64_t bytes) -> Status {
      for (int64_t done = 0; done < bytes;) {
        int64_t chunk = convert ? int64_t(narrowed.size() * 4) : kReleaseEvery;
        int64_t n = std::min<int64_t>(bytes - done, chunk);
        Status st = convert ? appendNarrowed(writer, from + done, size_t(n / 4),
                                             w.desc.dtype == DType::BF16,
                                             narrowed)
                            : writer.append(from + done, size_t(n));
        if (!st.isOk())
          return st;
        done += n;
        int64_t consumed = (from + done) - base;
        if (consumed - released >= kReleaseEvery) {
          (void)src->adviseDontNeed(size_t(w.offset + released),
                                    size_t(consumed - released));
          released = consumed;
        }
      }
      return Status::ok();
    };
    for (int64_t o = 0; o < outer; ++o)
      for (size_t r = 0; r < ranges.size(); r += 2)
        TPC_RETURN_IF_ERROR(copy(base + (o * axisDim + ranges[r]) * inner,
                                 ranges[r + 1] * inner));
    (void)src->adviseDontNeed(size_t(w.offset), size_t(*srcBytes));
  }
  TPC_RETURN_IF_ERROR(writer.close());
  hash = writer.sha256Hex();
  if (hash.empty())
    return sha256File(path.string(), hash);
  return Status::ok();
}

llvm::json::Object fileEntry(const fs::path &path, const std::string &hash) {
  return llvm::json::Object{{"file", path.filename().string()},
                            {"bytes", int64_t(fs::file_size(path))},
                            {"sha256", hash}};
}

llvm::json::Array ioEntries(func::FuncOp func, bool inputs,
                            const plan::Plan &plan) {
  llvm::json::Array out;
  auto types = inputs ? func.getArgumentTypes() : func.getResultTypes();
  auto outNames = func->getAttrOfType<ArrayAttr>("onnx.output_names");
  for (auto [i, t] : llvm::enumerate(types)) {
    auto rt = cast<RankedTensorType>(t);
    std::string name =
        inputs ? func.getArgAttrOfType<StringAttr>(i, "onnx.name").str()
               : cast<StringAttr>(outNames[i]).str();
    std::optional<TensorDesc> desc = onnx::descOf(rt);
    llvm::json::Array shape;
    for (int64_t d : rt.getShape())
      shape.push_back(d);
    llvm::json::Object entry{
        {"name", name},
        {"dtype", desc ? dtypeName(desc->dtype) : "invalid"},
        {"shape", std::move(shape)}};
    // Run-time dimensions: the shape holds the maxima, "dims" says how
    // each dimension follows the symbols.
    for (const plan::Binding &b : inputs ? plan.inputs() : plan.outputs()) {
      const plan::Buffer &buf = plan.buffers(int(b.buffer()));
      if (b.name() != name || buf.dims_size() == 0)
        continue;
      llvm::json::Array dims;
      for (const plan::Expr &e : buf.dims())
        dims.push_back(exprToString(e, plan));
      entry["dims"] = std::move(dims);
    }
    out.push_back(std::move(entry));
  }
  return out;
}

Writer::RankFiles Writer::writeRank(const SerializedRank &s, int rank,
                                   const fs::path &dir) const {
  RankFiles files;
  fs::path planPath = dir / ("rank" + std::to_string(rank) + ".plan");
  fs::path weightPath = dir / ("rank" + std::to_string(rank) + ".safetensors");
  {
    std::ofstream out(planPath, std::ios::binary);
    if (!out || !s.plan.SerializeToOstream(&out) || !out.flush()) {
      files.status = Status::error("cannot write '" + planPath.string() + "'");
      return files;
    }
  }
  files.status = writeWeights(s, weightPath, files.weightHash);
  if (files.status)
    files.status = sha256File(planPath.string(), files.planHash);
  return files;
}

LogicalResult Writer::run() {
  auto dirAttr = module->getAttrOfType<StringAttr>("onnx.source_dir");
  if (!dirAttr)
    return error() << "module has no onnx.source_dir";
  sourceDir = dirAttr.str();
  FailureOr<std::vector<SerializedRank>> ranksOrErr = serializeModule(module);
  if (failed(ranksOrErr))
    return failure();
  std::vector<SerializedRank> serialized = std::move(*ranksOrErr);
  const int world = int(serialized.size());
  for (SerializedRank &s : serialized)
    s.plan.set_producer("tpc " TPC_VERSION);
  if (options.finishPlans) {
    std::string why;
    if (!options.finishPlans(serialized, why))
      return error() << why;
  }
  if (failed(openSources(serialized)))
    return failure();

  OutputDir out;
  std::string why;
  std::vector<std::string> notes;
  if (!out.prepare(options.outDir, why, notes))
    return error() << why;
  for (const std::string &note : notes)
    llvm::errs() << "tpc compile: note: " << note << "\n";

  // The ranks' files on as many threads as there are cores (each writer
  // hashes on a thread of its own too): they share nothing but the mapped
  // sources, which they only read. After a failure no further rank starts.
  std::vector<RankFiles> files(static_cast<size_t>(world));
  std::atomic<int> next{0};
  std::atomic<bool> stop{false};
  std::mutex progressMu;
  auto work = [&] {
    for (int r = next++; r < world && !stop; r = next++) {
      files[size_t(r)] = writeRank(serialized[size_t(r)], r, out.temp());
      if (!files[size_t(r)].status) {
        stop = true;
      } else if (options.progress) {
        std::lock_guard<std::mutex> lock(progressMu);
        llvm::errs() << "tpc compile: wrote rank " << r << " of " << world
                     << "\n";
      }
    }
  };
  {
    std::vector<std::thread> threads;
    for (int t = 1; t < std::min(world, usableCores()); ++t)
      threads.emplace_back(work);
    work();
    for (std::thread &t : threads)
      t.join();
  }
  // The lowest failing rank's error, whichever thread met its error first
  // (ranks after a failure may not have started).
  for (const RankFiles &f : files)
    if (!f.status)
      return error() << f.status.message();
  llvm::json::Array ranks;
  for (int r = 0; r < world; ++r) {
    const RankFiles &f = files[size_t(r)];
    if (f.planHash.empty())
      return error() << "rank " << r << " was not written";
    fs::path dir = out.temp();
    ranks.push_back(llvm::json::Object{
        {"rank", r},
        {"plan", fileEntry(dir / ("rank" + std::to_string(r) + ".plan"),
                           f.planHash)},
        {"weights",
         fileEntry(dir / ("rank" + std::to_string(r) + ".safetensors"),
                   f.weightHash)}});
  }
  llvm::json::Array inputs =
      ioEntries(rankFunctions(module).front(), true, serialized.front().plan);
  llvm::json::Array outputs =
      ioEntries(rankFunctions(module).front(), false, serialized.front().plan);

  llvm::json::Object manifest{
      {"format", "tpc-engine"},
      {"format_version", int64_t(runtime::kEngineFormatVersion)},
      {"producer",
       llvm::json::Object{{"name", "tpc"}, {"version", TPC_VERSION}}},
      {"options", llvm::json::Object(options.compileOptions)},
      {"tp", world},
      {"inputs", std::move(inputs)},
      {"outputs", std::move(outputs)},
      {"ranks", std::move(ranks)}};
  if (serialized.front().plan.symbols_size()) {
    llvm::json::Array symbols;
    for (const plan::Symbol &sym : serialized.front().plan.symbols())
      symbols.push_back(llvm::json::Object{
          {"name", sym.name()}, {"min", sym.min()}, {"max", sym.max()}});
    manifest["symbols"] = std::move(symbols);
  }
  if (!options.generation.empty())
    manifest["generation"] = llvm::json::Object(options.generation);
  {
    std::error_code wec;
    llvm::raw_fd_ostream os((out.temp() / "engine.json").string(), wec);
    if (wec)
      return error() << "cannot write engine.json: " << wec.message();
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(manifest)))
       << "\n";
  }
  if (options.check) {
    std::string refused = options.check(out.temp().string());
    if (!refused.empty())
      return error() << "the engine would not load, so it was not written: "
                     << refused;
  }
  if (!out.commit(why))
    return error() << why;
  return success();
}

} // namespace

LogicalResult writeEngine(ModuleOp module, const EngineWriteOptions &options) {
  return Writer(module, options).run();
}

} // namespace tpc
