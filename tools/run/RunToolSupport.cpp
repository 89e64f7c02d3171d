//===- RunToolSupport.cpp - Pieces shared by the run modes ----------------===//
#include "tools/run/RunToolSupport.h"
#include "base/Cores.h"
#include "kernels/StorageTypes.h"

#include "kernels/cpu/Bgemm.h"
#include "kernels/cpu/QuantMatMul.h"
#include "kernels/cpu/Sgemm.h"
#include "kernels/cpu/VectorMath.h"

#include "runtime/io/Npz.h"
#include "kernels/Half.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <set>

namespace tpc::runtime {

namespace {
const char *toolName = "tpc run";
} // namespace

void setToolName(const char *name) { toolName = name; }

int toolError(std::ostream &err, const std::string &msg) {
  err << toolName << ": error: " << msg << "\n";
  err.flush();
  return 1;
}

namespace {

std::string inputList(const EngineManifest &m) {
  std::string s;
  for (const TensorSpec &t : m.inputs)
    s += (s.empty() ? "" : ", ") + t.name + " " + t.desc.str();
  return s.empty() ? "none" : s;
}

/// engine.json's options.input_bounds: input name -> rows of the table it
/// indexes.
std::map<std::string, int64_t> inputBounds(const EngineManifest &m) {
  std::map<std::string, int64_t> out;
  nlohmann::json opts = nlohmann::json::parse(m.optionsJson, nullptr, false);
  if (opts.is_object() && opts.contains("input_bounds") &&
      opts["input_bounds"].is_object())
    for (const auto &[name, v] : opts["input_bounds"].items())
      if (v.is_number_integer() && v.get<int64_t>() > 0)
        out[name] = v.get<int64_t>();
  return out;
}

/// Whether an array of `got` feeds an input of `want`: the same dtype and
/// shape, or a float8 / 4-bit / 2-bit input given as one byte per element
/// (NumPy saves ml_dtypes' arrays of those types as opaque bytes, read as
/// u8; see npyDescr).
bool sameOrStorageBits(const TensorDesc &got, const TensorDesc &want) {
  if (got.shape != want.shape)
    return false;
  return got.dtype == want.dtype ||
         (got.dtype == DType::U8 && isStorageOnlyDType(want.dtype));
}

/// One generated input (see RunToolOptions::randomInputs).
NamedArray randomInput(const TensorSpec &spec, int64_t bound,
                       std::mt19937_64 &rng) {
  NamedArray a;
  a.name = spec.name;
  a.array.desc = spec.desc;
  a.array.data.resize(spec.desc.bytes());
  const int64_t n = spec.desc.numel();
  uint8_t *p = a.array.data.data();
  std::uniform_int_distribution<int64_t> ids(0, std::max<int64_t>(bound, 1) - 1);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int64_t i = 0; i < n; ++i) {
    int64_t iv = bound > 0 ? ids(rng) : 1;
    switch (spec.desc.dtype) {
    case DType::I64: std::memcpy(p + 8 * i, &iv, 8); break;
    case DType::I32: { int32_t v = int32_t(iv); std::memcpy(p + 4 * i, &v, 4); break; }
    case DType::I8: p[i] = uint8_t(int8_t(iv)); break;
    case DType::U8: p[i] = uint8_t(iv); break;
    case DType::I16: { int16_t v = int16_t(iv); std::memcpy(p + 2 * i, &v, 2); break; }
    case DType::U16: { uint16_t v = uint16_t(iv); std::memcpy(p + 2 * i, &v, 2); break; }
    case DType::U32: { uint32_t v = uint32_t(iv); std::memcpy(p + 4 * i, &v, 4); break; }
    case DType::U64: { uint64_t v = uint64_t(iv); std::memcpy(p + 8 * i, &v, 8); break; }
    case DType::Bool: p[i] = 1; break;
    case DType::F32: { float v = normal(rng); std::memcpy(p + 4 * i, &v, 4); break; }
    case DType::F64: { double v = normal(rng); std::memcpy(p + 8 * i, &v, 8); break; }
    case DType::F16: { uint16_t v = floatToHalf(normal(rng)); std::memcpy(p + 2 * i, &v, 2); break; }
    case DType::BF16: { uint16_t v = floatToBf16(normal(rng)); std::memcpy(p + 2 * i, &v, 2); break; }
    case DType::F8E4M3FN:
    case DType::F8E4M3FNUZ:
    case DType::F8E5M2:
    case DType::F8E5M2FNUZ:
      p[i] = storage::floatToFloat8(normal(rng), spec.desc.dtype, true);
      break;
    case DType::U4:
    case DType::I4:
    case DType::U2:
    case DType::I2: p[i] = storage::intToSubByte(iv, spec.desc.dtype); break;
    }
  }
  return a;
}

} // namespace

