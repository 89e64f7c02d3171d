//===- Passes.td - Compiler passes -------------------------*- tablegen -*-===//
#ifndef TPC_COMPILER_TRANSFORMS_PASSES
#define TPC_COMPILER_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def LowerToPlanPass : Pass<"tpc-lower-to-plan", "mlir::ModuleOp"> {
  let summary = "Lower onnx-dialect functions to plan-dialect kernel lists";
  let description = [{
    Every onnx op becomes a `plan.kernel` naming the kernel of the same name
    with the op's attributes; weights become `plan.weight` (keeping any
    per-rank slicing the partitioner chose), constants `plan.constant`, and
    tp collectives the collective kernels. Ops from other dialects are an
    error naming the op.
  }];
  let dependentDialects = ["tpc::plan::PlanDialect"];
}

def PlanMemoryPass : Pass<"tpc-plan-memory", "mlir::ModuleOp"> {
  let summary = "Assign arena offsets by liveness";
  let description = [{
    Gives every arena value (function arguments and kernel results) a byte
    offset in one arena so that values whose lifetimes overlap never share
    bytes. Reshapes of arena values become views of their operand. Values
    are placed largest first at the lowest offset that fits (greedy by
    size). Sets `plan.arena_bytes`, `plan.unplanned_bytes` (the sum of all
    arena values) and `plan.lower_bound_bytes` (the most bytes live at once)
    on each function.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", "64",
           "Byte alignment of every arena offset">,
  ];
}

#endif
