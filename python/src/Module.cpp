//===- Module.cpp - The _tpc Python extension ------------------------------===//
//
// Engines in process for Python: load an engine folder, run it on NumPy
// arrays, read its inputs, outputs and inspection. The pure-Python package
// (python/tpc/__init__.py) wraps this module; compiling goes through the
// tpc driver there. Errors raise tpc.Error (a RuntimeError) with tpc's own
// message; the GIL is released while the ranks run.
//
//===----------------------------------------------------------------------===//
#include "runtime/backend/Backend.h"
#include "runtime/engine/CpuRunner.h"
#include "runtime/engine/Generate.h"
#include "runtime/engine/Inspect.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <nanobind/stl/tuple.h>

#include <cstring>
#include <map>
#include <memory>

namespace nb = nanobind;
using namespace tpc;
using namespace tpc::runtime;

namespace {

/// tpc.Error and its subclasses by status code: each also derives from the
/// built-in exception a Python caller would catch for that kind of failure.
/// Held for the life of the process (the module is never unloaded), so raw
/// references: nothing to release after the interpreter has gone.
PyObject *errorType = nullptr;
std::map<StatusCode, PyObject *> errorTypes;

[[noreturn]] void raise(const Status &st) {
  auto it = errorTypes.find(st.code());
  PyObject *type = it != errorTypes.end() ? it->second : errorType;
  nb::object exc = nb::steal(PyObject_CallOneArg(
      type, nb::str(st.message().c_str()).ptr()));
  if (!exc.is_valid())
    throw nb::python_error();
  nb::setattr(exc, "code", nb::str(statusCodeName(st.code())));
  PyErr_SetObject(type, exc.ptr());
  throw nb::python_error();
}

void check(const Status &st) {
  if (!st)
    raise(st);
}

/// The NumPy dtype name of a tpc dtype; bf16 arrays travel as uint16 bits,
/// float8 and 4- and 2-bit integers as uint8 bits.
const char *numpyName(DType t) {
  switch (t) {
  case DType::F32: return "float32";
  case DType::F64: return "float64";
  case DType::F16: return "float16";
  case DType::BF16: return "uint16";
  case DType::I64: return "int64";
  case DType::I32: return "int32";
  case DType::I8: return "int8";
  case DType::U8: return "uint8";
  case DType::I16: return "int16";
  case DType::U16: return "uint16";
  case DType::U32: return "uint32";
  case DType::U64: return "uint64";
  case DType::Bool: return "bool";
  default: // the storage types: bit patterns, one element per byte
    return "uint8";
  }
  return "?";
}

nb::dlpack::dtype dlpackType(DType t) {
  switch (t) {
  case DType::F32: return nb::dtype<float>();
  case DType::F64: return nb::dtype<double>();
  case DType::F16: return {uint8_t(nb::dlpack::dtype_code::Float), 16, 1};
  case DType::BF16: return nb::dtype<uint16_t>();
  case DType::I64: return nb::dtype<int64_t>();
  case DType::I32: return nb::dtype<int32_t>();
  case DType::I8: return nb::dtype<int8_t>();
  case DType::U8: return nb::dtype<uint8_t>();
  case DType::I16: return nb::dtype<int16_t>();
  case DType::U16: return nb::dtype<uint16_t>();
  case DType::U32: return nb::dtype<uint32_t>();
  case DType::U64: return nb::dtype<uint64_t>();
  case DType::Bool: return nb::dtype<bool>();
  default: break; // the storage types: uint8 bits
  }
  return nb::dtype<uint8_t>();
}

/// (name, dtype, shape); a run-time dimension is its symbol's name, as
/// onnxruntime reports a named dynamic axis.
nb::list specList(const std::vector<TensorSpec> &specs) {
  nb::list out;
  for (const TensorSpec &s : specs) {
    nb::list shape;
    for (size_t i = 0; i < s.desc.shape.size(); ++i) {
      const std::string &d = i < s.dims.size() ? s.dims[i] : std::string();
      bool isSize = d.empty() || d == std::to_string(s.desc.shape[i]);
      if (isSize)
        shape.append(s.desc.shape[i]);
      else
        shape.append(d);
    }
    out.append(
        nb::make_tuple(s.name, numpyName(s.desc.dtype), nb::tuple(shape)));
  }
  return out;
}

/// All ranks of one engine, on the CPU (in-process communicator) or on GPUs.
class PyEngine {
public:
  PyEngine(const std::string &dir, const std::string &backend, int threads,
           bool emulateRanks) {
    Backend b;
    check(parseBackend(backend, b));
    check(EngineManifest::load(dir, manifest_));
    if (b == Backend::Cpu) {
      if (emulateRanks)
        raise(Status::invalidArgument(
            "emulate_ranks applies to the cuda backend"));
      CpuRunOptions opts;
      opts.numThreads = std::max(1, threads);
      check(createCpuRunner(dir, opts, runner_));
    } else {
      GpuRunOptions opts;
      opts.emulateRanks = emulateRanks;
      check(createCudaRunner(dir, opts, runner_));
    }
  }
  PyEngine(const PyEngine &) = delete;
  PyEngine &operator=(const PyEngine &) = delete;

