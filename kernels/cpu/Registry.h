//===- Registry.h - The table of CPU kernels --------------------*- C++ -*-===//
//
// One table maps a kernel name (an ONNX op name, or a fused kernel's name) to
// the function that validates its operand descriptions and attributes once and
// binds them into a ready-to-run kernel. The runtime prepares every step of a
// plan when an engine loads, and the compiler prepares and runs the same
// kernels to fold constant subgraphs, so both agree on semantics.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_CPU_REGISTRY_H
#define TPC_KERNELS_CPU_REGISTRY_H

#include "kernels/Checks.h"
#include "kernels/Types.h"

#include <memory>
#include <string_view>
#include <vector>

namespace tpc::cpu {

struct ExecContext {
  /// Threads a kernel may use (GEMMs, large elementwise loops).
  int numThreads = 1;
};

/// A kernel bound to fixed operand shapes and attributes.
class PreparedKernel {
public:
  virtual ~PreparedKernel() = default;
  /// `inputs[i]` / `outputs[i]` point at densely packed, row-major data of the
  /// descriptions given to prepare(). Optional ONNX inputs that were absent
  /// are nullptr. Outputs never alias inputs unless the kernel's definition
  /// says it allows it.
  virtual void run(const void *const *inputs, void *const *outputs,
                   const ExecContext &ctx) = 0;
  /// What the last run() found wrong with its input data: an index outside
  /// its axis (Gather, GatherElements, GatherND, ScatterND). Callers check
  /// it after each run(); the outputs of a failed run are not defined.
  virtual Status runStatus() const { return Status::ok(); }
  /// Called once before the first run() for each input whose data stays
  /// the same for the kernel's whole life (an engine's weight), with that
  /// data, which outlives the kernel: a kernel may repack it for speed.
  /// Kernels that are never bound (constant folding) run all the same.
  virtual void bindConstantInput(size_t index, const void *data) {
    (void)index;
    (void)data;
  }
  /// Instead of bindConstantInput: takes input `index`'s repacked form
  /// from `bound`, the same step prepared for other shapes (run-time
  /// dimensions) whose same constant input was bound. False when this
  /// kernel keeps nothing of it or cannot share it; the caller then binds.
  virtual bool shareConstantInput(size_t index, const PreparedKernel &bound) {
    (void)index;
    (void)bound;
    return false;
  }
};

struct KernelDef {
  const char *name;
  const char *summary;
  /// Validates descriptions and attributes; on success sets `out`.
  /// An absent optional input has a TensorDesc with dtype F32 and shape {-1}.
  Status (*prepare)(const std::vector<TensorDesc> &inputs,
                    const std::vector<TensorDesc> &outputs, const Attrs &attrs,
                    std::unique_ptr<PreparedKernel> &out);
  /// Output element i is computed from element i of each input of the
  /// output's type and shape, read before it is written: the output may
  /// share its buffer with such an input (the memory planner runs these
  /// kernels in place).
  bool elementwise = false;
};

/// Every CPU kernel, sorted by name.
const std::vector<KernelDef> &allKernels();
/// nullptr when there is no kernel of that name.
const KernelDef *lookupKernel(std::string_view name);

using tpc::absentOperand;
using tpc::isAbsent;

} // namespace tpc::cpu

#endif // TPC_KERNELS_CPU_REGISTRY_H
