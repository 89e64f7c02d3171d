//===- RunToolSupport.cpp - Pieces shared by the run modes ----------------===//
#include "runtime/engine/RunToolSupport.h"

#include "runtime/support/Half.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>

namespace tpc::runtime {

int toolError(std::ostream &err, const std::string &msg) {
  err << "tpc run: error: " << msg << "\n";
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

} // namespace

Status readInputs(const EngineManifest &manifest,
                  const RunToolOptions &options,
                  std::vector<NamedArray> &out) {
  out.clear();
  std::set<std::string> given;
  for (const auto &[name, file] : options.inputs) {
    const TensorSpec *spec = manifest.findInput(name);
    if (!spec)
      return Status::error("--input " + name + "=" + file +
                           ": the engine has no input '" + name +
                           "' (its inputs: " + inputList(manifest) + ")");
    if (!given.insert(name).second)
      return Status::error("--input given twice for '" + name + "'");
    NamedArray a;
    a.name = name;
    TPC_RETURN_IF_ERROR(readNpy(file, a.array)
                            .withContext("input '" + name + "': "));
    if (a.array.desc.dtype != spec->desc.dtype ||
        a.array.desc.shape != spec->desc.shape)
      return Status::error("input '" + name + "': " + file + " holds " +
                           a.array.desc.str() + ", but the engine expects " +
                           spec->desc.str());
    out.push_back(std::move(a));
  }
  for (const TensorSpec &spec : manifest.inputs)
    if (!given.count(spec.name))
      return Status::error("input '" + spec.name + "' (" + spec.desc.str() +
                           ") is missing: pass --input " + spec.name +
                           "=FILE.npy");
  return Status::ok();
}

Status setInputs(Session &session, const std::vector<NamedArray> &inputs) {
  for (const NamedArray &a : inputs)
    TPC_RETURN_IF_ERROR(
        session.setInput(a.name, a.array.desc, a.array.data.data()));
  return Status::ok();
}

Status checkThreads(int ranksOnHost, const RunToolOptions &options) {
  const int cores = availableCores();
  const long want = long(ranksOnHost) * options.threadsPerRank;
  if (want > cores && !options.oversubscribe)
    return Status::error(
        std::to_string(ranksOnHost) + " rank(s) x " +
        std::to_string(options.threadsPerRank) + " thread(s) = " +
        std::to_string(want) + " threads exceed the " + std::to_string(cores) +
        " cores available; lower --threads or pass --oversubscribe");
  return Status::ok();
}

Status writeOutputs(const Session &session, const std::string &dir,
                    std::ostream *listing, std::ostream &err) {
  return writeOutputs(
      session.outputNames(),
      [&session](const std::string &name, TensorDesc &desc,
                 const void *&data) { return session.output(name, desc, data); },
      dir, listing, err);
}

Status writeOutputs(const std::vector<std::string> &names,
                    const OutputLookup &lookup, const std::string &dir,
                    std::ostream *listing, std::ostream &err) {
  if (dir.empty())
    return Status::ok();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return Status::error("cannot create output directory '" + dir +
                         "': " + ec.message());
  for (const std::string &name : names) {
    TensorDesc desc;
    const void *data = nullptr;
    if (!lookup(name, desc, data) || (!data && desc.bytes()))
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

void printLatency(const std::vector<double> &millis, double loadMillis, int tp,
                  const RunToolOptions &options, std::ostream &out) {
  LatencyStats s = latencyStats(millis);
  if (options.json) {
    nlohmann::json j = {{"latency_ms", latencyJson(s)},
                        {"throughput_per_s", s.throughput},
                        {"load_ms", loadMillis},
                        {"tp", tp},
                        {"threads", options.threadsPerRank},
                        {"iterations", options.iterations}};
    out << j.dump() << "\n";
    out.flush();
    return;
  }
  char tail[200];
  std::snprintf(tail, sizeof(tail),
                "; load %.1f ms (%d iteration%s after %d warmup; tp %d, %d "
                "thread%s per rank)\n",
                loadMillis, options.iterations,
                options.iterations == 1 ? "" : "s", options.warmup, tp,
                options.threadsPerRank,
                options.threadsPerRank == 1 ? "" : "s");
  out << "latency: " << formatLatency(s) << tail;
  out.flush();
}

} // namespace tpc::runtime
