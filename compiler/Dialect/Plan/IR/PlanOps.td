//===- PlanOps.td - The plan dialect -----------------------*- tablegen -*-===//
#ifndef TPC_DIALECT_PLAN_OPS
#define TPC_DIALECT_PLAN_OPS

include "mlir/IR/OpBase.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

def Plan_Dialect : Dialect {
  let name = "plan";
  let cppNamespace = "::tpc::plan";
  let summary = "Per-rank execution plans";
  let description = [{
    A rank's program as the runtime executes it: a straight-line list of
    kernel invocations over tensors. Weights and constants are read-only
    buffers of the rank's weight file; every other value lives in one arena
    at a byte offset that `--tpc-plan-memory` assigns by liveness. The
    engine writer (compiler/Engine/PlanSerializer) serialises a planned
    function into the runtime's plan format.
  }];
}

class Plan_Op<string mnemonic, list<Trait> traits = []>
    : Op<Plan_Dialect, mnemonic, traits>;

def Plan_KernelOp : Plan_Op<"kernel", [Pure]> {
  let summary = "Runs one kernel";
  let description = [{
    `kernel` names the kernel (an ONNX op name, a fused kernel, or a
    collective: AllReduce, AllGather, ReduceScatter); `attrs` are its
    attributes; `node` is the ONNX node it comes from. After memory planning
    `offsets` holds the arena byte offset of each result.

    ```mlir
    %y = plan.kernel "Softmax"(%x) {attrs = {axis = -1 : i64}, node = "/attn/Softmax"} : (tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
    ```
  }];
  let arguments = (ins StrAttr:$kernel, Variadic<AnyRankedTensor>:$operands,
                       DictionaryAttr:$attrs, StrAttr:$node,
                       OptionalAttr<DenseI64ArrayAttr>:$offsets);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = "$kernel `(` $operands `)` attr-dict `:` functional-type($operands, $results)";
  let hasVerifier = 1;
}

def Plan_WeightOp : Plan_Op<"weight", [Pure]> {
  let summary = "A read-only tensor of the rank's weight file";
  let description = [{
    `name` is the tensor's name in the rank's safetensors file. Its bytes
    come from `length` bytes at `offset` of `file` (relative to the model's
    folder, as in onnx.Weight), sliced along `axis` when `ranges` is set:
    the rank's tensor is the concatenation along `axis` of the source ranges
    [start, start + size) listed as [start0, size0, start1, size1, ...]
    (a fused QKV weight gives each rank its heads of q, k and v).
    `source_type`, when set, is the element type stored in the file (f32)
    and the result's type is f16 or bf16: the engine writer converts the
    bytes as it streams them (round to nearest even, saturating).
    `quantize`, when set, makes the tensor one part (codes, scales or zero
    points) of the block quantization of the float source's slice, which
    the writer computes as it streams it (onnx.Weight's `onnx.quantize`,
    --tpc-quantize-weights); `source_shape` is then the float source's
    [K, N] or [N, K] shape.

    ```mlir
    %w = plan.weight "h.0.mlp.c_fc.weight" {file = "model.onnx", offset = 4096 : i64, length = 65536 : i64, source_shape = array<i64: 64, 256>, axis = 1 : i64, ranges = array<i64: 0, 128>} : tensor<64x128xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, StrAttr:$file, I64Attr:$offset,
                       I64Attr:$length, DenseI64ArrayAttr:$source_shape,
                       OptionalAttr<I64Attr>:$axis,
                       OptionalAttr<DenseI64ArrayAttr>:$ranges,
                       OptionalAttr<TypeAttr>:$source_type,
                       OptionalAttr<DictionaryAttr>:$quantize);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "$name attr-dict `:` type($output)";
  let hasVerifier = 1;
}

def Plan_ConstantOp : Plan_Op<"constant",
    [Pure, AllTypesMatch<["value", "output"]>]> {
  let summary = "A constant stored in the rank's weight file";
  let description = [{
    ```mlir
    %c = plan.constant "const.0" dense<1.000000e+00> : tensor<f32>
    ```
  }];
  let arguments = (ins StrAttr:$name, ElementsAttr:$value);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "$name attr-dict $value";
}

def Plan_StateOp : Plan_Op<"state"> {
  let summary = "A buffer that persists across forwards (a KV cache)";
  let description = [{
    Allocated and zeroed when the engine loads, outside the arena; kernels
    that write state (CacheWrite) take it as input 0 and write it in place.

    ```mlir
    %s = plan.state "past_key_values.0.key" : tensor<1x2x32x16xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "$name attr-dict `:` type($output)";
}

#endif // TPC_DIALECT_PLAN_OPS
