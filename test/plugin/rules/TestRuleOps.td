//===- TestRuleOps.td - A plugin dialect with its own sharding rule -*- tablegen -*-===//
//
// Two ops of a dialect that a plugin brings: `tpctest.scale` states its
// sharding rule through ShardingRuleOpInterface, `tpctest.opaque` states
// none, so tpc's sharding refuses it wherever a distributed value reaches it.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_TEST_RULE_OPS
#define TPC_TEST_RULE_OPS

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "passes/ShardingRuleInterface.td"

def TestRule_Dialect : Dialect {
  let name = "tpctest";
  let cppNamespace = "::tpctest";
  let summary = "Ops of a plugin, for the sharding rule tests";
}

def TestRule_ScaleOp : Op<TestRule_Dialect, "scale",
    [Pure, SameOperandsAndResultType,
     DeclareOpInterfaceMethods<ShardingRuleOpInterface>]> {
  let summary = "x * factor: linear and pointwise, so any sharding passes";
  let arguments = (ins AnyRankedTensor:$input, F32Attr:$factor);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($output)";
}

def TestRule_OpaqueOp : Op<TestRule_Dialect, "opaque",
    [Pure, SameOperandsAndResultType]> {
  let summary = "An op without a sharding rule";
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($output)";
}

#endif
