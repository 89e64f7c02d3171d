//===- TPOps.td - The tp dialect ---------------------------*- tablegen -*-===//
#ifndef TPC_DIALECT_TP_OPS
#define TPC_DIALECT_TP_OPS

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

def TP_Dialect : Dialect {
  let name = "tp";
  let cppNamespace = "::tpc::tp";
  let summary = "Tensor-parallel shardings and collectives";
  let description = [{
    The vocabulary of tensor parallelism over `size` ranks: how a tensor is
    distributed (`#tp.sharding`) and the collectives that change it. The
    sharding pass annotates a global program with shardings and inserts
    collectives; the partitioning pass turns it into one program per rank
    with local shapes.
  }];
  let useDefaultAttributePrinterParser = 1;
  // The tp.* attributes that passes leave on ops of other dialects (see
  // TPOps.h for their names and meaning) are checked where they appear.
  let hasOperationAttrVerify = 1;
}

def TP_ShardingAttr : AttrDef<TP_Dialect, "Sharding"> {
  let mnemonic = "sharding";
  let summary = "How a tensor is distributed over the ranks";
  let description = [{
    `kind` is one of:
    - `replicated`: every rank holds the whole tensor;
    - `split`: rank r holds a block of `sizes[r]` entries along `axis`; when
      `parts` has more than one entry, the axis is the concatenation of
      parts of those sizes and rank r holds its block of every part (a fused
      QKV projection split into q, k and v), and every rank holds the
      parts listed in `whole` entirely (kv heads fewer than ranks in a
      fused projection);
    - `partial`: every rank holds a full-shape addend; the tensor is their
      sum.

    ```mlir
    #tp.sharding<"split", 2, sizes = [32, 32], parts = [64]>
    #tp.sharding<"split", 2, sizes = [64, 64], parts = [64, 16, 16], whole = [1, 2]>
    #tp.sharding<"replicated", 0>
    ```
  }];
  let parameters = (ins StringRefParameter<>:$kind, "int64_t":$axis,
                        OptionalArrayRefParameter<"int64_t">:$sizes,
                        OptionalArrayRefParameter<"int64_t">:$parts,
                        OptionalArrayRefParameter<"int64_t">:$whole);
  let genVerifyDecl = 1;
  let assemblyFormat = "`<` $kind `,` $axis (`,` `sizes` `=` `[` $sizes^ `]`)?"
                       " (`,` `parts` `=` `[` $parts^ `]`)?"
                       " (`,` `whole` `=` `[` $whole^ `]`)? `>`";
}

def TP_Role : I32EnumAttr<"Role", "the tensor-parallel role of a weight MatMul", [
    I32EnumAttrCase<"Column", 0, "column">,
    I32EnumAttrCase<"Row", 1, "row">,
    I32EnumAttrCase<"Replicated", 2, "replicated">]> {
  let cppNamespace = "::tpc::tp";
  let genSpecializedAttr = 0;
}

def TP_RoleAttr : EnumAttr<TP_Dialect, TP_Role, "role"> {
  let summary = "How a weight MatMul is split over the ranks";
  let description = [{
    The `tp.role` the sharding pass leaves on every weight MatMul or Gemm:
    `column` (the weight's output columns split, the product split along
    its last axis), `row` (the weight's input rows split, the product a
    partial sum) or `replicated` (every rank computes the whole product; a
    `tp.reason` says by which policy).

    ```mlir
    %y = onnx.MatMul(%x, %w) {tp.role = #tp.role<column>} : ...
    ```
  }];
  let assemblyFormat = "`<` $value `>`";
}

class TP_Op<string mnemonic, list<Trait> traits = []>
    : Op<TP_Dialect, mnemonic, traits>;

def TP_AllReduceOp : TP_Op<"AllReduce", [Pure, SameOperandsAndResultType]> {
  let summary = "Sums a partial tensor over the ranks";
  let description = [{
    ```mlir
    %r = tp.AllReduce %p : tensor<1x16x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($output)";
}

def TP_AllGatherOp : TP_Op<"AllGather", [Pure]> {
  let summary = "Concatenates every rank's block along an axis";
  let description = [{
    `sizes[r]` is rank r's block size along `axis` (blocks may differ), and
    `parts` the part sizes when the axis concatenates several parts (see
    #tp.sharding). Types are global before partitioning and local after.

    ```mlir
    %g = tp.AllGather %s {axis = 2 : i64, sizes = array<i64: 86, 86>, parts = array<i64: 172>} : tensor<1x16x86xf32> -> tensor<1x16x172xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, I64Attr:$axis,
                       DenseI64ArrayAttr:$sizes, DenseI64ArrayAttr:$parts);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
}

def TP_ShardOp : TP_Op<"Shard", [Pure]> {
  let summary = "Takes this rank's block of a replicated tensor (no communication)";
  let description = [{
    The inverse of AllGather, computed locally: rank r keeps its block of
    `sizes[r]` entries along `axis` (of each part when `parts` is set).

    ```mlir
    %s = tp.Shard %k {axis = 1 : i64, sizes = array<i64: 4, 4>, parts = array<i64: 8>} : tensor<1x8x16x8xf32> -> tensor<1x4x16x8xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, I64Attr:$axis,
                       DenseI64ArrayAttr:$sizes, DenseI64ArrayAttr:$parts);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
}

def TP_ToPartialOp : TP_Op<"ToPartial", [Pure, SameOperandsAndResultType]> {
  let summary = "A replicated tensor as a partial sum: rank 0 holds it, the others zeros";
  let description = [{
    Lets a replicated value (a row-parallel bias, a residual) join a sum of
    partial values so that it is added exactly once and the sum is
    all-reduced once, where the program needs it whole (parallel residual
    blocks). Partitioning lowers it to its input on rank 0; on the other
    ranks an Add of it becomes its other operand, and any other use reads
    zeros.

    ```mlir
    %p = tp.ToPartial %bias : tensor<64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($output)";
}

#endif
