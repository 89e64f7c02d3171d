//===- ONNXBase.td - The onnx dialect ----------------------*- tablegen -*-===//
#ifndef TPC_DIALECT_ONNX_BASE
#define TPC_DIALECT_ONNX_BASE

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def ONNX_Dialect : Dialect {
  let name = "onnx";
  let cppNamespace = "::tpc::onnx";
  let summary = "ONNX operators with static shapes";
  let description = [{
    One op per supported ONNX operator, as the importer produces them. Every
    value has a static shape. ONNX inputs that must be constants for static
    shapes (Reshape's shape, Slice's starts/ends/axes/steps, Split's sizes,
    the Reduce ops' axes, ...) become attributes, named as ONNX names the
    input. Squeeze, Unsqueeze and Flatten import as `onnx.Reshape`; Identity
    and CastLike import as their operand and `onnx.Cast`.

    Weights are `onnx.Weight` ops that refer to bytes in the model file or its
    external data files; they are never copied into the IR.
  }];
  let hasConstantMaterializer = 1;
  let extraClassDeclaration = [{
    void registerOps();
  }];
}

/// Any tensor type the importer produces.
def ONNX_Tensor : RankedTensorOf<[F32, F16, BF16, F64, I64, I32, I16, I8,
                                   UI64, UI32, UI16, UI8, I1, F8E4M3FN,
                                   F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, I<4>, UI<4>,
                                   I<2>, UI<2>]>;
def ONNX_FloatTensor : RankedTensorOf<[F32, F16, BF16, F64]>;

/// The folder of an onnx op: the CPU reference kernel on constant operands.
defvar ONNX_FoldDefinition = [{
    ::mlir::OpFoldResult $cppClass::fold(FoldAdaptor adaptor) {
      return ::tpc::onnx::foldOp(getOperation(), adaptor.getOperands());
    }
  }];

/// Base of every onnx op. Ops are pure and fold through the CPU reference
/// kernels when all their operands are constants (see ONNXFold.cpp).
class ONNX_Op<string mnemonic, list<Trait> traits = []>
    : Op<ONNX_Dialect, mnemonic, !listconcat(traits, [Pure])> {
  let hasFolder = 1;
  let extraClassDefinition = ONNX_FoldDefinition;
}

/// Ops whose result types follow from operands and attributes.
class ONNX_InferOp<string mnemonic, list<Trait> traits = []>
    : ONNX_Op<mnemonic, !listconcat(traits, [InferTypeOpAdaptor])>;

/// Ops computing each output element from the input element at the same
/// position carry Elementwise: the sharding rules and the importer's
/// selection tracking take them from the trait, not from a list of names.
class ONNX_UnaryOp<string mnemonic, string doc,
                   Type type = ONNX_Tensor, list<Trait> traits = []>
    : ONNX_Op<mnemonic, !listconcat(traits, [SameOperandsAndResultType,
                                             Elementwise])> {
  let summary = "ONNX " # mnemonic;
  let description = doc # [{

    Example:
    ```mlir
    %y = onnx.}] # mnemonic # [{ %x : tensor<2x8xf32>
    ```
  }];
  let arguments = (ins type:$X);
  let results = (outs type:$Y);
  let assemblyFormat = "$X attr-dict `:` type($Y)";
}

/// Ops whose operands broadcast as in numpy (inferBroadcast in ONNXOps.cpp):
/// the result has the broadcast shape, and i1 elements where `boolResult`,
/// else the first operand's; with `sameElementType` the operands' element
/// types must agree.
class ONNX_BroadcastOp<string mnemonic, bit boolResult = 0,
                       bit sameElementType = 1>
    : ONNX_InferOp<mnemonic> {
  let extraClassDefinition = ONNX_FoldDefinition # [{
    ::mlir::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *ctx, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &results) {
      return ::tpc::onnx::inferBroadcast(loc, adaptor.getOperands(), }] #
      !if(boolResult, "::mlir::IntegerType::get(ctx, 1)", "nullptr") #
      ", results, " # !if(sameElementType, "true", "false") # [{);
    }
  }];
}

/// Elementwise binary ops with numpy-style multidirectional broadcasting.
class ONNX_BinaryOp<string mnemonic, string doc, bit boolResult = 0,
                    bit sameElementType = 1>
    : ONNX_BroadcastOp<mnemonic, boolResult, sameElementType> {
  let summary = "ONNX " # mnemonic # " (broadcasting)";
  let description = doc # [{

    Operands broadcast as in numpy; the result has the broadcast shape.

    Example:
    ```mlir
    %c = onnx.}] # mnemonic # [{ %a, %b : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
    ```
  }];
  let arguments = (ins ONNX_Tensor:$A, ONNX_Tensor:$B);
  let results = (outs ONNX_Tensor:$C);
  let assemblyFormat =
      "$A `,` $B attr-dict `:` type($A) `,` type($B) `->` type($C)";
}

#endif // TPC_DIALECT_ONNX_BASE