Status readInputs(const EngineManifest &manifest,
                  const RunToolOptions &options,
                  std::vector<NamedArray> &out) {
  out.clear();
  std::set<std::string> given;
  // `from` names the flag and file in messages.
  auto check = [&](const std::string &name, const std::string &from,
                   const TensorDesc &desc) -> Status {
    const TensorSpec *spec = manifest.findInput(name);
    if (!spec)
      return Status::error(from + ": the engine has no input '" + name +
                           "' (its inputs: " + inputList(manifest) + ")");
    if (given.count(name))
      return Status::error("input '" + name + "' is given twice (" + from +
                           ")");
    // With run-time dimensions the sizes are the runner's to check.
    TensorDesc expected = spec->desc;
    if (!spec->dims.empty() && desc.shape.size() == expected.shape.size())
      expected.shape = desc.shape;
    if (!sameOrStorageBits(desc, expected))
      return Status::error("input '" + name + "': " + from + " holds " +
                           desc.str() + ", but the engine expects " +
                           spec->str());
    return Status::ok();
  };
  auto add = [&](const std::string &name, const std::string &from,
                 NpyArray array) -> Status {
    TPC_RETURN_IF_ERROR(check(name, from, array.desc));
    // Raw bytes of a storage type take the engine's dtype.
    array.desc.dtype = manifest.findInput(name)->desc.dtype;
    given.insert(name);
    NamedArray a;
    a.name = name;
    a.array = std::move(array);
    out.push_back(std::move(a));
    return Status::ok();
  };
  for (const auto &spec : options.inputs) {
    const std::string &name = spec.first, &file = spec.second;
    if (!manifest.findInput(name))
      return check(name, "--input " + name + "=" + file, TensorDesc());
    // The header is checked against the engine before any data is read.
    NpyArray array;
    Status refused;
    Status read = readNpy(file, array, [&](const TensorDesc &desc) {
      refused = check(name, file, desc);
      return refused;
    });
    if (!refused)
      return refused;
    TPC_RETURN_IF_ERROR(read.withContext("input '" + name + "': "));
    TPC_RETURN_IF_ERROR(add(name, file, std::move(array)));
  }
  for (const std::string &archive : options.inputArchives) {
    std::vector<std::pair<std::string, NpyArray>> arrays;
    TPC_RETURN_IF_ERROR(readNpz(archive, arrays));
    for (auto &[name, array] : arrays)
      TPC_RETURN_IF_ERROR(
          add(name, archive + " (member " + name + ")", std::move(array)));
  }
  std::map<std::string, int64_t> bounds;
  std::mt19937_64 rng(options.seed);
  if (options.randomInputs)
    bounds = inputBounds(manifest);
  for (const TensorSpec &spec : manifest.inputs) {
    if (given.count(spec.name))
      continue;
    if (!options.randomInputs)
      return Status::error("input '" + spec.name + "' (" + spec.desc.str() +
                           ") is missing: pass --input " + spec.name +
                           "=FILE.npy (or --random-inputs)");
    auto it = bounds.find(spec.name);
    out.push_back(randomInput(spec, it == bounds.end() ? 0 : it->second, rng));
    out.back().generated = true;
  }
  return Status::ok();
}

Status saveGeneratedInputs(const RunToolOptions &options,
                           const std::vector<NamedArray> &inputs) {
  if (options.outputDir.empty())
    return Status::ok();
  for (const NamedArray &a : inputs) {
    if (!a.generated)
      continue;
    std::filesystem::path dir = std::filesystem::path(options.outputDir) /
                                "inputs";
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec)
      return Status::error("cannot create '" + dir.string() +
                           "': " + ec.message());
    TPC_RETURN_IF_ERROR(writeNpy((dir / (outputFileName(a.name) + ".npy")).string(),
                                 a.array.desc, a.array.data.data()));
  }
  return Status::ok();
}

Status setInputs(EngineRunner &runner, const std::vector<NamedArray> &inputs) {
  for (const NamedArray &a : inputs)
    TPC_RETURN_IF_ERROR(
        runner.setInput(a.name, a.array.desc, a.array.data.data()));
  return Status::ok();
}

Status checkThreads(int ranksOnHost, const RunToolOptions &options) {
  const int cores = usableCores();
  const long want = long(ranksOnHost) * options.threadsPerRank;
  if (want > cores && !options.oversubscribe)
    return Status::error(
        std::to_string(ranksOnHost) + " rank(s) x " +
        std::to_string(options.threadsPerRank) + " thread(s) = " +
        std::to_string(want) + " threads exceed the " + std::to_string(cores) +
        " cores available; lower --threads or pass --oversubscribe");
  return Status::ok();
}

