//===- GraphIo.h - An engine's graph inputs and outputs, bound -*- C++ -*-===//
//
// What every runner keeps of the graph's inputs and outputs: for each input
// (engine.json order) its plan buffer and the caller's data, checked
// against the engine's description; for each output its plan buffer and a
// host copy of its last value. The CPU Session and the CUDA engine move the
// bytes their own way; the checks and the lookups are these.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_ENGINE_GRAPHIO_H
#define TPC_RUNTIME_ENGINE_GRAPHIO_H

#include "runtime/engine/RankEngine.h"

#include <string>
#include <vector>

namespace tpc::runtime {

class GraphIo {
public:
  struct Input {
    std::string name;
    uint32_t buffer;
    TensorDesc desc;
    /// The caller's data, valid until the next run returns.
    const void *data = nullptr;
    /// Run-time dimensions: the plan buffer's shape expressions (empty for
    /// a static input) and its shape at the symbols' maxima. `desc` is
    /// then the shape last set.
    std::vector<SymExpr> dims;
    Shape maxShape;
  };
  struct Output {
    std::string name;
    uint32_t buffer;
    TensorDesc desc;
    /// The value of the last run (desc.bytes() bytes).
    std::vector<uint8_t> data;
    /// Where the value is instead, when a backend leaves it in memory of its
    /// own that holds it until the next run (the CPU arena, the CUDA
    /// engine's pinned staging); `data` is then empty.
    const void *external = nullptr;
    /// As Input::dims: `desc` is the shape of the last run.
    std::vector<SymExpr> dims;
  };

  /// Binds the manifest's inputs and outputs to `engine`'s plan buffers;
  /// `who` ("rank 0: ") starts every message.
  Status bind(const RankEngine &engine, std::string who);

  /// Sets input `name`, which must have the engine's dtype and shape.
  Status setInput(const std::string &name, const TensorDesc &desc,
                  const void *data);
  /// Fails, naming them, when inputs were never set.
  Status checkInputsSet() const;
  /// The values of `plan`'s run-time dimensions that the inputs set, all
  /// checked: an input dimension that is a symbol gives its value, every
  /// other dimension of a symbolic input must then agree.
  Status resolveSymbols(const RankPlan &plan, SymbolValues &values) const;
  /// Gives the symbolic outputs their shapes at `values`.
  void shapeOutputs(const RankPlan &plan, const SymbolValues &values);

  /// A run starts: until it succeeds (markRun), output() hands out no data,
  /// since a run overwrites the memory outputs are handed out from.
  void beginRun() { hasRun_ = false; }
  /// After a successful run, output() hands out the outputs' data.
  void markRun() { hasRun_ = true; }
  /// Output `name` of the last run; nullptr data before one. False if there
  /// is no such output.
  bool output(const std::string &name, TensorDesc &desc,
              const void *&data) const;
  std::vector<std::string> outputNames() const;

  std::vector<Input> &inputs() { return inputs_; }
  const std::vector<Input> &inputs() const { return inputs_; }
  std::vector<Output> &outputs() { return outputs_; }

private:
  Status checkSymbolicShape(const Input &in, const Shape &shape) const;

  std::string who_;
  std::vector<PlanSymbol> symbols_;
  std::vector<Input> inputs_;
  std::vector<Output> outputs_;
  bool hasRun_ = false;
};

} // namespace tpc::runtime

#endif // TPC_RUNTIME_ENGINE_GRAPHIO_H
