//===- TPOps.cpp - tp dialect ---------------------------------------------===//
#include "compiler/Dialect/TP/IR/TPOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace tpc::tp;

#include "compiler/Dialect/TP/IR/TPOpsDialect.cpp.inc"

#include "compiler/Dialect/TP/IR/TPOpsEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "compiler/Dialect/TP/IR/TPOpsAttrs.cpp.inc"

void TPDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "compiler/Dialect/TP/IR/TPOpsAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "compiler/Dialect/TP/IR/TPOps.cpp.inc"
      >();
}

#define GET_OP_CLASSES
#include "compiler/Dialect/TP/IR/TPOps.cpp.inc"

namespace {
/// The checks AllGather and Shard share: `whole` is the type holding the
/// whole axis (AllGather's result, Shard's input), `block` the other one
/// (a rank's block after partitioning, the whole tensor before it).
LogicalResult verifyBlocks(Operation *op, int64_t axis,
                           ArrayRef<int64_t> sizes, ArrayRef<int64_t> parts,
                           RankedTensorType whole, RankedTensorType block) {
  if (whole.getRank() != block.getRank())
    return op->emitOpError("input and result ranks differ");
  if (axis < 0 || axis >= whole.getRank())
    return op->emitOpError("axis ")
           << axis << " out of range for rank " << whole.getRank();
  if (sizes.empty() || parts.empty())
    return op->emitOpError("needs sizes (one per rank) and parts");
  if (llvm::any_of(sizes, [](int64_t x) { return x < 0; }) ||
      llvm::any_of(parts, [](int64_t x) { return x <= 0; }))
    return op->emitOpError("sizes must be >= 0 and parts > 0");
  // Each rank's size may exceed its share of the parts (parts that every
  // rank holds whole), so only the whole side is checked against them.
  int64_t partSum = 0;
  for (int64_t x : parts)
    partSum += x;
  if (!whole.isDynamicDim(axis) && whole.getDimSize(axis) != partSum)
    return op->emitOpError("the whole tensor's axis ")
           << axis << " is " << whole.getDimSize(axis) << ", not the "
           << partSum << " its parts give";
  for (int64_t d = 0; d < whole.getRank(); ++d)
    if (d != axis && whole.getDimSize(d) != block.getDimSize(d))
      return op->emitOpError("dimension ")
             << d << " differs between input and result";
  if (whole.getElementType() != block.getElementType())
    return op->emitOpError("input and result element types differ");
  return success();
}
} // namespace

LogicalResult AllGatherOp::verify() {
  return verifyBlocks(*this, getAxis(), getSizes(), getParts(),
                      getOutput().getType(), getInput().getType());
}

LogicalResult ShardOp::verify() {
  return verifyBlocks(*this, getAxis(), getSizes(), getParts(),
                      getInput().getType(), getOutput().getType());
}

LogicalResult
ShardingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                     StringRef kind, int64_t axis, ArrayRef<int64_t> sizes,
                     ArrayRef<int64_t> parts, ArrayRef<int64_t> whole) {
  if (kind != "replicated" && kind != "split" && kind != "partial")
    return emitError() << "#tp.sharding kind must be replicated, split or "
                          "partial, not '"
                       << kind << "'";
  if (kind != "split") {
    if (!sizes.empty() || !parts.empty() || !whole.empty())
      return emitError() << "a " << kind
                         << " #tp.sharding has no sizes, parts or whole";
    return success();
  }
  if (axis < 0)
    return emitError() << "#tp.sharding axis must be >= 0, not " << axis;
  if (sizes.empty() || parts.empty())
    return emitError() << "a split #tp.sharding needs sizes (one per rank) "
                          "and parts";
  if (llvm::any_of(sizes, [](int64_t x) { return x < 0; }) ||
      llvm::any_of(parts, [](int64_t x) { return x <= 0; }))
    return emitError() << "#tp.sharding sizes must be >= 0 and parts > 0";
  for (auto [i, w] : llvm::enumerate(whole))
    if (w < 0 || w >= int64_t(parts.size()) || (i && whole[i - 1] >= w))
      return emitError() << "#tp.sharding whole must list part indices in "
                            "ascending order";
  return success();
}

namespace {

template <typename AttrT>
LogicalResult expectKind(Operation *op, NamedAttribute attr,
                         const char *what) {
  if (isa<AttrT>(attr.getValue()))
    return success();
  return op->emitOpError("attribute '")
         << attr.getName().strref() << "' must be " << what << ", not "
         << attr.getValue();
}

} // namespace

LogicalResult TPDialect::verifyOperationAttribute(Operation *op,
                                                  NamedAttribute attr) {
  StringRef name = attr.getName().strref();
  if (name == kSizeAttr || name == kRankAttr || name == kAxisAttr) {
    auto v = dyn_cast<IntegerAttr>(attr.getValue());
    if (!v)
      return expectKind<IntegerAttr>(op, attr, "an integer");
    int64_t lowest = name == kSizeAttr ? 1 : 0;
    if (v.getInt() < lowest)
      return op->emitOpError("attribute '")
             << name << "' must be >= " << lowest << ", not " << v.getInt();
    if (name == kRankAttr)
      if (auto module = op->getParentOfType<ModuleOp>())
        if (auto size = module->getAttrOfType<IntegerAttr>(kSizeAttr))
          if (v.getInt() >= size.getInt())
            return op->emitOpError("is rank ")
                   << v.getInt() << " of a module of tp.size "
                   << size.getInt();
    return success();
  }
  if (name == kShardingAttr) {
    auto arr = dyn_cast<ArrayAttr>(attr.getValue());
    if (!arr || !llvm::all_of(arr, [](Attribute a) {
          return isa<ShardingAttr>(a);
        }))
      return op->emitOpError("attribute 'tp.sharding' must be an array of "
                             "#tp.sharding, one per result");
    if (arr.size() != op->getNumResults())
      return op->emitOpError("has ")
             << op->getNumResults() << " results but " << arr.size()
             << " entries in tp.sharding";
    for (auto [s, r] : llvm::zip(arr, op->getResults())) {
      auto sh = cast<ShardingAttr>(s);
      auto t = dyn_cast<RankedTensorType>(r.getType());
      if (sh.getKind() == "split" && (!t || sh.getAxis() >= t.getRank()))
        return op->emitOpError("has a split on axis ")
               << sh.getAxis() << " of a result of type " << r.getType();
    }
    return success();
  }
  if (name == kRoleAttr)
    return expectKind<RoleAttr>(op, attr, "a #tp.role");
  if (name == kReasonAttr) {
    if (failed(expectKind<StringAttr>(op, attr, "a string")))
      return failure();
    if (roleOf(op) != Role::Replicated)
      return op->emitOpError("has a tp.reason but is not tp.role = "
                             "#tp.role<replicated>");
    return success();
  }
  if (name == kSourceShapeAttr)
    return expectKind<DenseI64ArrayAttr>(op, attr, "an array<i64>");
  if (name == kRangesAttr) {
    auto r = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    if (!r || r.size() % 2 != 0)
      return op->emitOpError("attribute 'tp.ranges' must be an array<i64> "
                             "of [start, size] pairs");
    return success();
  }
  return op->emitOpError("has an unknown tp dialect attribute '")
         << name << "'";
}
