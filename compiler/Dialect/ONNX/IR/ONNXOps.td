//===- ONNXOps.td - onnx dialect operations ----------------*- tablegen -*-===//
#ifndef TPC_DIALECT_ONNX_OPS
#define TPC_DIALECT_ONNX_OPS

include "compiler/Dialect/ONNX/IR/ONNXBase.td"
include "mlir/IR/BuiltinAttributes.td"

//===----------------------------------------------------------------------===//
// Constants and weights
//===----------------------------------------------------------------------===//

def ONNX_ConstantOp : Op<ONNX_Dialect, "Constant",
    [Pure, ConstantLike, AllTypesMatch<["value", "output"]>]> {
  let summary = "A constant tensor held in the IR";
  let description = [{
    Small constants: shape plumbing, scalars, masks. Large tensors from the
    model are `onnx.Weight` instead.

    ```mlir
    %c = onnx.Constant dense<[1, 16, 4, 16]> : tensor<4xi64>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs ONNX_Tensor:$output);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

def ONNX_WeightOp : Op<ONNX_Dialect, "Weight", [Pure]> {
  let summary = "A weight tensor whose bytes stay in a file";
  let description = [{
    Refers to `length` bytes at `offset` in `file`, a path relative to the
    folder named by the module's `onnx.source_dir` attribute (the model's
    folder). The bytes are little-endian and row-major, as ONNX stores
    `raw_data` and external data. `name` is the ONNX initializer name.
    An `onnx.source_type` attribute, when present, is the element type of
    the stored bytes where it differs from the result's (set by
    `--tpc-convert-float-type`; the engine writer converts).

    ```mlir
    %w = onnx.Weight "h.0.mlp.c_fc.weight" {file = "model.onnx", offset = 4096 : i64, length = 65536 : i64} : tensor<64x256xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, StrAttr:$file, I64Attr:$offset,
                       I64Attr:$length);
  let results = (outs ONNX_Tensor:$output);
  let assemblyFormat = "$name attr-dict `:` type($output)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise unary
//===----------------------------------------------------------------------===//

def ONNX_SqrtOp : ONNX_UnaryOp<"Sqrt", "Square root.", ONNX_FloatTensor>;
def ONNX_ReciprocalOp : ONNX_UnaryOp<"Reciprocal", "1 / x.", ONNX_FloatTensor>;
def ONNX_NegOp : ONNX_UnaryOp<"Neg", "Negation.">;
def ONNX_AbsOp : ONNX_UnaryOp<"Abs", "Absolute value.">;
def ONNX_ExpOp : ONNX_UnaryOp<"Exp", "e^x.", ONNX_FloatTensor>;
def ONNX_LogOp : ONNX_UnaryOp<"Log", "Natural logarithm.", ONNX_FloatTensor>;
def ONNX_ErfOp : ONNX_UnaryOp<"Erf", "Error function.", ONNX_FloatTensor>;
def ONNX_TanhOp : ONNX_UnaryOp<"Tanh", "Hyperbolic tangent.", ONNX_FloatTensor>;
def ONNX_SigmoidOp : ONNX_UnaryOp<"Sigmoid", "1 / (1 + e^-x).", ONNX_FloatTensor>;
def ONNX_ReluOp : ONNX_UnaryOp<"Relu", "max(x, 0).">;
def ONNX_CosOp : ONNX_UnaryOp<"Cos", "Cosine.", ONNX_FloatTensor>;
def ONNX_SinOp : ONNX_UnaryOp<"Sin", "Sine.", ONNX_FloatTensor>;
def ONNX_TanOp : ONNX_UnaryOp<"Tan", "Tangent.", ONNX_FloatTensor>;
def ONNX_AsinOp : ONNX_UnaryOp<"Asin", "Arcsine.", ONNX_FloatTensor>;
def ONNX_AcosOp : ONNX_UnaryOp<"Acos", "Arccosine.", ONNX_FloatTensor>;
def ONNX_AtanOp : ONNX_UnaryOp<"Atan", "Arctangent.", ONNX_FloatTensor>;
def ONNX_SinhOp : ONNX_UnaryOp<"Sinh", "Hyperbolic sine.", ONNX_FloatTensor>;
def ONNX_CoshOp : ONNX_UnaryOp<"Cosh", "Hyperbolic cosine.", ONNX_FloatTensor>;
def ONNX_AsinhOp : ONNX_UnaryOp<"Asinh", "Inverse hyperbolic sine.",
                                ONNX_FloatTensor>;
def ONNX_AcoshOp : ONNX_UnaryOp<"Acosh", "Inverse hyperbolic cosine.",
                                ONNX_FloatTensor>;
def ONNX_AtanhOp : ONNX_UnaryOp<"Atanh", "Inverse hyperbolic tangent.",
                                ONNX_FloatTensor>;
def ONNX_RoundOp : ONNX_UnaryOp<"Round", "Round to nearest, ties to even.",
                                ONNX_FloatTensor>;
def ONNX_FloorOp : ONNX_UnaryOp<"Floor", "Round down.", ONNX_FloatTensor>;
def ONNX_CeilOp : ONNX_UnaryOp<"Ceil", "Round up.", ONNX_FloatTensor>;
def ONNX_SignOp : ONNX_UnaryOp<"Sign", "-1, 0 or 1.">;
def ONNX_SoftplusOp : ONNX_UnaryOp<"Softplus", "log(1 + e^x).", ONNX_FloatTensor>;
def ONNX_NotOp : ONNX_UnaryOp<"Not", "Logical not.", RankedTensorOf<[I1]>>;

def ONNX_GeluOp : ONNX_Op<"Gelu", [SameOperandsAndResultType, Elementwise]> {
  let summary = "ONNX Gelu (opset 20), also the target of GELU fusion";
  let description = [{
    `approximate` is "none" (erf form) or "tanh".

    ```mlir
    %y = onnx.Gelu %x {approximate = "tanh"} : tensor<1x16x256xf32>
    ```
  }];
  let arguments = (ins ONNX_FloatTensor:$X,
                       DefaultValuedStrAttr<StrAttr, "none">:$approximate);
  let results = (outs ONNX_FloatTensor:$Y);
  let assemblyFormat = "$X attr-dict `:` type($Y)";
  let hasVerifier = 1;
}

class ONNX_AlphaUnaryOp<string mnemonic, string doc, string alpha>
    : ONNX_Op<mnemonic, [SameOperandsAndResultType, Elementwise]> {
  let summary = "ONNX " # mnemonic;
  let description = doc;
  let arguments = (ins ONNX_FloatTensor:$X,
                       DefaultValuedAttr<F32Attr, alpha>:$alpha);
  let results = (outs ONNX_FloatTensor:$Y);
  let assemblyFormat = "$X attr-dict `:` type($Y)";
}
def ONNX_LeakyReluOp : ONNX_AlphaUnaryOp<"LeakyRelu", "x < 0 ? alpha * x : x.", "0.01">;
def ONNX_EluOp : ONNX_AlphaUnaryOp<"Elu", "x < 0 ? alpha * (e^x - 1) : x.", "1.0">;

def ONNX_HardSigmoidOp : ONNX_Op<"HardSigmoid", [SameOperandsAndResultType,
                                                  Elementwise]> {
  let summary = "ONNX HardSigmoid: max(0, min(1, alpha * x + beta))";
  let arguments = (ins ONNX_FloatTensor:$X,
                       DefaultValuedAttr<F32Attr, "0.2">:$alpha,
                       DefaultValuedAttr<F32Attr, "0.5">:$beta);
  let results = (outs ONNX_FloatTensor:$Y);
  let assemblyFormat = "$X attr-dict `:` type($Y)";
}

class ONNX_SoftmaxLikeOp<string mnemonic>
    : ONNX_Op<mnemonic, [SameOperandsAndResultType]> {
  let summary = "ONNX " # mnemonic # " along one axis (opset 13 semantics)";
  let description = [{
    ```mlir
    %p = onnx.}] # mnemonic # [{ %s {axis = -1 : i64} : tensor<1x4x16x16xf32>
    ```
  }];
  let arguments = (ins ONNX_FloatTensor:$input,
                       DefaultValuedAttr<I64Attr, "-1">:$axis);
  let results = (outs ONNX_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($output)";
  let hasVerifier = 1;
}
def ONNX_SoftmaxOp : ONNX_SoftmaxLikeOp<"Softmax">;
def ONNX_LogSoftmaxOp : ONNX_SoftmaxLikeOp<"LogSoftmax">;

def ONNX_IsNaNOp : ONNX_InferOp<"IsNaN", [Elementwise]> {
  let summary = "ONNX IsNaN";
  let arguments = (ins ONNX_FloatTensor:$X);
  let results = (outs RankedTensorOf<[I1]>:$Y);
  let assemblyFormat = "$X attr-dict `:` type($X) `->` type($Y)";
}

//===----------------------------------------------------------------------===//
// Elementwise binary and variadic
//===----------------------------------------------------------------------===//

/// Comparisons: broadcasting binary ops with a bool result.
class ONNX_CompareOp<string mnemonic, string doc>
    : ONNX_BinaryOp<mnemonic, doc, /*boolResult=*/1>;

def ONNX_AddOp : ONNX_BinaryOp<"Add", "A + B.">;
def ONNX_SubOp : ONNX_BinaryOp<"Sub", "A - B.">;
def ONNX_MulOp : ONNX_BinaryOp<"Mul", "A * B.">;
def ONNX_DivOp : ONNX_BinaryOp<"Div", "A / B; integer division truncates.">;
def ONNX_PowOp : ONNX_BinaryOp<"Pow", "A ^ B; the result has A's type.",
                               /*boolResult=*/0, /*sameElementType=*/0>;
def ONNX_PReluOp : ONNX_BinaryOp<"PRelu", "A < 0 ? B * A : A.">;
def ONNX_EqualOp : ONNX_CompareOp<"Equal", "A == B, a bool tensor.">;
def ONNX_LessOp : ONNX_CompareOp<"Less", "A < B, a bool tensor.">;
def ONNX_GreaterOp : ONNX_CompareOp<"Greater", "A > B, a bool tensor.">;
def ONNX_LessOrEqualOp : ONNX_CompareOp<"LessOrEqual", "A <= B, a bool tensor.">;
def ONNX_GreaterOrEqualOp : ONNX_CompareOp<"GreaterOrEqual", "A >= B, a bool tensor.">;
def ONNX_AndOp : ONNX_BinaryOp<"And", "Logical and of bool tensors.">;
def ONNX_OrOp : ONNX_BinaryOp<"Or", "Logical or of bool tensors.">;
def ONNX_XorOp : ONNX_BinaryOp<"Xor", "Logical xor of bool tensors.">;

def ONNX_BitwiseAndOp : ONNX_BinaryOp<"BitwiseAnd", "A & B of integers.">;
def ONNX_BitwiseOrOp : ONNX_BinaryOp<"BitwiseOr", "A | B of integers.">;
def ONNX_BitwiseXorOp : ONNX_BinaryOp<"BitwiseXor", "A ^ B of integers.">;

def ONNX_BitShiftOp : ONNX_BroadcastOp<"BitShift"> {
  let summary = "ONNX BitShift (broadcasting)";
  let description = [{
    A shifted by B bits, `direction` "LEFT" or "RIGHT" (arithmetic for
    signed types); a negative B or one of the type's width or more gives
    what the sign alone gives.
  }];
  let arguments = (ins ONNX_Tensor:$A, ONNX_Tensor:$B, StrAttr:$direction);
  let results = (outs ONNX_Tensor:$C);
  let assemblyFormat =
      "$A `,` $B attr-dict `:` type($A) `,` type($B) `->` type($C)";
  let hasVerifier = 1;
}

def ONNX_ModOp : ONNX_BroadcastOp<"Mod"> {
  let summary = "ONNX Mod (broadcasting)";
  let description = [{
    Remainder; `fmod` = 1 takes the sign of the dividend (C fmod), 0 the
    sign of the divisor (Python %).
  }];
  let arguments = (ins ONNX_Tensor:$A, ONNX_Tensor:$B,
                       DefaultValuedAttr<I64Attr, "0">:$fmod);
  let results = (outs ONNX_Tensor:$C);
  let assemblyFormat =
      "$A `,` $B attr-dict `:` type($A) `,` type($B) `->` type($C)";
}

class ONNX_VariadicOp<string mnemonic, string doc>
    : ONNX_BroadcastOp<mnemonic> {
  let summary = "ONNX " # mnemonic # " of one or more tensors (broadcasting)";
  let description = doc;
  let arguments = (ins Variadic<ONNX_Tensor>:$data_0);
  let results = (outs ONNX_Tensor:$result);
  let assemblyFormat = "$data_0 attr-dict `:` type($data_0) `->` type($result)";
}
def ONNX_MaxOp : ONNX_VariadicOp<"Max", "Elementwise maximum.">;
def ONNX_MinOp : ONNX_VariadicOp<"Min", "Elementwise minimum.">;
def ONNX_SumOp : ONNX_VariadicOp<"Sum", "Elementwise sum.">;
def ONNX_MeanOp : ONNX_VariadicOp<"Mean", "Elementwise mean.">;

def ONNX_WhereOp : ONNX_InferOp<"Where"> {
  let summary = "ONNX Where: condition ? X : Y (broadcasting)";
  let description = [{
    ```mlir
    %r = onnx.Where %m, %s, %ninf : tensor<1x1x16x16xi1>, tensor<1x4x16x16xf32>, tensor<f32> -> tensor<1x4x16x16xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[I1]>:$condition, ONNX_Tensor:$X,
                       ONNX_Tensor:$Y);
  let results = (outs ONNX_Tensor:$output);
  let assemblyFormat = "$condition `,` $X `,` $Y attr-dict `:` type($condition)"
                       " `,` type($X) `,` type($Y) `->` type($output)";
}

def ONNX_BitCastOp : ONNX_Op<"BitCast"> {
  let summary = "ONNX BitCast: the bits of each element as another type";
  let description = [{
    `to` is the ONNX element type number of the result, of the input's bit
    width; each element keeps its bytes.

    ```mlir
    %y = onnx.BitCast %x {to = 6 : i64} : tensor<4xf32> -> tensor<4xi32>
    ```
  }];
  let arguments = (ins ONNX_Tensor:$input, I64Attr:$to);
  let results = (outs ONNX_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
}

def ONNX_CastOp : ONNX_Op<"Cast"> {
  let summary = "ONNX Cast (CastLike imports as Cast)";
  let description = [{
    `to` is the ONNX element type number of the result. `saturate` (float8
    targets only; absent means 1) clamps out-of-range values to the largest
    finite float8 instead of giving infinity or NaN.

    ```mlir
    %y = onnx.Cast %x {to = 1 : i64} : tensor<1x16xi64> -> tensor<1x16xf32>
    ```
  }];
  let arguments = (ins ONNX_Tensor:$input, I64Attr:$to,
                   OptionalAttr<I64Attr>:$saturate);
  let results = (outs ONNX_Tensor:$output);
  // Casts made by passes convert between computing types: no saturate.
  let builders = [OpBuilder<(ins "::mlir::Type":$output, "::mlir::Value":$input,
                                 "::mlir::IntegerAttr":$to), [{
    build($_builder, $_state, output, input, to, ::mlir::IntegerAttr());
  }]>];
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Matrix products and normalisation
//===----------------------------------------------------------------------===//

def ONNX_MatMulOp : ONNX_InferOp<"MatMul"> {
  let summary = "ONNX MatMul (numpy matmul semantics)";
  let description = [{
    ```mlir
    %y = onnx.MatMul %x, %w : tensor<1x16x64xf32>, tensor<64x256xf32> -> tensor<1x16x256xf32>
    ```
  }];
  let arguments = (ins ONNX_Tensor:$A, ONNX_Tensor:$B);
  let results = (outs ONNX_Tensor:$Y);
  let assemblyFormat =
      "$A `,` $B attr-dict `:` type($A) `,` type($B) `->` type($Y)";
}

def ONNX_GemmOp : ONNX_InferOp<"Gemm"> {
  let summary = "ONNX Gemm: alpha * A' B' + beta * C";
  let description = [{
    A' is A or its transpose (`transA`), likewise B'. C is optional and
    broadcasts to [M, N].

    ```mlir
    %y = onnx.Gemm %x, %w, %b : tensor<16x64xf32>, tensor<64x192xf32>, tensor<192xf32> -> tensor<16x192xf32>
    ```
  }];
  let arguments = (ins ONNX_Tensor:$A, ONNX_Tensor:$B,
                       Optional<ONNX_Tensor>:$C,
                       DefaultValuedAttr<F32Attr, "1.0">:$alpha,
                       DefaultValuedAttr<F32Attr, "1.0">:$beta,
                       DefaultValuedAttr<I64Attr, "0">:$transA,
                       DefaultValuedAttr<I64Attr, "0">:$transB);
  let results = (outs ONNX_Tensor:$Y);
  let assemblyFormat = "$A `,` $B (`,` $C^)? attr-dict `:` type($A) `,` "
                       "type($B) (`,` type($C)^)? `->` type($Y)";
}

def ONNX_LayerNormalizationOp : ONNX_InferOp<"LayerNormalization"> {
  let summary = "ONNX LayerNormalization over the axes from `axis` on";
  let description = [{
    Only the first output (Y) is imported; models that use the mean or
    inverse standard deviation outputs are refused by the importer.

    ```mlir
    %y = onnx.LayerNormalization %x, %g, %b {axis = -1 : i64, epsilon = 1.0e-05 : f32} : tensor<1x16x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<1x16x64xf32>
    ```
  }];
  let arguments = (ins ONNX_FloatTensor:$X, ONNX_FloatTensor:$Scale,
                       Optional<ONNX_FloatTensor>:$B,
                       DefaultValuedAttr<I64Attr, "-1">:$axis,
                       DefaultValuedAttr<F32Attr, "1e-05">:$epsilon);
  let results = (outs ONNX_FloatTensor:$Y);
  let assemblyFormat = "$X `,` $Scale (`,` $B^)? attr-dict `:` type($X) `,` "
                       "type($Scale) (`,` type($B)^)? `->` type($Y)";
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def ONNX_ReshapeOp : ONNX_Op<"Reshape"> {
  let summary = "Reshape to the static result type";
  let description = [{
    ONNX Reshape, Squeeze, Unsqueeze and Flatten with their targets resolved:
    the result type is the new shape; element counts must agree.

    ```mlir
    %y = onnx.Reshape %x : tensor<1x16x64xf32> -> tensor<1x16x4x16xf32>
    ```
  }];
  let arguments = (ins ONNX_Tensor:$data);
  let results = (outs ONNX_Tensor:$reshaped);
  let assemblyFormat = "$data attr-dict `:` type($data) `->` type($reshaped)";
  let hasVerifier = 1;
}

def ONNX_ExpandOp : ONNX_Op<"Expand"> {
  let summary = "Broadcast to the static result type";
  let description = [{
    ```mlir
    %y = onnx.Expand %x : tensor<1x2x1x16x16xf32> -> tensor<1x2x4x16x16xf32>
    ```
  }];
  let arguments = (ins ONNX_Tensor:$input);
  let results = (outs ONNX_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
}

def ONNX_TransposeOp : ONNX_InferOp<"Transpose"> {
  let summary = "ONNX Transpose";
  let description = [{
    ```mlir
    %y = onnx.Transpose %x {perm = array<i64: 0, 2, 1, 3>} : tensor<1x16x4x16xf32> -> tensor<1x4x16x16xf32>
    ```
  }];
  let arguments = (ins ONNX_Tensor:$data, DenseI64ArrayAttr:$perm);
  let results = (outs ONNX_Tensor:$transposed);
  let assemblyFormat = "$data attr-dict `:` type($data) `->` type($transposed)";
}

def ONNX_ConcatOp : ONNX_InferOp<"Concat"> {
  let summary = "ONNX Concat";
  let arguments = (ins Variadic<ONNX_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs ONNX_Tensor:$concat_result);
  let assemblyFormat =
      "$inputs attr-dict `:` type($inputs) `->` type($concat_result)";
}

def ONNX_SplitOp : ONNX_InferOp<"Split"> {
  let summary = "ONNX Split with static sizes";
  let description = [{
    `split` holds the size of each output along `axis` (from the `split`
    input, the attribute of older opsets, or `num_outputs`).

    ```mlir
    %q, %k, %v = onnx.Split %qkv {axis = 2 : i64, split = array<i64: 64, 64, 64>} : tensor<1x16x192xf32> -> tensor<1x16x64xf32>, tensor<1x16x64xf32>, tensor<1x16x64xf32>
    ```
  }];
  let arguments = (ins ONNX_Tensor:$input, I64Attr:$axis,
                       DenseI64ArrayAttr:$split);
  let results = (outs Variadic<ONNX_Tensor>:$outputs);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($outputs)";
  let hasFolder = 1;
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::fold(FoldAdaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::OpFoldResult> &results) {
      return ::tpc::onnx::foldMultiResultOp(getOperation(),
                                            adaptor.getOperands(), results);
    }
  }];
}

def ONNX_SliceOp : ONNX_InferOp<"Slice"> {
  let summary = "ONNX Slice with constant starts, ends, axes and steps";
  let description = [{
    ```mlir
    %y = onnx.Slice %x {axes = array<i64: 2>, ends = array<i64: 64>, starts = array<i64: 32>, steps = array<i64: 1>} : tensor<1x4x16x64xf32> -> tensor<1x4x16x32xf32>
    ```
  }];
  let arguments = (ins ONNX_Tensor:$data, DenseI64ArrayAttr:$starts,
                       DenseI64ArrayAttr:$ends, DenseI64ArrayAttr:$axes,
                       DenseI64ArrayAttr:$steps);
  let results = (outs ONNX_Tensor:$output);
  let assemblyFormat = "$data attr-dict `:` type($data) `->` type($output)";
}

def ONNX_GatherOp : ONNX_InferOp<"Gather"> {
  let summary = "ONNX Gather";
  let description = [{
    ```mlir
    %e = onnx.Gather %wte, %ids {axis = 0 : i64} : tensor<512x64xf32>, tensor<1x16xi64> -> tensor<1x16x64xf32>
    ```
  }];
  let arguments = (ins ONNX_Tensor:$data, RankedTensorOf<[I64, I32]>:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs ONNX_Tensor:$output);
  let assemblyFormat = "$data `,` $indices attr-dict `:` type($data) `,` "
                       "type($indices) `->` type($output)";
}

def ONNX_GatherElementsOp : ONNX_InferOp<"GatherElements"> {
  let summary = "ONNX GatherElements";
  let arguments = (ins ONNX_Tensor:$data, RankedTensorOf<[I64, I32]>:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs ONNX_Tensor:$output);
  let assemblyFormat = "$data `,` $indices attr-dict `:` type($data) `,` "
                       "type($indices) `->` type($output)";
}

def ONNX_GatherNDOp : ONNX_InferOp<"GatherND"> {
  let summary = "ONNX GatherND";
  let description = [{
    The result shape is indices.shape[:-1] + data.shape[batch_dims + k:],
    where k = indices.shape[-1].
  }];
  let arguments = (ins ONNX_Tensor:$data, RankedTensorOf<[I64]>:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$batch_dims);
  let results = (outs ONNX_Tensor:$output);
  let assemblyFormat = "$data `,` $indices attr-dict `:` type($data) `,` "
                       "type($indices) `->` type($output)";
}

def ONNX_ScatterNDOp
    : ONNX_Op<"ScatterND", [AllTypesMatch<["data", "output"]>]> {
  let summary = "ONNX ScatterND";
  let description = [{
    A copy of `data` with the slices of `updates` written at the positions
    that the index tuples address: with k = indices.shape[-1] (k <= rank),
    updates.shape = indices.shape[:-1] + data.shape[k:]. Negative indices
    count from the end of their axis. `reduction` ("none", "add", "mul",
    "max" or "min") combines each slice with what is already there; with
    "none" a duplicate tuple's last slice wins, as in onnxruntime's CPU
    provider. Reductions need arithmetic data (not bool or 8-bit).

    Not `SameOperandsAndResultType`: the sharding analysis would take it for
    elementwise, which a scatter is not, so ScatterND runs on whole tensors.

    ```mlir
    %m = onnx.ScatterND %d, %i, %u : tensor<1x1x8x8xf32>, tensor<1x1x8x4x4xi64>, tensor<1x1x8x4xf32>
    %s = onnx.ScatterND %d, %i, %u {reduction = "add"} : tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x3xf32>
    ```
  }];
  let arguments = (ins ONNX_Tensor:$data, RankedTensorOf<[I64]>:$indices,
                       ONNX_Tensor:$updates,
                       DefaultValuedStrAttr<StrAttr, "none">:$reduction);
  let results = (outs ONNX_Tensor:$output);
  let assemblyFormat = "$data `,` $indices `,` $updates attr-dict `:` "
                       "type($data) `,` type($indices) `,` type($updates)";
  let hasVerifier = 1;
}

def ONNX_ScatterElementsOp
    : ONNX_Op<"ScatterElements", [AllTypesMatch<["data", "output"]>]> {
  let summary = "ONNX ScatterElements (and the deprecated Scatter)";
  let description = [{
    A copy of `data` in which, for every element of `indices` in row-major
    order, the element at its position with dim `axis` replaced by its
    index is combined with the update at its position. `indices` (int64 or
    int32) has the rank of `data` and no dim other than `axis` larger than
    data's; `updates` has the shape of `indices`. Negative indices count
    from the end of the axis. `reduction` ("none", "add", "mul", "max" or
    "min") combines each update with what is already there; with "none" a
    duplicate index's last update wins, as in onnxruntime's CPU provider.
    Reductions need arithmetic data (not bool or 8-bit).

    Not `SameOperandsAndResultType`, so ScatterElements runs on whole
    tensors, as ScatterND does.

    ```mlir
    %s = onnx.ScatterElements %d, %i, %u {axis = 1 : i64} : tensor<3x5xf32>, tensor<3x2xi64>, tensor<3x2xf32>
    %a = onnx.ScatterElements %d, %i, %u {axis = 0 : i64, reduction = "add"} : tensor<4xf32>, tensor<6xi32>, tensor<6xf32>
    ```
  }];
  let arguments = (ins ONNX_Tensor:$data, RankedTensorOf<[I64, I32]>:$indices,
                       ONNX_Tensor:$updates,
                       DefaultValuedAttr<I64Attr, "0">:$axis,
                       DefaultValuedStrAttr<StrAttr, "none">:$reduction);
  let results = (outs ONNX_Tensor:$output);
  let assemblyFormat = "$data `,` $indices `,` $updates attr-dict `:` "
                       "type($data) `,` type($indices) `,` type($updates)";
  let hasVerifier = 1;
}

def ONNX_TileOp : ONNX_InferOp<"Tile"> {
  let summary = "ONNX Tile with constant repeats";
  let arguments = (ins ONNX_Tensor:$input, DenseI64ArrayAttr:$repeats);
  let results = (outs ONNX_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
}

def ONNX_PadOp : ONNX_InferOp<"Pad"> {
  let summary = "ONNX Pad (constant mode) with constant pads";
  let description = [{
    `pads` is [x1_begin, x2_begin, ..., x1_end, x2_end, ...] for every axis.
  }];
  let arguments = (ins ONNX_Tensor:$data, DenseI64ArrayAttr:$pads,
                       DefaultValuedAttr<F32Attr, "0.0">:$value);
  let results = (outs ONNX_Tensor:$output);
  let assemblyFormat = "$data attr-dict `:` type($data) `->` type($output)";
}

def ONNX_TriluOp : ONNX_Op<"Trilu", [SameOperandsAndResultType]> {
  let summary = "ONNX Trilu with a constant k";
  let arguments = (ins ONNX_Tensor:$input,
                       DefaultValuedAttr<I64Attr, "1">:$upper,
                       DefaultValuedAttr<I64Attr, "0">:$k);
  let results = (outs ONNX_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($output)";
}

//===----------------------------------------------------------------------===//
// Shape plumbing (folds away once shapes are static)
//===----------------------------------------------------------------------===//

def ONNX_ShapeOp : ONNX_InferOp<"Shape"> {
  let summary = "ONNX Shape; always folds to a constant";
  let arguments = (ins ONNX_Tensor:$data, OptionalAttr<I64Attr>:$start,
                       OptionalAttr<I64Attr>:$end);
  let results = (outs RankedTensorOf<[I64]>:$shape);
  let assemblyFormat = "$data attr-dict `:` type($data) `->` type($shape)";
}

def ONNX_SizeOp : ONNX_InferOp<"Size"> {
  let summary = "ONNX Size; always folds to a constant";
  let arguments = (ins ONNX_Tensor:$data);
  let results = (outs RankedTensorOf<[I64]>:$size);
  let assemblyFormat = "$data attr-dict `:` type($data) `->` type($size)";
}

def ONNX_RangeOp : ONNX_Op<"Range",
    [AllTypesMatch<["start", "limit", "delta"]>]> {
  let summary = "ONNX Range";
  let description = [{
    The result length comes from constant operands; the importer refuses a
    Range whose length is not known at compile time.
  }];
  let arguments = (ins ONNX_Tensor:$start, ONNX_Tensor:$limit,
                       ONNX_Tensor:$delta);
  let results = (outs ONNX_Tensor:$output);
  let assemblyFormat = "$start `,` $limit `,` $delta attr-dict `:` "
                       "type($start) `->` type($output)";
}

def ONNX_ConstantOfShapeOp : ONNX_Op<"ConstantOfShape"> {
  let summary = "ONNX ConstantOfShape with the shape in the result type";
  let arguments = (ins AnyAttr:$value);
  let results = (outs ONNX_Tensor:$output);
  let assemblyFormat = "attr-dict `:` type($output)";
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

class ONNX_ReduceOp<string mnemonic, string doc> : ONNX_InferOp<mnemonic> {
  let summary = "ONNX " # mnemonic;
  let description = doc # [{

    `axes` are constant (from the attribute or the input of newer opsets);
    empty axes reduce everything unless `noop_with_empty_axes` is set.

    ```mlir
    %m = onnx.}] # mnemonic # [{ %x {axes = array<i64: -1>, keepdims = 1 : i64} : tensor<1x16x64xf32> -> tensor<1x16x1xf32>
    ```
  }];
  let arguments = (ins ONNX_Tensor:$data, DenseI64ArrayAttr:$axes,
                       DefaultValuedAttr<I64Attr, "1">:$keepdims,
                       DefaultValuedAttr<I64Attr, "0">:$noop_with_empty_axes);
  let results = (outs ONNX_Tensor:$reduced);
  let assemblyFormat = "$data attr-dict `:` type($data) `->` type($reduced)";
}
def ONNX_ReduceMeanOp : ONNX_ReduceOp<"ReduceMean", "Mean over axes.">;
def ONNX_ReduceSumOp : ONNX_ReduceOp<"ReduceSum", "Sum over axes.">;
def ONNX_ReduceMaxOp : ONNX_ReduceOp<"ReduceMax", "Maximum over axes.">;
def ONNX_ReduceMinOp : ONNX_ReduceOp<"ReduceMin", "Minimum over axes.">;
def ONNX_ReduceProdOp : ONNX_ReduceOp<"ReduceProd", "Product over axes.">;
def ONNX_ReduceL2Op : ONNX_ReduceOp<"ReduceL2", "Euclidean norm over axes.">;
def ONNX_ReduceSumSquareOp
    : ONNX_ReduceOp<"ReduceSumSquare", "Sum of squares over axes.">;

class ONNX_ArgOp<string mnemonic> : ONNX_InferOp<mnemonic> {
  let summary = "ONNX " # mnemonic # ": int64 indices along one axis";
  let description = [{
    The first index of the extreme value along `axis` (the last one with
    `select_last_index` = 1); the axis is kept as size 1 with `keepdims`.
  }];
  let arguments = (ins ONNX_Tensor:$data, DefaultValuedAttr<I64Attr, "0">:$axis,
                       DefaultValuedAttr<I64Attr, "1">:$keepdims,
                       DefaultValuedAttr<I64Attr, "0">:$select_last_index);
  let results = (outs RankedTensorOf<[I64]>:$reduced);
  let assemblyFormat = "$data attr-dict `:` type($data) `->` type($reduced)";
}
def ONNX_ArgMaxOp : ONNX_ArgOp<"ArgMax">;
def ONNX_ArgMinOp : ONNX_ArgOp<"ArgMin">;

def ONNX_TopKOp : ONNX_InferOp<"TopK"> {
  let summary = "ONNX TopK with a constant k";
  let description = [{
    The `k` largest elements along `axis` (the smallest with `largest` =
    0) and their indices, as two results whose dim `axis` is `k` (the K
    input of opset 10 on, which must be a compile-time constant, or the
    attribute of opset 1). The order is largest first (smallest first),
    equal values by lower index, NaN above every number, as onnxruntime
    orders them; the results are sorted whatever `sorted` says (ONNX leaves
    the order free with `sorted` = 0).

    ```mlir
    %v, %i = onnx.TopK %x {axis = -1 : i64, k = 4 : i64} : tensor<2x50xf32> -> tensor<2x4xf32>, tensor<2x4xi64>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32, F16, BF16, F64, I64, I32, I16, I8, UI64, UI32, UI16, UI8]>:$X,
                       I64Attr:$k, DefaultValuedAttr<I64Attr, "-1">:$axis,
                       DefaultValuedAttr<I64Attr, "1">:$largest,
                       DefaultValuedAttr<I64Attr, "1">:$sorted);
  let results = (outs RankedTensorOf<[F32, F16, BF16, F64, I64, I32, I16, I8, UI64, UI32, UI16, UI8]>:$Values,
                      RankedTensorOf<[I64]>:$Indices);
  let assemblyFormat =
      "$X attr-dict `:` type($X) `->` type($Values) `,` type($Indices)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::fold(FoldAdaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::OpFoldResult> &results) {
      return ::tpc::onnx::foldMultiResultOp(getOperation(),
                                            adaptor.getOperands(), results);
    }
  }];
}

