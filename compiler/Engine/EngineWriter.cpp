//===- EngineWriter.cpp - Writing engine folders --------------------------===//
#include "compiler/Engine/EngineWriter.h"
#include "compiler/Engine/OutputDir.h"
#include "compiler/Engine/PlanSerializer.h"
#include "compiler/Dialect/ONNX/IR/KernelBridge.h"
#include "compiler/Dialect/TP/IR/TPOps.h"
#include "runtime/io/Safetensors.h"
#include "kernels/Half.h"
#include "runtime/support/MappedFile.h"
#include "runtime/support/Sha256.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
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
  InFlightDiagnostic error() { return module.emitError(); }
  LogicalResult writeRank(func::FuncOp func, int rank, int world,
                          const fs::path &dir, llvm::json::Array &ranks,
                          llvm::json::Array *inputs, llvm::json::Array *outputs);
  /// Writes the weight file and returns its SHA-256, computed on the way.
  FailureOr<std::string> writeWeights(const SerializedRank &s,
                                      const fs::path &path);
  FailureOr<const MappedFile *> source(const std::string &file);

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

FailureOr<const MappedFile *> Writer::source(const std::string &file) {
  auto it = sources.find(file);
  if (it != sources.end())
    return it->second.get();
  auto m = std::make_unique<MappedFile>();
  Status st = MappedFile::open((fs::path(sourceDir) / file).string(), *m);
  if (!st.isOk())
    return error() << "cannot read weights: " << st.message();
  const MappedFile *raw = m.get();
  sources[file] = std::move(m);
  return raw;
}

FailureOr<std::string> Writer::writeWeights(const SerializedRank &s,
                                            const fs::path &path) {
  std::vector<SafetensorsEntry> entries;
  for (const WeightSlice &w : s.weights)
    entries.push_back({w.tensor, w.desc});
  SafetensorsWriter writer;
  std::vector<uint16_t> narrowed(kNarrowChunk);
  std::map<std::string, std::string> meta = {{"format", "pt"},
                                             {"producer", "tpc"}};
  if (Status st = writer.open(path.string(), entries, meta); !st.isOk())
    return error() << st.message();
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
      return error() << st.message();
    if (w.isConstant) {
      if (Status st = writer.append(w.data.data(), w.data.size()); !st.isOk())
        return error() << st.message();
      continue;
    }
    FailureOr<const MappedFile *> src = source(w.file);
    if (failed(src))
      return failure();
    // Bytes are counted in the source's element type; a converted weight
    // is narrowed chunk by chunk on its way to the writer.
    size_t elem = dtypeSize(w.sourceDType);
    bool convert = w.sourceDType != w.desc.dtype;
    bool to16 = w.desc.dtype == DType::F16 || w.desc.dtype == DType::BF16;
    if (convert && !(w.sourceDType == DType::F32 && to16))
      return error() << "weight '" << w.tensor << "': cannot convert "
                     << dtypeName(w.sourceDType) << " to "
                     << dtypeName(w.desc.dtype);
    std::optional<uint64_t> srcBytes = checkedByteSize(w.sourceShape, elem);
    uint64_t end = 0;
    if (w.offset < 0 || !srcBytes ||
        __builtin_add_overflow(uint64_t(w.offset), *srcBytes, &end) ||
        end > (*src)->size())
      return error() << "weight '" << w.tensor << "' lies outside '"
                     << w.file << "'";
    const uint8_t *base = (*src)->data() + w.offset;
    std::vector<int64_t> ranges = w.ranges;
    int64_t axis = w.axis;
    if (ranges.empty()) {
      axis = 0;
      ranges = {0, w.sourceShape.empty() ? 1 : w.sourceShape[0]};
    }
    int64_t outer = 1, inner = int64_t(elem);
    for (int64_t d = 0; d < int64_t(w.sourceShape.size()); ++d) {
      if (d < axis)
        outer *= w.sourceShape[d];
      else if (d > axis)
        inner *= w.sourceShape[d];
    }
    int64_t axisDim = w.sourceShape.empty() ? 1 : w.sourceShape[axis];
    // Source pages are needed once: release them every few MiB so that
    // resident memory stays flat however large the weights are.
    constexpr int64_t kReleaseEvery = 8 << 20;
    int64_t released = 0;
    auto copy = [&](const uint8_t *from, int64_t bytes) -> LogicalResult {
      for (int64_t done = 0; done < bytes;) {
        int64_t chunk = convert ? int64_t(narrowed.size() * 4) : kReleaseEvery;
        int64_t n = std::min<int64_t>(bytes - done, chunk);
        Status st = convert ? appendNarrowed(writer, from + done, size_t(n / 4),
                                             w.desc.dtype == DType::BF16,
                                             narrowed)
                            : writer.append(from + done, size_t(n));
        if (!st.isOk())
          return error() << st.message();
        done += n;
        int64_t consumed = (from + done) - base;
        if (consumed - released >= kReleaseEvery) {
          (void)(*src)->adviseDontNeed(size_t(w.offset + released),
                                       size_t(consumed - released));
          released = consumed;
        }
      }
      return success();
    };
    for (int64_t o = 0; o < outer; ++o)
      for (size_t r = 0; r < ranges.size(); r += 2)
        if (failed(copy(base + (o * axisDim + ranges[r]) * inner,
                        ranges[r + 1] * inner)))
          return failure();
    (void)(*src)->adviseDontNeed(size_t(w.offset), size_t(*srcBytes));
  }
  if (Status st = writer.close(); !st.isOk())
    return error() << st.message();
  if (!writer.sha256Hex().empty())
    return writer.sha256Hex();
  std::string hash;
  if (Status st = sha256File(path.string(), hash); !st.isOk())
    return error() << st.message();
  return hash;
}