  int tp() const { return manifest_.tp; }
  nb::list inputs() const { return specList(manifest_.inputs); }
  nb::list outputs() const { return specList(manifest_.outputs); }
  /// The run-time dimensions: [(name, min, max)], empty for static shapes.
  nb::list symbols() const {
    nb::list out;
    for (const PlanSymbol &s : manifest_.symbols)
      out.append(nb::make_tuple(s.name, s.min, s.max));
    return out;
  }

  nb::dict run(nb::dict feeds) {
    // Arrays are read in place when they are C-contiguous and of the
    // engine's dtype; otherwise the caller gets an error naming the input
    // (the Python wrapper converts with numpy.ascontiguousarray first).
    std::vector<nb::ndarray<nb::c_contig, nb::device::cpu>> held;
    for (const TensorSpec &spec : manifest_.inputs) {
      if (!feeds.contains(spec.name.c_str()))
        raise(Status::invalidArgument(
            "input '" + spec.name + "' is missing (the engine takes " +
            std::to_string(manifest_.inputs.size()) + " inputs)"));
      nb::ndarray<nb::c_contig, nb::device::cpu> a;
      if (!nb::try_cast(feeds[spec.name.c_str()], a))
        raise(Status::invalidArgument("input '" + spec.name +
                                      "' is not a C-contiguous NumPy array"));
      if (a.dtype() != dlpackType(spec.desc.dtype))
        raise(Status::invalidArgument("input '" + spec.name + "' must be " +
                                      numpyName(spec.desc.dtype)));
      TensorDesc desc{spec.desc.dtype, {}};
      for (size_t i = 0; i < a.ndim(); ++i)
        desc.shape.push_back(int64_t(a.shape(i)));
      // With run-time dimensions the runner checks the shape against the
      // ranges (and the other inputs of each symbol).
      if (spec.dims.empty() && desc.shape != spec.desc.shape)
        raise(Status::invalidArgument(
            "input '" + spec.name + "' has shape " + shapeToString(desc.shape) +
            ", the engine takes " + shapeToString(spec.desc.shape)));
      check(runner_->setInput(spec.name, desc, a.data()));
      held.push_back(a);
    }
    for (auto item : feeds) {
      std::string name = nb::cast<std::string>(item.first);
      if (!manifest_.findInput(name))
        raise(Status::notFound("'" + name + "' is not an input of the engine"));
    }
    Status st;
    {
      nb::gil_scoped_release release;
      st = runner_->run();
    }
    check(st);
    nb::dict out;
    for (const TensorSpec &spec : manifest_.outputs) {
      TensorDesc desc;
      const void *data = nullptr;
      bool found = runner_->output(spec.name, desc, data);
      if (!found || !data)
        raise(Status::internal("output '" + spec.name + "' was not produced"));
      auto *copy = new uint8_t[desc.bytes() ? desc.bytes() : 1];
      std::memcpy(copy, data, desc.bytes());
      nb::capsule owner(copy, [](void *p) noexcept {
        delete[] static_cast<uint8_t *>(p);
      });
      std::vector<size_t> shape(desc.shape.begin(), desc.shape.end());
      out[spec.name.c_str()] =
          nb::ndarray<nb::numpy>(copy, shape.size(), shape.data(), owner,
                                 nullptr, dlpackType(desc.dtype))
              .cast();
    }
    return out;
  }