def ONNX_CumSumOp : ONNX_Op<"CumSum", [AllTypesMatch<["input", "output"]>]> {
  let summary = "ONNX CumSum along a constant axis";
  let description = [{
    Running sums along `axis` (the ONNX `axis` input, which must be a
    compile-time constant). With `exclusive` = 1 an element's own value is
    left out of its sum (the first sum is 0); with `reverse` = 1 the sums
    run from the end of the axis. Integer sums wrap.

    The op is deliberately not `SameOperandsAndResultType`: the sharding
    analysis treats ops with that trait as elementwise, which a sum along
    an axis is not, so CumSum runs on whole tensors.

    ```mlir
    %p = onnx.CumSum %m {axis = 1 : i64} : tensor<1x16xi64>
    %r = onnx.CumSum %x {axis = -1 : i64, exclusive = 1 : i64, reverse = 1 : i64} : tensor<2x8xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32, F16, BF16, F64, I64, I32]>:$input,
                       I64Attr:$axis,
                       DefaultValuedAttr<I64Attr, "0">:$exclusive,
                       DefaultValuedAttr<I64Attr, "0">:$reverse);
  let results = (outs RankedTensorOf<[F32, F16, BF16, F64, I64, I32]>:$output);
  let assemblyFormat = "$input attr-dict `:` type($output)";
  let hasVerifier = 1;
}

include "compiler/Dialect/ONNX/IR/FusedOps.td"

#endif // TPC_DIALECT_ONNX_OPS