llvm::json::Object fileEntry(const fs::path &path, const std::string &hash) {
  return llvm::json::Object{{"file", path.filename().string()},
                            {"bytes", int64_t(fs::file_size(path))},
                            {"sha256", hash}};
}

llvm::json::Array ioEntries(func::FuncOp func, bool inputs) {
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
    out.push_back(llvm::json::Object{
        {"name", name},
        {"dtype", desc ? dtypeName(desc->dtype) : "invalid"},
        {"shape", std::move(shape)}});
  }
  return out;
}

LogicalResult Writer::writeRank(func::FuncOp func, int rank, int world,
                                const fs::path &dir, llvm::json::Array &ranks,
                                llvm::json::Array *inputs,
                                llvm::json::Array *outputs) {
  FailureOr<SerializedRank> s = serializeRank(func, rank, world);
  if (failed(s))
    return failure();
  s->plan.set_producer("tpc " TPC_VERSION);
  fs::path planPath = dir / ("rank" + std::to_string(rank) + ".plan");
  fs::path weightPath = dir / ("rank" + std::to_string(rank) + ".safetensors");
  {
    std::ofstream out(planPath, std::ios::binary);
    if (!out || !s->plan.SerializeToOstream(&out))
      return error() << "cannot write '" << planPath.string() << "'";
  }
  FailureOr<std::string> weightHash = writeWeights(*s, weightPath);
  if (failed(weightHash))
    return failure();
  std::string planHash;
  if (Status st = sha256File(planPath.string(), planHash); !st.isOk())
    return error() << st.message();
  ranks.push_back(
      llvm::json::Object{{"rank", rank},
                         {"plan", fileEntry(planPath, planHash)},
                         {"weights", fileEntry(weightPath, *weightHash)}});
  if (inputs)
    *inputs = ioEntries(func, true);
  if (outputs)
    *outputs = ioEntries(func, false);
  if (options.progress)
    llvm::errs() << "tpc compile: wrote rank " << rank << " of " << world
                 << "\n";
  return success();
}

LogicalResult Writer::run() {
  auto dirAttr = module->getAttrOfType<StringAttr>("onnx.source_dir");
  if (!dirAttr)
    return error() << "module has no onnx.source_dir";
  sourceDir = dirAttr.str();
  std::vector<func::FuncOp> funcs;
  for (auto f : module.getOps<func::FuncOp>())
    if (!f.isExternal())
      funcs.push_back(f);
  std::sort(funcs.begin(), funcs.end(), [](func::FuncOp a, func::FuncOp b) {
    auto ra = a->getAttrOfType<IntegerAttr>(tp::kRankAttr);
    auto rb = b->getAttrOfType<IntegerAttr>(tp::kRankAttr);
    return (ra ? ra.getInt() : 0) < (rb ? rb.getInt() : 0);
  });
  int world = int(funcs.size());
  if (world == 0)
    return error() << "nothing to write: the module has no function";

  OutputDir out;
  std::string why;
  std::vector<std::string> notes;
  if (!out.prepare(options.outDir, why, notes))
    return error() << why;
  for (const std::string &note : notes)
    llvm::errs() << "tpc compile: note: " << note << "\n";
  llvm::json::Array ranks, inputs, outputs;
  for (auto [i, f] : llvm::enumerate(funcs))
    if (failed(writeRank(f, int(i), world, out.temp(), ranks,
                         i == 0 ? &inputs : nullptr,
                         i == 0 ? &outputs : nullptr)))
      return failure();

  llvm::json::Object manifest{
      {"format", "tpc-engine"},
      {"format_version", int64_t(kPlanFormatVersion)},
      {"producer", llvm::json::Object{{"name", "tpc"}, {"version", TPC_VERSION}}},
      {"options", llvm::json::Object(options.compileOptions)},
      {"tp", world},
      {"inputs", std::move(inputs)},
      {"outputs", std::move(outputs)},
      {"ranks", std::move(ranks)}};
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
