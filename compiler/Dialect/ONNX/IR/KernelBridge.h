//===- KernelBridge.h - onnx ops as kernel invocations ----------*- C++ -*-===//
//
// An onnx op names the kernel of the same name; its attributes become kernel
// attributes and its operand types tensor descriptions. Constant folding and
// the lowering to plans both go through these functions, so the compiler and
// the runtime see one meaning for each op.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_DIALECT_ONNX_IR_KERNELBRIDGE_H
#define TPC_DIALECT_ONNX_IR_KERNELBRIDGE_H

#include "kernels/Types.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"

#include <optional>
#include <vector>

namespace tpc::onnx {

std::optional<DType> dtypeOf(mlir::Type elementType);
std::optional<TensorDesc> descOf(mlir::Type tensorType);
/// The op's attributes as kernel attributes (ints, floats, strings; one-element
/// dense attributes become scalars).
Attrs kernelAttrs(mlir::Operation *op);
Attrs kernelAttrs(llvm::ArrayRef<mlir::NamedAttribute> attrs);
/// The kernel name of an op: its name without the dialect prefix.
llvm::StringRef kernelName(mlir::Operation *op);
/// Whether a plan step may name `name`: a kernel of the CPU table (which
/// every backend's table mirrors) or a collective.
bool kernelExists(llvm::StringRef name);
/// Whether the CPU kernel `name` may write its output over an input of the
/// output's type (KernelDef::elementwise); false for unknown kernels.
bool kernelRunsInPlace(llvm::StringRef name);

/// Dense bytes of an elements attribute (splats expanded; i1 as one byte per
/// element). Empty optional for attributes whose data cannot be read.
std::optional<std::vector<uint8_t>> elementsBytes(mlir::ElementsAttr attr);
/// The inverse: an attribute of `type` from dense bytes.
mlir::DenseElementsAttr elementsFromBytes(mlir::RankedTensorType type,
                                          const std::vector<uint8_t> &bytes);

} // namespace tpc::onnx

#endif
