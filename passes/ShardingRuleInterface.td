//===- ShardingRuleInterface.td - How shardings flow through an op -*- tablegen -*-===//
#ifndef TPC_PASSES_SHARDINGRULEINTERFACE
#define TPC_PASSES_SHARDINGRULEINTERFACE

include "mlir/IR/OpBase.td"

def ShardingRuleOpInterface : OpInterface<"ShardingRuleOpInterface"> {
  let cppNamespace = "::tpc";
  let description = [{
    The tensor-parallel sharding rule of an op: given the shardings of its
    operands (`analysis.of(v)`), the sharding of each result
    (`analysis.set`) and the sharding it needs of each operand where that
    differs (`analysis.require`; a partial operand needed whole is
    all-reduced, a split one all-gathered and the column MatMuls behind it
    replicated). tpc attaches a rule to every onnx op the importer emits
    (passes/ShardingRules.cpp); a dialect of a plugin attaches its own.
    The analysis refuses an op without a rule whose operands are not all
    replicated, naming the op, rather than gathering them silently.
  }];
  let methods = [
    InterfaceMethod<[{
        Applies the rule to the analysis' current state. failure() after an
        error emitted on the op (a split that cannot be made, for example).
      }],
      "::mlir::LogicalResult", "propagateSharding",
      (ins "::tpc::ShardingAnalysis &":$analysis)>,
  ];
}

#endif
