//===- RunGpu.cpp - tpc run --backend cuda (every rank in this process) ---===//
//
// Loads the engine through the GPU backend (runtime/backend/Backend.h), runs
// warmup + timed forwards and writes rank 0's outputs. Wall latency is what
// the CPU mode reports; the device time between events on the streams is
// reported beside it.
//
//===----------------------------------------------------------------------===//
#include "tools/run/RunToolSupport.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>

namespace tpc::runtime {

int runGpuTool(const RunToolOptions &o, std::ostream &out, std::ostream &err) {
  EngineManifest manifest;
  if (Status st = EngineManifest::load(o.engineDir, manifest); !st)
    return toolError(err, st.message());
  std::vector<NamedArray> inputs;
  if (Status st = readInputs(manifest, o, inputs); !st)
    return toolError(err, st.message());
  if (o.gpu.emulateRanks && manifest.tp == 1)
    err << "tpc run: note: --emulate-ranks has no effect on an engine with "
           "tp 1\n";

  std::unique_ptr<BackendRunner> runner;
  auto loadStart = std::chrono::steady_clock::now();
  if (Status st = createCudaRunner(o.engineDir, o.gpu, runner); !st)
    return toolError(err, st.message());
  const double loadMillis = millisSince(loadStart);
  for (const NamedArray &a : inputs)
    if (Status st = runner->setInput(a.name, a.array.desc, a.array.data.data());
        !st)
      return toolError(err, st.message());

  std::vector<double> wall, device;
  for (int i = 0; i < o.warmup + o.iterations; ++i) {
    if (Status st = runner->run(); !st)
      return toolError(err, st.message());
    if (i >= o.warmup) {
      wall.push_back(runner->lastRunMillis());
      device.push_back(runner->lastDeviceMillis());
    }
  }
  for (const std::string &note : runner->notes())
    err << "tpc run: note: " << note << "\n";
  if (Status ws = saveGeneratedInputs(o, inputs); !ws)
    return toolError(err, ws.message());
  if (Status ws = writeOutputs(
          runner->outputNames(),
          [&](const std::string &name, TensorDesc &desc, const void *&data) {
            return runner->output(name, desc, data);
          },
          o.outputDir, o.json ? nullptr : &out, err);
      !ws)
    return toolError(err, ws.message());

  const LatencyStats w = latencyStats(wall), d = latencyStats(device);
  if (o.json) {
    nlohmann::json j = {
        {"latency_ms", latencyJson(w)},
        {"device_ms", latencyJson(d)},
        {"throughput_per_s", w.throughput},
        {"load_ms", loadMillis},
        {"tp", manifest.tp},
        {"iterations", o.iterations},
        {"backend", "cuda"},
        {"cuda_graph", o.gpu.cudaGraph},
        {"emulate_ranks", o.gpu.emulateRanks},
        {"devices", runner->describe()}};
    out << j.dump() << "\n";
    out.flush();
    return 0;
  }
  char line[320];
  std::snprintf(line, sizeof(line),
                "; device median %.3f ms; load %.1f ms (%d iteration%s after "
                "%d warmup; tp %d on CUDA%s%s)\n",
                d.median, loadMillis, o.iterations,
                o.iterations == 1 ? "" : "s", o.warmup, manifest.tp,
                o.gpu.cudaGraph ? ", graphs" : "",
                o.gpu.emulateRanks ? ", ranks emulated on one GPU" : "");
  out << "latency: " << formatLatency(w) << line
      << "devices: " << runner->describe() << "\n";
  out.flush();
  return 0;
}

} // namespace tpc::runtime
