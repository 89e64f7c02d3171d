//===- CudaTestUtil.cpp - Running CUDA kernels against the CPU ------------===//
#include "CudaTestUtil.h"

#include "kernels/cuda/Check.h"
#include "kernels/cuda/Registry.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <sstream>
#include <utility>

namespace tpc::cuda::test {

using cpu::isAbsent;

bool gpuAvailable(std::string &why) {
  static const std::string reason = [] {
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      return std::string("cudaGetDeviceCount: ") + cudaGetErrorName(err) +
             " (" + cudaGetErrorString(err) + ")";
    }
    if (count == 0)
      return std::string("cudaGetDeviceCount found no device");
    err = cudaSetDevice(0);
    if (err == cudaSuccess)
      err = cudaFree(nullptr); // creates the context
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      return std::string("creating a context on device 0: ") +
             cudaGetErrorName(err);
    }
    return std::string();
  }();
  why = reason;
  return reason.empty();
}

Tolerance defaultTolerance(DType t) {
  switch (t) {
  case DType::F32: return {1e-5, 1e-6};
  case DType::F64: return {1e-12, 1e-13};
  case DType::F16: return {2e-3, 1e-3};
  case DType::BF16: return {1.6e-2, 1e-2};
  default: return {0, 0};
  }
}

static bool isFloat(DType t) {
  return t == DType::F32 || t == DType::F64 || t == DType::F16 ||
         t == DType::BF16;
}
static bool isHalf(DType t) { return t == DType::F16 || t == DType::BF16; }

