//===- NodeImporter.h - Importing one ONNX node -----------------*- C++ -*-===//
#ifndef TPC_COMPILER_IMPORTER_NODEIMPORTER_H
#define TPC_COMPILER_IMPORTER_NODEIMPORTER_H

#include "compiler/Dialect/ONNX/IR/ONNXOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "onnx/onnx_pb.h"

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace tpc {

/// The largest tensor (initializer or constant) the importer accepts: a
/// size above it is a broken file, not a model.
constexpr uint64_t kMaxTensorBytes = uint64_t(1) << 50;

template <typename T, typename = void>
struct HasProperties : std::false_type {};
template <typename T>
struct HasProperties<T, std::void_t<typename T::Properties>> : std::true_type {};
/// Whether ODS gave OpTy attribute defaults to fill in.
template <typename T, typename = void>
struct HasDefaultProperties : std::false_type {};
template <typename T>
struct HasDefaultProperties<
    T, std::void_t<decltype(T::populateDefaultProperties(
           std::declval<mlir::OperationName>(),
           std::declval<typename T::Properties &>()))>> : std::true_type {};

/// What a handler sees of the node it imports.
class NodeContext {
public:
  NodeContext(mlir::OpBuilder &b, mlir::Location loc,
              const ::onnx::NodeProto &node, int opset,
              llvm::SmallVector<mlir::Value> inputs)
      : b(b), loc(loc), node(node), opset(opset), inputs(std::move(inputs)) {}

  mlir::OpBuilder &b;
  mlir::Location loc;
  const ::onnx::NodeProto &node;
  int opset;
  /// The model is imported as one decode step (`--kv-cache`): a past input
  /// becomes a cache whose new entries are written at their positions, so
  /// attention masks address cache slots, not past ++ new.
  bool decodeStep = false;
  /// One per node input; null where the optional input is absent.
  llvm::SmallVector<mlir::Value> inputs;

  /// An error about this node: "node 'NAME' (OpType): ...".
  mlir::InFlightDiagnostic error();

  mlir::Value input(size_t i) const {
    return i < inputs.size() ? inputs[i] : mlir::Value();
  }
  mlir::RankedTensorType inputType(size_t i) const {
    return llvm::cast<mlir::RankedTensorType>(inputs[i].getType());
  }
  /// Whether the node names output `i` (an optional output it wants).
  bool wantsOutput(int i) const {
    return i < node.output_size() && !node.output(i).empty();
  }
  /// Fails with an error unless inputs [0, n) are present.
  mlir::LogicalResult requireInputs(size_t n);
  /// requireInputs(n), and an error when there are more than n, naming
  /// them (`names`, e.g. "data, indices, updates").
  mlir::LogicalResult requireExactInputs(size_t n, llvm::StringRef names);
  /// requireInputs(1), and an error unless input 0 holds floats.
  mlir::LogicalResult requireFloatInput();

  const ::onnx::AttributeProto *attr(llvm::StringRef name) const;
  int64_t attrInt(llvm::StringRef name, int64_t dflt) const;
  float attrFloat(llvm::StringRef name, float dflt) const;
  std::string attrString(llvm::StringRef name, llvm::StringRef dflt) const;
  std::optional<llvm::SmallVector<int64_t>> attrInts(llvm::StringRef name) const;

  /// The integer values of constant input `i`; an error naming the input
  /// (`what`) when it is not a compile-time constant.
  mlir::FailureOr<llvm::SmallVector<int64_t>> constInts(size_t i,
                                                        llvm::StringRef what);
  /// requireInputs(i + 1), then constInts(i, what): for a node whose last
  /// required input decides a shape.
  mlir::FailureOr<llvm::SmallVector<int64_t>>
  requireConstInts(size_t i, llvm::StringRef what);
  /// The inputs among the first `n` that the node gives, in order (the
  /// optional ones it leaves out skipped).
  llvm::SmallVector<mlir::Value> givenInputs(size_t n) const;

  /// The attributes of an onnx reduction op for this Reduce* node: its
  /// axes (the `axes` attribute, or the constant input 1 where
  /// `axesFromInput`, the opsets that moved it there), keepdims and
  /// noop_with_empty_axes.
  mlir::FailureOr<llvm::SmallVector<mlir::NamedAttribute>>
  reduceAttrs(bool axesFromInput);

  /// Creates an `OpTy` whose result types come from its type inference (an
  /// error naming the node, not a crash, when inference fails), and folds it
  /// when possible.
  template <typename OpTy>
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  createInferred(mlir::ValueRange operands,
                 llvm::ArrayRef<mlir::NamedAttribute> attrs = {}) {
    mlir::OperationState state(loc, OpTy::getOperationName());
    state.addOperands(operands);
    state.addAttributes(attrs);
    mlir::DictionaryAttr dict = state.attributes.getDictionary(b.getContext());
    llvm::SmallVector<mlir::Type> types;
    if constexpr (HasProperties<OpTy>::value) {
      auto &props = state.getOrAddProperties<typename OpTy::Properties>();
      if (mlir::failed(OpTy::setPropertiesFromAttr(
              props, dict, [&] { return error(); })))
        return mlir::failure();
      // Attributes left out take their ODS defaults, as a created op's do.
      if constexpr (HasDefaultProperties<OpTy>::value)
        OpTy::populateDefaultProperties(state.name, props);
      typename OpTy::Adaptor adaptor(operands, dict, props, {});
      if (mlir::failed(OpTy::inferReturnTypes(b.getContext(), loc, adaptor,
                                              types)))
        return mlir::failure();
    } else {
      typename OpTy::Adaptor adaptor(operands, dict);
      if (mlir::failed(OpTy::inferReturnTypes(b.getContext(), loc, adaptor,
                                              types)))
        return mlir::failure();
    }
    state.addTypes(types);
    return finish(state);
  }
  /// Creates an op with the given result types, folded when possible.
  llvm::SmallVector<mlir::Value>
  create(llvm::StringRef opName, mlir::TypeRange types,
         mlir::ValueRange operands,
         llvm::ArrayRef<mlir::NamedAttribute> attrs = {}) {
    mlir::OperationState state(loc, opName);
    state.addOperands(operands);
    state.addAttributes(attrs);
    state.addTypes(types);
    return finish(state);
  }

  mlir::NamedAttribute named(llvm::StringRef name, mlir::Attribute a) {
    return b.getNamedAttr(name, a);
  }
  /// The node's integer (float) attribute `name`, or `dflt`, as the onnx
  /// op's attribute of that name.
  mlir::NamedAttribute intAttr(llvm::StringRef name, int64_t dflt) {
    return named(name, b.getI64IntegerAttr(attrInt(name, dflt)));
  }
  mlir::NamedAttribute floatAttr(llvm::StringRef name, float dflt) {
    return named(name, b.getF32FloatAttr(attrFloat(name, dflt)));
  }

private:
  /// Creates the op of `state`, folding it to constants where possible.
  llvm::SmallVector<mlir::Value> finish(mlir::OperationState &state);
};

/// The type and element type of a ranked tensor value.
inline mlir::RankedTensorType tensorTypeOf(mlir::Value v) {
  return llvm::cast<mlir::RankedTensorType>(v.getType());
}
inline mlir::Type elementTypeOf(mlir::Value v) {
  return tensorTypeOf(v).getElementType();
}

/// Appends the values of `r` to `results`; failure when `r` is one.
inline mlir::LogicalResult
pushAll(mlir::FailureOr<llvm::SmallVector<mlir::Value>> r,
        llvm::SmallVectorImpl<mlir::Value> &results) {
  if (mlir::failed(r))
    return mlir::failure();
  results.append(r->begin(), r->end());
  return mlir::success();
}

/// Converts a TensorProto with inline data into an attribute; null with
/// `error` set when the tensor's type or data cannot be read.
mlir::DenseElementsAttr tensorToAttr(mlir::MLIRContext *ctx,
                                     const ::onnx::TensorProto &t,
                                     std::string &error);

using NodeHandler = mlir::LogicalResult (*)(NodeContext &ctx,
                                            llvm::SmallVectorImpl<mlir::Value> &results);

struct OpTableEntry {
  const char *opType;
  int sinceVersion;
  NodeHandler handler;
  const char *importsAs;
  /// "" for the default domain, else "com.microsoft".
  const char *domain = "";
};

/// Appends one entry per version of `opType` in `versions`, all imported by
/// `handler` (the versions differ only in what the importer checks or
/// already handles).
void addVersions(std::vector<OpTableEntry> &table, const char *opType,
                 std::initializer_list<int> versions, NodeHandler handler,
                 const char *importsAs, const char *domain = "");

/// The domain of ONNX Runtime's contrib ops, the one other domain tpc reads.
constexpr const char *kMicrosoftDomain = "com.microsoft";

/// The importer's op table, sorted by op type then since-version.
llvm::ArrayRef<OpTableEntry> opTable();
/// The entry for `opType` of `domain` at `opset` (that domain's version):
/// the one with the highest since-version not above `opset`; nullptr when
/// the op is unsupported at that opset.
const OpTableEntry *lookupOp(llvm::StringRef opType, int opset,
                             llvm::StringRef domain = "");

} // namespace tpc

#endif