Status writeOutputs(const EngineRunner &runner, const std::string &dir,
                    std::ostream *listing, std::ostream &err) {
  if (dir.empty())
    return Status::ok();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return Status::error("cannot create output directory '" + dir +
                         "': " + ec.message());
  for (const std::string &name : runner.outputNames()) {
    TensorDesc desc;
    const void *data = nullptr;
    if (!runner.output(name, desc, data) || (!data && desc.bytes()))
      return Status::error("output '" + name + "' has no data");
    std::string path = dir + "/" + outputFileName(name) + ".npy";
    if (desc.dtype == DType::BF16) {
      // NumPy has no bfloat16: widen exactly to float32.
      std::vector<float> wide(size_t(desc.numel()));
      const uint16_t *src = static_cast<const uint16_t *>(data);
      for (size_t i = 0; i < wide.size(); ++i)
        wide[i] = bf16ToFloat(src[i]);
      err << "tpc run: note: output '" << name
          << "' is bf16; written as float32\n";
      TPC_RETURN_IF_ERROR(writeNpy(path, {DType::F32, desc.shape}, wide.data())
                              .withContext("output '" + name + "': "));
      if (listing)
        *listing << "wrote " << path << " (f32[" << shapeToString(desc.shape)
                 << "], from bf16)\n";
      continue;
    }
    TPC_RETURN_IF_ERROR(
        writeNpy(path, desc, data).withContext("output '" + name + "': "));
    if (listing)
      *listing << "wrote " << path << " (" << desc.str() << ")\n";
  }
  return Status::ok();
}

LatencyStats latencyStats(std::vector<double> v) {
  LatencyStats s;
  if (v.empty())
    return s;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  auto rank = [&](double q) {
    size_t k = size_t(std::ceil(q * double(n)));
    return v[std::min(n, std::max<size_t>(k, 1)) - 1];
  };
  double sum = 0;
  for (double x : v)
    sum += x;
  s.mean = sum / double(n);
  s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  s.p90 = rank(0.90);
  s.p99 = rank(0.99);
  s.min = v.front();
  s.max = v.back();
  s.throughput = s.mean > 0 ? 1000.0 / s.mean : 0;
  return s;
}

std::string formatLatency(const LatencyStats &s) {
  char line[256];
  std::snprintf(line, sizeof(line),
                "mean %.3f ms, median %.3f ms, p90 %.3f ms, p99 %.3f ms, "
                "min %.3f ms, max %.3f ms, %.1f forwards/s",
                s.mean, s.median, s.p90, s.p99, s.min, s.max, s.throughput);
  return line;
}

nlohmann::json latencyJson(const LatencyStats &s) {
  return {{"mean", s.mean}, {"median", s.median}, {"p90", s.p90},
          {"p99", s.p99},   {"min", s.min},       {"max", s.max}};
}

namespace {

/// Every rank's `text`, in rank order, on every rank (lengths first, then
/// the bytes).
Status gatherText(Communicator &comm, const std::string &text,
                  std::vector<std::string> &out) {
  const int world = comm.size();
  std::vector<int64_t> lengths(size_t(world), 0);
  int64_t mine = int64_t(text.size());
  TPC_RETURN_IF_ERROR(comm.allGather(&mine, lengths.data(), 1, DType::I64));
  std::vector<size_t> counts(lengths.begin(), lengths.end());
  size_t total = 0;
  for (size_t c : counts)
    total += c;
  std::vector<char> all(total);
  TPC_RETURN_IF_ERROR(
      comm.allGatherV(text.data(), all.data(), counts, DType::U8));
  out.clear();
  size_t at = 0;
  for (size_t c : counts) {
    out.emplace_back(all.data() + at, c);
    at += c;
  }
  return Status::ok();
}

/// The latency of the timed forwards and the engine's load time: one JSON
/// object with --json, one line of text otherwise.
void printLatency(const EngineRunner &runner,
                  const std::vector<double> &wallMillis,
                  const std::vector<double> &deviceMillis, double loadMillis,
                  const RunToolOptions &o, std::ostream &out) {
  const LatencyStats w = latencyStats(wallMillis);
  const bool cuda = o.backend == Backend::Cuda;
  if (o.json) {
    nlohmann::json j = {{"latency_ms", latencyJson(w)},
                        {"throughput_per_s", w.throughput},
                        {"load_ms", loadMillis},
                        {"tp", runner.tp()},
                        {"iterations", o.iterations}};
    if (cuda) {
      j["device_ms"] = latencyJson(latencyStats(deviceMillis));
      j["backend"] = "cuda";
      j["cuda_graph"] = o.gpu.cudaGraph;
      j["emulate_ranks"] = o.gpu.emulateRanks;
      j["devices"] = runner.describe();
    } else {
      j["threads"] = o.threadsPerRank;
      j["gemm_kernel"] = cpu::sgemmKernelName();
      j["bf16_gemm_kernel"] = cpu::bgemmKernelName(cpu::bgemmKernel());
      j["nbits_gemm_kernel"] = cpu::blockQuantKernelName();
      j["vector_math"] = cpu::vectorIsaName(cpu::vectorMathIsa());
    }
    out << j.dump() << "\n";
    out.flush();
    return;
  }
  char tail[320];
  const char *plural = o.iterations == 1 ? "" : "s";
  if (cuda)
    std::snprintf(tail, sizeof(tail),
                  "; device median %.3f ms; load %.1f ms (%d iteration%s after "
                  "%d warmup; tp %d on CUDA%s%s)\n",
                  latencyStats(deviceMillis).median, loadMillis, o.iterations,
                  plural, o.warmup, runner.tp(),
                  o.gpu.cudaGraph ? ", graphs" : "",
                  o.gpu.emulateRanks ? ", ranks emulated on one GPU" : "");
  else
    std::snprintf(tail, sizeof(tail),
                  "; load %.1f ms (%d iteration%s after %d warmup; tp %d, %d "
                  "thread%s per rank; %s GEMM, %s bf16 GEMM, vector math %s)\n",
                  loadMillis, o.iterations, plural, o.warmup, runner.tp(),
                  o.threadsPerRank, o.threadsPerRank == 1 ? "" : "s",
                  cpu::sgemmKernelName(),
                  cpu::bgemmKernelName(cpu::bgemmKernel()),
                  cpu::vectorIsaName(cpu::vectorMathIsa()));
  out << "latency: " << formatLatency(w) << tail;
  if (cuda)
    out << "devices: " << runner.describe() << "\n";
  out.flush();
}

} // namespace

