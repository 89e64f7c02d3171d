// RUN: not tpc-opt %s --tpc-lower-to-plan 2>&1 | FileCheck %s

// A plan step names its kernel by the op's name; an op that no kernel
// table has (here a sharding marker that partitioning should have removed)
// fails at lowering, naming the op and the kernel, rather than when an
// engine loads.
// CHECK: error: 'tp.ToPartial' op lowers to kernel 'ToPartial', which no kernel table has
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %p = tp.ToPartial %x : tensor<4xf32>
  return %p : tensor<4xf32>
}
