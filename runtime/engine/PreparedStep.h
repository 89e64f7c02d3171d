//===- PreparedStep.h - A plan step ready to run ----------------*- C++ -*-===//
//
// What a rank keeps for each step of its plan, on any backend: the kernel
// prepared for the step's shapes (none for a collective), the collective
// bound to its geometry, and the operand addresses in the backend's memory.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_ENGINE_PREPAREDSTEP_H
#define TPC_RUNTIME_ENGINE_PREPAREDSTEP_H

#include "runtime/engine/RankPlan.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace tpc::runtime {

template <class Kernel, class Collective> struct PreparedStep {
  std::unique_ptr<Kernel> kernel;
  Collective collective;
  /// Operand addresses; nullptr for an absent optional input.
  std::vector<const void *> inputs;
  std::vector<void *> outputs;

  /// Sets the operand addresses of plan step `step` from `buffers`, the
  /// address of every plan buffer by id.
  void bindOperands(const PlanStep &step,
                    const std::vector<uint8_t *> &buffers) {
    inputs.clear();
    outputs.clear();
    for (uint32_t id : step.inputs)
      inputs.push_back(id == kAbsentBuffer ? nullptr : buffers[id]);
    for (uint32_t id : step.outputs)
      outputs.push_back(buffers[id]);
  }
};

} // namespace tpc::runtime

#endif // TPC_RUNTIME_ENGINE_PREPAREDSTEP_H