int runForwards(EngineRunner &runner, Communicator *comm,
                const RunToolOptions &o, const std::vector<NamedArray> &inputs,
                double loadMillis, std::ostream &out, std::ostream &err) {
  const int rank = comm ? comm->rank() : 0;
  const std::string who = comm && o.backend == Backend::Cuda
                              ? "rank " + std::to_string(rank) + ": "
                              : std::string();
  std::vector<double> wall, device;
  // Per rank run here: its plan and the step times of every timed forward.
  std::vector<RankStepTimes> ranks;
  std::vector<RankRuns> runs;
  for (int i = 0; i < o.warmup + o.iterations; ++i) {
    if (comm)
      if (Status st = comm->barrier(); !st)
        return toolError(err,
                         "rank " + std::to_string(rank) + ": " + st.message());
    // Under MPI a failing forward aborts the job from inside run(), after
    // printing; in process every rank has stopped (or been left behind).
    if (Status st = runner.run(); !st) {
      if (runner.abandoned()) {
        // A rank's thread is still inside the engine: end the process now
        // rather than wait for it.
        toolError(err, st.message());
        err.flush();
        std::fflush(nullptr);
        std::_Exit(1);
      }
      return toolError(err, who + st.message());
    }
    if (i < o.warmup)
      continue;
    wall.push_back(runner.lastRunMillis());
    device.push_back(runner.lastDeviceMillis());
    ranks = runner.lastStepTimes();
    runs.resize(ranks.size());
    for (size_t r = 0; r < ranks.size(); ++r)
      runs[r].push_back(*ranks[r].steps);
  }
  const bool profile = !o.profilePath.empty() && !ranks.empty();
  std::vector<std::string> events;
  for (size_t r = 0; profile && r < ranks.size(); ++r)
    events.push_back(traceEventsJson(*ranks[r].plan, ranks[r].rank, runs[r]));
  if (profile && comm) {
    std::string mine = events.empty() ? std::string() : events[0];
    if (Status st = gatherText(*comm, mine, events); !st)
      return toolError(err,
                       "rank " + std::to_string(rank) + ": " + st.message());
  }
  if (rank != 0)
    return 0;
  for (const std::string &note : runner.notes())
    err << "tpc run: note: " << note << "\n";
  if (Status st = saveGeneratedInputs(o, inputs); !st)
    return toolError(err, st.message());
  if (Status st =
          writeOutputs(runner, o.outputDir, o.json ? nullptr : &out, err);
      !st)
    return toolError(err, st.message());
  printLatency(runner, wall, device, loadMillis, o, out);
  if (profile) {
    if (Status st = writeChromeTrace(o.profilePath, events); !st)
      return toolError(err, st.message());
    if (!o.json) {
      out << "profile: " << o.profilePath << " (Chrome trace: Perfetto, "
          << "chrome://tracing); rank 0's slowest steps, mean of "
          << runs[0].size() << " run" << (runs[0].size() == 1 ? "" : "s")
          << ":\n"
          << formatTopSteps(*ranks[0].plan, runs[0]);
      out.flush();
    }
  }
  return 0;
}

} // namespace tpc::runtime