namespace {

/// Device memory of one operand, freed on destruction.
struct DeviceOperand {
  void *base = nullptr;
  uint8_t *data = nullptr;
  size_t bytes = 0;
  ~DeviceOperand() {
    if (base)
      (void)cudaFree(base);
  }
};

/// The CUDA context of the tests: one cuBLASLt handle and workspace.
KernelContext &context() {
  static std::unique_ptr<KernelContext> ctx = [] {
    std::unique_ptr<KernelContext> c;
    Status st = KernelContext::create(KernelContext::kDefaultWorkspaceBytes,
                                      /*allowTf32=*/false, c);
    EXPECT_TRUE(st.isOk()) << st.message();
    return c;
  }();
  return *ctx;
}

#define EXPECT_CUDA_OK(expr)                                                   \
  do {                                                                         \
    cudaError_t _e = (expr);                                                   \
    ASSERT_EQ(_e, cudaSuccess) << #expr << ": " << cudaGetErrorName(_e);       \
  } while (0)

void poison(std::vector<DeviceOperand> &outs) {
  for (DeviceOperand &o : outs)
    if (o.bytes) {
      EXPECT_EQ(cudaMemset(o.data, 0xFF, o.bytes), cudaSuccess);
    }
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

void download(const std::vector<DeviceOperand> &outs,
              const std::vector<TensorDesc> &descs,
              std::vector<Tensor> &host) {
  host.clear();
  for (size_t i = 0; i < outs.size(); ++i) {
    Tensor t;
    t.desc = descs[i];
    t.bytes.assign(outs[i].bytes, 0);
    if (outs[i].bytes) {
      EXPECT_EQ(cudaMemcpy(t.bytes.data(), outs[i].data, outs[i].bytes,
                           cudaMemcpyDeviceToHost),
                cudaSuccess);
    }
    host.push_back(std::move(t));
  }
}

/// The CUDA outputs of `c`, eager (`eager`) and replayed from a graph
/// (`graph`).
void runOnGpu(const ParityCase &c, std::vector<Tensor> &eager,
              std::vector<Tensor> &graph) {
  const KernelDef *def = lookupCudaKernel(c.kernel);
  ASSERT_NE(def, nullptr) << "no CUDA kernel " << c.kernel;
  std::vector<TensorDesc> in, out = c.outputs;
  for (const Tensor &t : c.inputs)
    in.push_back(t.desc);
  std::unique_ptr<PreparedKernel> k;
  Status st = def->prepare(context(), in, out, c.attrs, k);
  ASSERT_TRUE(st.isOk()) << "CUDA prepare: " << st.message();
  ASSERT_TRUE(k);

  auto allocate = [&](const TensorDesc &d, DeviceOperand &op) {
    if (isAbsent(d))
      return;
    op.bytes = d.bytes();
    const size_t shift = size_t(c.misalign) * dtypeSize(d.dtype);
    EXPECT_EQ(cudaMalloc(&op.base, op.bytes + shift + 256), cudaSuccess);
    op.data = static_cast<uint8_t *>(op.base) + shift;
  };
  std::vector<DeviceOperand> ins(c.inputs.size()), outs(out.size());
  std::vector<const void *> inPtrs;
  std::vector<void *> outPtrs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    allocate(c.inputs[i].desc, ins[i]);
    if (ins[i].bytes)
      EXPECT_CUDA_OK(cudaMemcpy(ins[i].data, c.inputs[i].data(),
                                ins[i].bytes, cudaMemcpyHostToDevice));
    inPtrs.push_back(ins[i].data);
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (i == 0 && c.inPlace >= 0) {
      outPtrs.push_back(ins[size_t(c.inPlace)].data);
      continue;
    }
    allocate(out[i], outs[i]);
    outPtrs.push_back(outs[i].data);
  }
  // In place: output 0 is input `inPlace`'s buffer, restored before each
  // run instead of poisoned.
  auto restore = [&] {
    if (c.inPlace < 0)
      return;
    const Tensor &t = c.inputs[size_t(c.inPlace)];
    EXPECT_EQ(cudaMemcpy(ins[size_t(c.inPlace)].data, t.data(), t.bytes.size(),
                         cudaMemcpyHostToDevice),
              cudaSuccess);
  };
  auto fetch = [&](std::vector<Tensor> &host) {
    download(outs, out, host);
    if (c.inPlace >= 0) {
      host[0].bytes.resize(out[0].bytes());
      EXPECT_EQ(cudaMemcpy(host[0].bytes.data(), outPtrs[0], out[0].bytes(),
                           cudaMemcpyDeviceToHost),
                cudaSuccess);
    }
  };
  cudaStream_t stream = nullptr;
  EXPECT_CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  poison(outs);
  restore();
  st = k->run(inPtrs.data(), outPtrs.data(), stream);
  EXPECT_TRUE(st.isOk()) << "CUDA run: " << st.message();
  EXPECT_CUDA_OK(cudaStreamSynchronize(stream));
  fetch(eager);

  // run() must be capturable: no allocation, no synchronisation, no
  // device change.
  poison(outs);
  restore();
  cudaGraph_t g = nullptr;
  cudaGraphExec_t exec = nullptr;
  EXPECT_CUDA_OK(
      cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  st = k->run(inPtrs.data(), outPtrs.data(), stream);
  cudaError_t end = cudaStreamEndCapture(stream, &g);
  EXPECT_TRUE(st.isOk()) << "CUDA run under capture: " << st.message();
  EXPECT_EQ(end, cudaSuccess) << "capture: " << cudaGetErrorName(end);
  if (end == cudaSuccess && st.isOk()) {
    EXPECT_CUDA_OK(cudaGraphInstantiate(&exec, g, 0));
    EXPECT_CUDA_OK(cudaGraphLaunch(exec, stream));
    EXPECT_CUDA_OK(cudaStreamSynchronize(stream));
    fetch(graph);
  }
  if (exec)
    (void)cudaGraphExecDestroy(exec);
  if (g)
    (void)cudaGraphDestroy(g);
  (void)cudaStreamDestroy(stream);
  (void)cudaGetLastError();
}

/// `t` with f16/bf16 converted to f32 (exactly).
Tensor widen(const Tensor &t) {
  if (isAbsent(t.desc) || !isHalf(t.desc.dtype))
    return t;
  Tensor w(DType::F32, t.desc.shape);
  for (int64_t i = 0; i < t.numel(); ++i)
    w.set(i, t.at(i));
  return w;
}

void compare(const Tensor &gpu, const Tensor &ref, const Tolerance &tol,
             const std::string &what) {
  ASSERT_EQ(gpu.numel(), ref.numel()) << what;
  const bool fl = isFloat(gpu.desc.dtype);
  int64_t bad = 0;
  std::ostringstream first;
  for (int64_t i = 0; i < gpu.numel(); ++i) {
    const double g = gpu.at(i), r = ref.at(i);
    bool ok;
    if (!fl)
      ok = g == r;
    else if (std::isnan(r) || std::isnan(g))
      ok = std::isnan(r) && std::isnan(g);
    else if (std::isinf(r) || std::isinf(g))
      ok = g == r;
    else
      ok = std::fabs(g - r) <= tol.atol + tol.rtol * std::fabs(r);
    if (!ok && bad++ < 5)
      first << "\n  [" << i << "] gpu " << g << " cpu " << r;
  }
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << gpu.numel()
                    << " elements differ (rtol " << tol.rtol << ", atol "
                    << tol.atol << ")" << first.str();
}

} // namespace

Status cpuReference(const ParityCase &c, std::vector<Tensor> &outs) {
  auto run = [&](bool wide) {
    std::vector<Tensor> ins;
    for (const Tensor &t : c.inputs)
      ins.push_back(wide ? widen(t) : t);
    std::vector<const Tensor *> ptrs;
    for (const Tensor &t : ins)
      ptrs.push_back(isAbsent(t.desc) ? nullptr : &t);
    outs.clear();
    for (const TensorDesc &d : c.outputs) {
      Tensor o;
      o.desc = d;
      if (wide && !isAbsent(d) && isHalf(d.dtype))
        o.desc.dtype = DType::F32;
      outs.push_back(std::move(o));
    }
    return cpu::test::runKernel(c.kernel, ptrs, outs, c.attrs);
  };
  Status st = run(false);
  if (!st.isOk())
    st = run(true);
  return st;
}

void runParity(const ParityCase &c) {
  std::vector<Tensor> eager, graph, ref;
  ASSERT_NO_FATAL_FAILURE(runOnGpu(c, eager, graph));
  Status st = cpuReference(c, ref);
  ASSERT_TRUE(st.isOk()) << "CPU reference: " << st.message();
  ASSERT_EQ(ref.size(), eager.size());
  for (size_t i = 0; i < eager.size(); ++i) {
    if (isAbsent(c.outputs[i]))
      continue;
    Tolerance tol = defaultTolerance(c.outputs[i].dtype);
    tol.rtol *= c.tolScale;
    tol.atol *= c.tolScale;
    compare(eager[i], ref[i], tol, "output " + std::to_string(i));
    if (i < graph.size()) {
      EXPECT_EQ(graph[i].bytes, eager[i].bytes)
          << "output " << i << ": the graph replay differs from the eager run";
    }
  }
}

const std::vector<ParityCase> &allParityCases() {
  static const std::vector<ParityCase> cases = [] {
    std::vector<ParityCase> v;
    for (void (*add)(std::vector<ParityCase> &) :
         {addElementwiseCases, addMovementCases, addNormCases, addMatMulCases})
      add(v);
    return v;
  }();
  return cases;
}

namespace {

/// The attributes a plan carries for `kernels` where a model leaves them
/// off: the onnx dialect's defaults, which the compiler writes into every
/// plan (the kernels take none of their own). A name ending in '*' stands
/// for every kernel whose name begins with the rest.
struct PlanDefaults {
  std::vector<std::string> kernels;
  std::vector<std::pair<const char *, int64_t>> ints = {};
  std::vector<std::pair<const char *, double>> floats = {};
  std::vector<std::pair<const char *, const char *>> strings = {};
};

const PlanDefaults kPlanDefaults[] = {
    {{"Reduce*"}, {{"keepdims", 1}, {"noop_with_empty_axes", 0}}},
    {{"ArgMax", "ArgMin"},
     {{"axis", 0}, {"keepdims", 1}, {"select_last_index", 0}}},
    {{"TopK"}, {{"axis", -1}, {"largest", 1}, {"sorted", 1}}},
    {{"Mod"}, {{"fmod", 0}}},
    {{"CumSum"}, {{"exclusive", 0}, {"reverse", 0}}},
    {{"Softmax", "LogSoftmax"}, {{"axis", -1}}},
    {{"LayerNormalization", "RMSNormalization", "AddNormalization"},
     {{"axis", -1}},
     {{"epsilon", 1e-5}}},
    {{"AddNormalization"}, {{"rms", 0}}},
    {{"Gather", "GatherElements"}, {{"axis", 0}}},
    {{"GatherND"}, {{"batch_dims", 0}}},
    {{"ScatterND", "ScatterElements"}, {}, {}, {{"reduction", "none"}}},
    {{"ScatterElements"}, {{"axis", 0}}},
    {{"Trilu"}, {{"upper", 1}, {"k", 0}}},
    // An integer value (ConstantOfShape of an integer type) is kept.
    {{"Pad", "ConstantOfShape"}, {}, {{"value", 0}}},
    {{"Gemm"}, {{"transA", 0}, {"transB", 0}}, {{"alpha", 1.0}, {"beta", 1.0}}},
    {{"Attention"}, {{"is_causal", 0}}},
    {{"MatMulBias"}, {}, {}, {{"activation", "none"}}},
};

bool matches(const std::string &pattern, const std::string &kernel) {
  if (!pattern.empty() && pattern.back() == '*')
    return kernel.rfind(pattern.substr(0, pattern.size() - 1), 0) == 0;
  return kernel == pattern;
}

/// `a` with the plan's defaults for `kernel` added where it lacks them.
Attrs withPlanDefaults(const std::string &kernel, Attrs a) {
  for (const PlanDefaults &d : kPlanDefaults) {
    if (std::none_of(d.kernels.begin(), d.kernels.end(),
                     [&](const std::string &k) { return matches(k, kernel); }))
      continue;
    for (const auto &[k, v] : d.ints)
      if (!a.has(k))
        a.setInt(k, v);
    for (const auto &[k, v] : d.floats)
      if (!a.has(k))
        a.setFloat(k, v);
    for (const auto &[k, v] : d.strings)
      if (!a.has(k))
        a.setString(k, v);
  }
  return a;
}

} // namespace

void addCase(std::vector<ParityCase> &v, std::string name, std::string kernel,
             std::vector<Tensor> in, std::vector<TensorDesc> out, Attrs a,
             double tolScale, int misalign) {
  ParityCase c;
  a = withPlanDefaults(kernel, std::move(a));
  c.name = kernel + "_" + name;
  c.kernel = std::move(kernel);
  c.inputs = std::move(in);
  c.outputs = std::move(out);
  c.attrs = std::move(a);
  c.tolScale = tolScale;
  c.misalign = misalign;
  v.push_back(std::move(c));
}

Tensor rnd(DType t, Shape s, double lo, double hi) {
  static uint64_t seed = 0x5eed;
  return cpu::test::randomTensor(t, std::move(s), ++seed * 7919, lo, hi);
}

Tensor absent() {
  Tensor t;
  t.desc = cpu::absentOperand();
  return t;
}

Attrs ints(const std::string &k, std::vector<int64_t> v, Attrs a) {
  a.setInts(k, std::move(v));
  return a;
}

Attrs intAttr(const std::string &k, int64_t v, Attrs a) {
  a.setInt(k, v);
  return a;
}

} // namespace tpc::cuda::test