  double lastRunMillis() const { return runner_->lastRunMillis(); }

  /// runtime::generate over every rank in process: (tokens, time to first
  /// token ms, per-step ms).
  std::tuple<std::vector<int64_t>, double, std::vector<double>>
  generate(const std::vector<int64_t> &prompt, int64_t maxNewTokens,
           double temperature, int64_t topK, uint64_t seed, int64_t endToken) {
    GenerateOptions o;
    o.maxNewTokens = maxNewTokens;
    o.temperature = temperature;
    o.topK = topK;
    o.seed = seed;
    o.endToken = endToken;
    check(checkGenerateRequest(manifest_.generation, prompt, o));
    GenerateResult result;
    Status st;
    {
      nb::gil_scoped_release release;
      st = runtime::generate(*runner_, nullptr, manifest_.generation, prompt, o,
                             result);
    }
    check(st);
    return {result.tokens, result.firstTokenMillis, result.stepMillis};
  }

private:
  EngineManifest manifest_;
  std::unique_ptr<EngineRunner> runner_;
};

std::string inspectJson(const std::string &dir) {
  EngineSummary summary;
  check(inspectEngine(dir, summary));
  return formatSummaryJson(summary);
}

} // namespace

NB_MODULE(_tpc, m) {
  m.doc() = "tpc engines in process (see the tpc package)";
  errorType = PyErr_NewException("tpc.Error", PyExc_RuntimeError, nullptr);
  // Every tpc.Error carries the status code's name in `code`.
  nb::setattr(nb::handle(errorType), "code", nb::str("UNKNOWN"));
  m.attr("Error") = nb::handle(errorType);
  struct Subclass {
    StatusCode code;
    const char *name;
    PyObject *builtin;
  };
  for (const Subclass &c :
       {Subclass{StatusCode::InvalidArgument, "InvalidArgumentError",
                 PyExc_ValueError},
        Subclass{StatusCode::NotFound, "NotFoundError", PyExc_LookupError},
        Subclass{StatusCode::OutOfRange, "OutOfRangeError", PyExc_IndexError},
        Subclass{StatusCode::DeadlineExceeded, "DeadlineExceededError",
                 PyExc_TimeoutError},
        Subclass{StatusCode::DataLoss, "DataLossError", nullptr},
        Subclass{StatusCode::FailedPrecondition, "FailedPreconditionError",
                 nullptr}}) {
    nb::object bases = c.builtin ? nb::make_tuple(nb::handle(errorType),
                                                  nb::handle(c.builtin))
                                 : nb::make_tuple(nb::handle(errorType));
    std::string qualified = std::string("tpc.") + c.name;
    PyObject *type =
        PyErr_NewException(qualified.c_str(), bases.ptr(), nullptr);
    m.attr(c.name) = nb::handle(type);
    errorTypes[c.code] = type;
  }
  nb::class_<PyEngine>(m, "Engine")
      .def(nb::init<const std::string &, const std::string &, int, bool>(),
           nb::arg("dir"), nb::arg("backend") = "cpu", nb::arg("threads") = 1,
           nb::arg("emulate_ranks") = false)
      .def_prop_ro("tp", &PyEngine::tp)
      .def_prop_ro("inputs", &PyEngine::inputs)
      .def_prop_ro("outputs", &PyEngine::outputs)
      .def_prop_ro("symbols", &PyEngine::symbols)
      .def("run", &PyEngine::run, nb::arg("feeds"))
      .def_prop_ro("last_run_ms", &PyEngine::lastRunMillis)
      .def("generate", &PyEngine::generate, nb::arg("prompt"),
           nb::arg("max_new_tokens"), nb::arg("temperature") = 0.0,
           nb::arg("top_k") = 0, nb::arg("seed") = 0,
           nb::arg("end_token") = -1);
  m.def("inspect_json", &inspectJson, nb::arg("dir"));
}
