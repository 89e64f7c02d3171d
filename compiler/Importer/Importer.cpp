//===- Importer.cpp - ONNX graphs to onnx-dialect functions ---------------===//
#include "compiler/Importer/Importer.h"
#include "compiler/Importer/ShardingAnnotations.h"
#include "compiler/Dialect/ONNX/IR/ShapeUtils.h"
#include "compiler/Importer/ModelFile.h"
#include "compiler/Importer/NodeImporter.h"
#include "compiler/Importer/PastLength.h"
#include "compiler/Importer/Selection.h"
#include "kernels/Types.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

using namespace mlir;
namespace fs = std::filesystem;

namespace tpc {

void addElementwiseImporters(std::vector<OpTableEntry> &t);
void addShapeImporters(std::vector<OpTableEntry> &t);
void addContribImporters(std::vector<OpTableEntry> &t);
void addAttentionImporters(std::vector<OpTableEntry> &t);
void addRoutingImporters(std::vector<OpTableEntry> &t);
void addGroupQueryAttentionImporters(std::vector<OpTableEntry> &t);
void addActivationImporters(std::vector<OpTableEntry> &t);
void addReductionImporters(std::vector<OpTableEntry> &t);
void addEinsumImporter(std::vector<OpTableEntry> &t);
void addQuantizeImporters(std::vector<OpTableEntry> &t);
void addLossImporters(std::vector<OpTableEntry> &t);

ArrayRef<OpTableEntry> opTable() {
  static const std::vector<OpTableEntry> table = [] {
    std::vector<OpTableEntry> t;
    addElementwiseImporters(t);
    addShapeImporters(t);
    addContribImporters(t);
    addAttentionImporters(t);
    addRoutingImporters(t);
    addGroupQueryAttentionImporters(t);
    addActivationImporters(t);
    addReductionImporters(t);
    addEinsumImporter(t);
    addQuantizeImporters(t);
    addLossImporters(t);
    std::sort(t.begin(), t.end(), [](const auto &a, const auto &b) {
      if (int d = std::strcmp(a.domain, b.domain))
        return d < 0;
      int c = std::strcmp(a.opType, b.opType);
      return c != 0 ? c < 0 : a.sinceVersion < b.sinceVersion;
    });
    return t;
  }();
  return table;
}

const OpTableEntry *lookupOp(StringRef opType, int opset, StringRef domain) {
  const OpTableEntry *best = nullptr;
  for (const OpTableEntry &e : opTable())
    if (opType == e.opType && domain == e.domain && e.sinceVersion <= opset)
      best = &e;
  return best;
}

std::vector<SupportedOp> supportedOps() {
  std::vector<SupportedOp> out;
  for (const OpTableEntry &e : opTable())
    out.push_back({e.opType, e.sinceVersion, e.importsAs, e.domain});
  return out;
}

bool parseInputShape(const std::string &spec, std::string &name,
                     std::vector<int64_t> &shape) {
  size_t eq = spec.rfind('=');
  if (eq == std::string::npos || eq == 0)
    return false;
  name = spec.substr(0, eq);
  shape.clear();
  std::string dims = spec.substr(eq + 1);
  if (dims.empty() || dims == "scalar")
    return dims == "scalar";
  size_t pos = 0;
  while (pos <= dims.size()) {
    size_t x = dims.find_first_of("x,", pos);
    std::string d = dims.substr(pos, x == std::string::npos ? x : x - pos);
    if (d.empty() || d.find_first_not_of("0123456789") != std::string::npos ||
        d.size() > 12)
      return false;
    shape.push_back(std::stoll(d));
    if (x == std::string::npos)
      break;
    pos = x + 1;
  }
  return true;
}

namespace {

/// Integer and tiny initializers become IR constants (they feed shape
/// plumbing and folding); everything else stays in the file as a Weight.
bool keepAsConstant(Type elem, int64_t numel) {
  if (numel <= 16)
    return true;
  return isa<IntegerType>(elem) && numel <= 4096;
}

class GraphImporter {
public:
  GraphImporter(MLIRContext &ctx, const std::string &path,
                const ImportOptions &options)
      : ctx(ctx), b(&ctx), path(path), options(options),
        fileName(fs::path(path).filename().string()) {}

  OwningOpRef<ModuleOp> run();

private:
  InFlightDiagnostic error() {
    return emitError(FileLineColLoc::get(&ctx, path, 0, 0));
  }
  LogicalResult checkOpsets();
  FailureOr<RankedTensorType> valueType(const ::onnx::ValueInfoProto &vi,
                                        bool isInput);
  /// An initializer, or a tensor that stands for one (`what` names it in
  /// errors; by default "initializer 'NAME'").
  LogicalResult importInitializer(const ::onnx::TensorProto &t,
                                  std::string what = "");
  /// A Constant whose value is external data becomes the initializer it
  /// stands for (returns true); any other attribute tensor stored as
  /// external data is read into `inlined`, a copy of the node.
  FailureOr<bool> resolveExternalAttributes(const ::onnx::NodeProto &node,
                                            const std::string &name,
                                            ::onnx::NodeProto &inlined);
  LogicalResult importNode(const ::onnx::NodeProto &node, size_t index);
  /// importNode once the node's attribute tensors are in memory.
  LogicalResult importResolvedNode(const ::onnx::NodeProto &node,
                                   const std::string &name, Location loc,
                                   const OpTableEntry *entry);
  /// Records the node's IR-11 sharding annotations on the ops it became.
  LogicalResult annotateNode(const ::onnx::NodeProto &node, Location loc,
                             const std::string &name, ArrayRef<Value> inputs,
                             ArrayRef<Value> results);

  MLIRContext &ctx;
  OpBuilder b;
  std::string path;
  const ImportOptions &options;
  std::string fileName;
  std::string modelDir;
  ::onnx::ModelProto model;
  std::map<std::string, WeightLocation> inlineWeights;
  int opset = 0;
  /// The com.microsoft opset (1 when the model does not import it).
  int microsoftOpset = 1;
  llvm::StringMap<Value> values;
  std::vector<DeviceConfiguration> deviceConfigs;
  /// Shapes the --kv-cache length implies for inputs with symbolic dims.
  std::map<std::string, std::vector<int64_t>> kvShapes;
  /// The values that owe their rows to a densely computed NonZero.
  Selections selections;
  /// The dimensions of each graph input that follow the past length of a
  /// decode step (see PastLength.h), and the constants derived from them.
  std::map<std::string, PastOffsets> kvPastDims;
  PastLength pastLength;
  /// Fills kvShapes (see ImportOptions::kvCacheLength).
  LogicalResult resolveKVCacheShapes();
};

LogicalResult GraphImporter::resolveKVCacheShapes() {
  const ::onnx::GraphProto &g = model.graph();
  std::set<std::string> inits, outputs;
  for (const ::onnx::TensorProto &t : g.initializer())
    inits.insert(t.name());
  for (const ::onnx::ValueInfoProto &o : g.output())
    outputs.insert(o.name());
  const int64_t length = options.kvCacheLength, batch = options.batch;
  // The symbols of the past length and the batch, from the past inputs: the
  // graph inputs a Concat extends into a graph output.
  std::map<std::string, int64_t> symbols;
  // The symbols that are the past length or the cache length.
  std::set<std::string> pastSymbols;
  bool foundPast = false;
  // A past input extended along `axis` into the graph output `present`:
  // the past length is one less than the cache, the present's the cache's.
  auto pastInput = [&](const std::string &name, int64_t axis,
                       const std::string &present) {
    for (const ::onnx::ValueInfoProto &in : g.input()) {
      if (in.name() != name || inits.count(name) ||
          !in.type().tensor_type().has_shape())
        continue;
      const auto &shape = in.type().tensor_type().shape();
      int64_t a = axis < 0 ? axis + shape.dim_size() : axis;
      if (a < 0 || a >= shape.dim_size())
        continue;
      if (shape.dim(int(a)).has_dim_param()) {
        symbols[shape.dim(int(a)).dim_param()] = length - 1;
        pastSymbols.insert(shape.dim(int(a)).dim_param());
        foundPast = true;
      }
      if (a != 0 && shape.dim_size() > 0 && shape.dim(0).has_dim_param())
        symbols[shape.dim(0).dim_param()] = batch;
      for (const ::onnx::ValueInfoProto &o : g.output()) {
        if (o.name() != present || !o.type().tensor_type().has_shape())
          continue;
        const auto &out = o.type().tensor_type().shape();
        if (a < out.dim_size() && out.dim(int(a)).has_dim_param() &&
            !symbols.count(out.dim(int(a)).dim_param())) {
          symbols[out.dim(int(a)).dim_param()] = length;
          pastSymbols.insert(out.dim(int(a)).dim_param());
        }
      }
    }
  };
  // A GroupQueryAttention's head size, for a past input whose head dim is
  // symbolic: the width of the projection feeding its query (a MatMul by a
  // weight, with or without a bias Add) over its heads.
  std::map<std::string, const ::onnx::NodeProto *> producer;
  for (const ::onnx::NodeProto &n : g.node())
    for (const std::string &o : n.output())
      producer[o] = &n;
  std::map<std::string, std::vector<int64_t>> initDims;
  for (const ::onnx::TensorProto &t : g.initializer())
    initDims[t.name()].assign(t.dims().begin(), t.dims().end());
  auto projectionWidth = [&](std::string v) -> int64_t {
    for (int hop = 0; hop < 2; ++hop) {
      auto it = producer.find(v);
      if (it == producer.end())
        return 0;
      const ::onnx::NodeProto &n = *it->second;
      if (n.op_type() == "MatMul" && n.input_size() == 2) {
        auto w = initDims.find(n.input(1));
        return w != initDims.end() && w->second.size() == 2 ? w->second[1]
                                                              : 0;
      }
      if (n.op_type() != "Add" || n.input_size() != 2)
        return 0;
      v = initDims.count(n.input(1)) ? n.input(0) : n.input(1);
    }
    return 0;
  };
  auto headSize = [&](const ::onnx::NodeProto &n) -> int64_t {
    int64_t heads = 0, kv = 0;
    for (const ::onnx::AttributeProto &a : n.attribute()) {
      if (a.name() == "num_heads")
        heads = a.i();
      if (a.name() == "kv_num_heads")
        kv = a.i();
    }
    bool packed = n.input_size() < 2 || n.input(1).empty();
    int64_t parts = packed ? heads + 2 * kv : heads;
    int64_t width = n.input_size() > 0 ? projectionWidth(n.input(0)) : 0;
    return parts > 0 && width % parts == 0 ? width / parts : 0;
  };
  for (const ::onnx::NodeProto &n : g.node()) {
    // Exported caches (past ++ new), and the attention ops that extend
    // their past_key / past_value into present outputs along the sequence.
    if (n.op_type() == "Concat" && n.input_size() == 2 &&
        n.output_size() == 1 && outputs.count(n.output(0))) {
      int64_t axis = 0;
      for (const ::onnx::AttributeProto &a : n.attribute())
        if (a.name() == "axis")
          axis = a.i();
      pastInput(n.input(0), axis, n.output(0));
      continue;
    }
    int first = n.op_type() == "GroupQueryAttention" &&
                        n.domain() == kMicrosoftDomain
                    ? 3
                : n.op_type() == "Attention" &&
                        (n.domain().empty() || n.domain() == "ai.onnx")
                    ? 4
                    : -1;
    if (first < 0)
      continue;
    int64_t head = first == 3 ? headSize(n) : 0;
    for (int i = 0; i < 2; ++i) {
      if (first + i >= n.input_size() || 1 + i >= n.output_size() ||
          !outputs.count(n.output(1 + i)))
        continue;
      pastInput(n.input(first + i), 2, n.output(1 + i));
      for (const ::onnx::ValueInfoProto &in : g.input()) {
        const auto &shape = in.type().tensor_type().shape();
        if (in.name() == n.input(first + i) && head > 0 &&
            shape.dim_size() == 4 && shape.dim(3).has_dim_param())
          symbols.try_emplace(shape.dim(3).dim_param(), head);
      }
    }
  }
  if (!foundPast)
    return error() << "--kv-cache: '" << path
                   << "' has no past inputs with a symbolic length (a graph "
                      "input that a Concat or an attention op extends into "
                      "a graph output); "
                      "export it with past inputs (optimum's "
                      "text-generation-with-past)";
  // The dims the user gave with --input-shape bind their symbols too. A
  // symbol they bind that is neither a past length nor the batch is the
  // number of new tokens of a forward (a prompt prefilled at once); the
  // past is then the cache less those tokens, so that past + new is the
  // cache's length.
  std::optional<int64_t> newTokens;
  std::string newTokensFrom;
  std::set<std::string> batchSymbols;
  for (const auto &[name, value] : symbols)
    if (!pastSymbols.count(name))
      batchSymbols.insert(name);
  for (const ::onnx::ValueInfoProto &in : g.input()) {
    auto given = options.inputShapes.find(in.name());
    const auto &shape = in.type().tensor_type().shape();
    if (given == options.inputShapes.end() ||
        int64_t(given->second.size()) != shape.dim_size())
      continue;
    for (int d = 0; d < shape.dim_size(); ++d) {
      if (!shape.dim(d).has_dim_param())
        continue;
      const std::string &param = shape.dim(d).dim_param();
      int64_t v = given->second[size_t(d)];
      if (!pastSymbols.count(param) && !batchSymbols.count(param) &&
          param.find('+') == std::string::npos) {
        if (newTokens && *newTokens != v)
          return error() << "--kv-cache: --input-shape gives " << in.name()
                         << " " << v << " new tokens ('" << param << "'), but "
                         << newTokensFrom << " " << *newTokens;
        newTokens = v;
        newTokensFrom = in.name();
      }
      symbols[param] = v;
    }
  }
  const int64_t past = length - newTokens.value_or(1);
  if (past < 0)
    return error() << "--kv-cache: " << newTokensFrom << " takes " << *newTokens
                   << " new tokens, more than the cache's " << length
                   << " positions";
  for (const std::string &param : pastSymbols)
    if (symbols[param] == length - 1)
      symbols[param] = past;
  // Every other symbol is the number of new tokens of a step: one. A sum of
  // symbols ("past_sequence_length + sequence_length") is evaluated.
  auto followsPast = [&](const std::string &param) {
    for (StringRef term : llvm::split(StringRef(param), '+'))
      if (pastSymbols.count(term.trim().str()))
        return true;
    return false;
  };
  auto value = [&](const std::string &param) -> std::optional<int64_t> {
    int64_t total = 0;
    for (StringRef term : llvm::split(StringRef(param), '+')) {
      term = term.trim();
      int64_t n;
      if (term.empty())
        return std::nullopt;
      if (!term.getAsInteger(10, n))
        total += n;
      else if (auto it = symbols.find(term.str()); it != symbols.end())
        total += it->second;
      else if (term.find_first_of("*/-()") == StringRef::npos)
        total += 1;
      else
        return std::nullopt;
    }
    return total;
  };
  for (const ::onnx::ValueInfoProto &in : g.input()) {
    if (inits.count(in.name()) || options.inputShapes.count(in.name()) ||
        options.constInputs.count(in.name()) ||
        !in.type().tensor_type().has_shape())
      continue;
    std::vector<int64_t> dims;
    PastOffsets offsets;
    bool symbolic = false;
    for (const auto &d : in.type().tensor_type().shape().dim()) {
      offsets.push_back(std::nullopt);
      if (d.has_dim_value() && d.dim_value() >= 0) {
        dims.push_back(d.dim_value());
        continue;
      }
      symbolic = true;
      std::optional<int64_t> v =
          d.has_dim_param() ? value(d.dim_param()) : std::nullopt;
      if (!v)
        return error() << "--kv-cache: cannot tell the size of input '"
                       << in.name() << "' dimension " << dims.size()
                       << (d.has_dim_param() ? " ('" + d.dim_param() + "')"
                                             : std::string())
                       << "; give its shape with --input-shape " << in.name()
                       << "=DxDx...";
      dims.push_back(*v);
      if (followsPast(d.dim_param()))
        offsets.back() = *v - past;
    }
    if (symbolic)
      kvShapes[in.name()] = dims;
    if (llvm::any_of(offsets, [](auto &o) { return o.has_value(); }))
      kvPastDims[in.name()] = offsets;
  }
  return success();
}

LogicalResult GraphImporter::checkOpsets() {
  bool found = false;
  for (const ::onnx::OperatorSetIdProto &o : model.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") {
      opset = int(o.version());
      found = true;
    }
    if (o.domain() == kMicrosoftDomain)
      microsoftOpset = int(o.version());
  }
  if (!found)
    return error() << "'" << path << "' imports no opset of the default ONNX "
                   << "domain";
  if (opset < kMinOpset || opset > kMaxOpset)
    return error() << "'" << path << "' uses opset " << opset
                   << " of the default domain; tpc supports opsets "
                   << kMinOpset << " to " << kMaxOpset
                   << " (re-export with one of them)";
  return success();
}

/// Whether a tensor of `dims` and `elem` has at most kMaxTensorBytes: a
/// shape beyond that is a broken file, and its element count would
/// overflow the arithmetic that follows.
static bool fitsTensor(ArrayRef<int64_t> dims, Type elem) {
  uint64_t elemBytes = onnx::elementBytes(elem);
  std::optional<uint64_t> bytes =
      tpc::checkedByteSize(dims.data(), dims.size(), elemBytes);
  return bytes && *bytes <= kMaxTensorBytes;
}

FailureOr<RankedTensorType>
GraphImporter::valueType(const ::onnx::ValueInfoProto &vi, bool isInput) {
  if (!vi.type().has_tensor_type())
    return error() << "graph value '" << vi.name() << "' is not a tensor";
  const ::onnx::TypeProto_Tensor &tt = vi.type().tensor_type();
  Type elem = onnx::onnxElementType(&ctx, tt.elem_type());
  if (!elem)
    return error() << "graph value '" << vi.name()
                   << "' has unsupported element type "
                   << onnx::onnxTypeName(tt.elem_type());
  const std::vector<int64_t> *found = nullptr;
  if (auto it = options.inputShapes.find(vi.name());
      it != options.inputShapes.end())
    found = &it->second;
  else if (auto kv = kvShapes.find(vi.name()); kv != kvShapes.end())
    found = &kv->second;
  if (isInput && found) {
    const std::vector<int64_t> &given = *found;
    if (tt.has_shape() && tt.shape().dim_size() != int(given.size()))
      return error() << "--input-shape " << vi.name() << " gives "
                     << given.size() << " dimensions, the model's input has "
                     << tt.shape().dim_size();
    for (int i = 0; tt.has_shape() && i < tt.shape().dim_size(); ++i) {
      const auto &d = tt.shape().dim(i);
      if (d.has_dim_value() && d.dim_value() != given[i])
        return error() << "--input-shape " << vi.name() << " sets dimension "
                       << i << " to " << given[i] << ", the model fixes it to "
                       << d.dim_value();
    }
    if (!fitsTensor(given, elem))
      return error() << "--input-shape " << vi.name()
                     << " is too large (more than 2^50 bytes)";
    return RankedTensorType::get(given, elem);
  }
  if (!tt.has_shape() && !isInput)
    return RankedTensorType(); // an output without a shape: the producer's
  if (!tt.has_shape())
    return error() << "graph " << (isInput ? "input" : "value") << " '"
                   << vi.name() << "' has no shape"
                   << (isInput ? "; give it with --input-shape" : "");
  SmallVector<int64_t> dims;
  for (int i = 0; i < tt.shape().dim_size(); ++i) {
    const auto &d = tt.shape().dim(i);
    if (!d.has_dim_value() || d.dim_value() < 0) {
      if (!isInput)
        return RankedTensorType(); // outputs: taken from the producer
      return error() << "input '" << vi.name() << "' has a dynamic dimension "
                     << i
                     << (d.has_dim_param() ? " ('" + d.dim_param() + "')" : "")
                     << "; give its shape with --input-shape " << vi.name()
                     << "=DxDx...";
    }
    dims.push_back(d.dim_value());
  }
  if (!fitsTensor(dims, elem))
    return error() << "graph value '" << vi.name()
                   << "' is too large (more than 2^50 bytes)";
  return RankedTensorType::get(dims, elem);
}

/// The bytes a tensor's data takes in a file (4- and 2-bit integers packed),
/// or an error naming `what`.
static FailureOr<int64_t> storedBytes(MLIRContext *ctx,
                                      const ::onnx::TensorProto &t,
                                      const std::string &what,
                                      std::string &err) {
  Type elem = onnx::onnxElementType(ctx, t.data_type());
  if (!elem) {
    err = what + " has unsupported data type " +
          onnx::onnxTypeName(t.data_type());
    return failure();
  }
  SmallVector<int64_t> dims(t.dims().begin(), t.dims().end());
  // Checked: 2^31 x 2^31 x 4 bytes must not wrap to a small size.
  for (int64_t d : dims)
    if (d < 0) {
      err = what + " has a negative dimension (" + std::to_string(d) + ")";
      return failure();
    }
  std::optional<uint64_t> checkedBytes = tpc::checkedByteSize(
      dims.data(), dims.size(), uint64_t(onnx::elementBytes(elem)));
  if (!checkedBytes || *checkedBytes > kMaxTensorBytes) {
    err = what + " is too large (more than 2^50 bytes)";
    return failure();
  }
  unsigned bits = elem.getIntOrFloatBitWidth();
  int64_t bytes = int64_t(*checkedBytes);
  if (bits > 1 && bits < 8)
    bytes = (bytes * bits + 7) / 8;
  return bytes;
}

/// Reads `length` bytes at `offset` of `file` (relative to `dir`).
static bool readBytes(const std::string &dir, const WeightLocation &where,
                      std::string &raw) {
  std::ifstream in(fs::path(dir) / where.file, std::ios::binary);
  raw.assign(size_t(where.length), '\0');
  in.seekg(std::streamoff(where.offset));
  in.read(raw.data(), std::streamsize(where.length));
  return bool(in);
}

FailureOr<bool>
GraphImporter::resolveExternalAttributes(const ::onnx::NodeProto &node,
                                         const std::string &name,
                                         ::onnx::NodeProto &inlined) {
  auto external = [](const ::onnx::TensorProto &t) {
    return t.data_location() == ::onnx::TensorProto::EXTERNAL;
  };
  bool any = false;
  for (const ::onnx::AttributeProto &a : node.attribute())
    any |= (a.has_t() && external(a.t())) ||
           llvm::any_of(a.tensors(), external);
  if (!any)
    return false;
  if (node.op_type() == "Constant" && node.attribute_size() == 1 &&
      node.attribute(0).name() == "value" && node.output_size() == 1) {
    // Exports over 2 GB store even small Constants in the data file: the
    // value is imported as an initializer of the Constant's output would be
    // (a constant when small, else a weight read from the file).
    ::onnx::TensorProto t = node.attribute(0).t();
    t.set_name(node.output(0));
    if (failed(importInitializer(
            t, "the value of Constant node '" + name + "'")))
      return failure();
    return true;
  }
  inlined = node;
  auto read = [&](::onnx::TensorProto &t, const std::string &what) {
    std::string err;
    FailureOr<int64_t> bytes = storedBytes(&ctx, t, what, err);
    WeightLocation where;
    std::string raw;
    if (failed(bytes) || !resolveExternalData(t, modelDir, *bytes, where, err,
                                              "external data of " + what))
      return error() << "'" << path << "': " << err, failure();
    if (!readBytes(modelDir, where, raw))
      return error() << "'" << path << "': cannot read " << what,
             failure();
    t.clear_external_data();
    t.set_data_location(::onnx::TensorProto::DEFAULT);
    t.set_raw_data(std::move(raw));
    return success();
  };
  for (::onnx::AttributeProto &a : *inlined.mutable_attribute()) {
    std::string what =
        "attribute '" + a.name() + "' of node '" + name + "'";
    if (a.has_t() && external(a.t()) && failed(read(*a.mutable_t(), what)))
      return failure();
    for (::onnx::TensorProto &t : *a.mutable_tensors())
      if (external(t) && failed(read(t, what)))
        return failure();
  }
  return false;
}

LogicalResult GraphImporter::importInitializer(const ::onnx::TensorProto &t,
                                               std::string what) {
  if (what.empty())
    what = "initializer '" + t.name() + "'";
  std::string sizeErr;
  FailureOr<int64_t> stored = storedBytes(&ctx, t, what, sizeErr);
  if (failed(stored))
    return error() << sizeErr;
  Type elem = onnx::onnxElementType(&ctx, t.data_type());
  SmallVector<int64_t> dims(t.dims().begin(), t.dims().end());
  unsigned bits = elem.getIntOrFloatBitWidth();
  // 4- and 2-bit integers are packed in the file and unpacked into a
  // constant at import (one element per byte).
  bool packed = bits > 1 && bits < 8;
  auto type = RankedTensorType::get(dims, elem);
  int64_t bytes = *stored;
  Location loc = NameLoc::get(b.getStringAttr(t.name()),
                              FileLineColLoc::get(&ctx, path, 0, 0));
  WeightLocation where;
  bool external = t.data_location() == ::onnx::TensorProto::EXTERNAL;
  if (external) {
    std::string err;
    if (!resolveExternalData(t, modelDir, bytes, where, err,
                             "external data of " + what))
      return error() << "'" << path << "': " << err;
  }
  auto inl = inlineWeights.find(t.name());
  bool inlineRaw = !external && inl != inlineWeights.end();
  if (inlineRaw)
    where = inl->second;
  if (packed || keepAsConstant(elem, type.getNumElements()) ||
      (!external && !inlineRaw)) {
    ::onnx::TensorProto copy;
    const ::onnx::TensorProto *src = &t;
    if (external || (inlineRaw && !t.has_raw_data())) {
      // Small tensors whose bytes stayed in a file: read them now.
      std::string raw;
      if (!readBytes(modelDir, where, raw))
        return error() << "cannot read " << what;
      copy = t;
      copy.clear_external_data();
      copy.set_data_location(::onnx::TensorProto::DEFAULT);
      copy.set_raw_data(raw);
      src = &copy;
    }
    std::string err;
    DenseElementsAttr value = tensorToAttr(&ctx, *src, err);
    if (!value)
      return error() << "'" << path << "': " << err;
    auto constant = b.create<onnx::ConstantOp>(loc, type, value);
    // Where a packed 4-bit tensor's bytes lie, so that a block-quantized
    // weight's DequantizeLinear can keep them packed (QuantizeImporters).
    if (packed && (external || inlineRaw))
      constant->setAttr(
          "onnx.packed_source",
          b.getDictionaryAttr(
              {b.getNamedAttr("name", b.getStringAttr(t.name())),
               b.getNamedAttr("file", b.getStringAttr(where.file)),
               b.getNamedAttr("offset", b.getI64IntegerAttr(where.offset)),
               b.getNamedAttr("length", b.getI64IntegerAttr(where.length))}));
    values[t.name()] = constant;
    return success();
  }
  if (where.length != bytes)
    return error() << what << " has " << where.length
                   << " bytes of data, its type " << type << " needs "
                   << bytes;
  values[t.name()] = b.create<onnx::WeightOp>(
      loc, type, b.getStringAttr(t.name()), b.getStringAttr(where.file),
      b.getI64IntegerAttr(where.offset), b.getI64IntegerAttr(where.length));
  return success();
}

LogicalResult GraphImporter::importNode(const ::onnx::NodeProto &node,
                                        size_t index) {
  std::string name =
      node.name().empty() ? node.op_type() + "_" + std::to_string(index)
                          : node.name();
  Location loc = NameLoc::get(b.getStringAttr(name),
                              FileLineColLoc::get(&ctx, path, 0, 0));
  bool microsoft = node.domain() == kMicrosoftDomain;
  if (!node.domain().empty() && node.domain() != "ai.onnx" && !microsoft)
    return emitError(loc) << "op '" << node.op_type() << "' (node '" << name
                          << "') is in the custom domain '" << node.domain()
                          << "', which tpc does not support (it reads the "
                             "default domain and "
                          << kMicrosoftDomain << ")";
  int version = microsoft ? microsoftOpset : opset;
  const OpTableEntry *entry =
      lookupOp(node.op_type(), version, microsoft ? kMicrosoftDomain : "");
  if (!entry)
    return emitError(loc) << "unsupported ONNX op '" << node.op_type()
                          << "' (node '" << name << "', domain '"
                          << node.domain() << "', opset " << version << ")";
  ::onnx::NodeProto inlined;
  FailureOr<bool> asInitializer =
      resolveExternalAttributes(node, name, inlined);
  if (failed(asInitializer))
    return failure();
  if (*asInitializer)
    return success();
  return importResolvedNode(inlined.op_type().empty() ? node : inlined, name,
                            loc, entry);
}

LogicalResult GraphImporter::importResolvedNode(const ::onnx::NodeProto &node,
                                                const std::string &name,
                                                Location loc,
                                                const OpTableEntry *entry) {
  SmallVector<Value> inputs;
  for (const std::string &in : node.input()) {
    if (in.empty()) {
      inputs.push_back(Value());
      continue;
    }
    auto it = values.find(in);
    if (it == values.end())
      return emitError(loc) << "node '" << name << "' (" << node.op_type()
                            << ") uses '" << in
                            << "', which no earlier node, graph input or "
                               "initializer defines";
    inputs.push_back(it->second);
  }
  ::onnx::NodeProto named = node;
  named.set_name(name);
  NodeContext c(b, loc, named, opset, std::move(inputs));
  c.decodeStep = options.kvCacheLength > 0;
  SmallVector<Value> results;
  FailureOr<bool> special = selections.importSpecial(c, results);
  if (failed(special))
    return failure();
  if (!*special) {
    special = pastLength.importSpecial(c, results);
    if (failed(special))
      return failure();
  }
  if (!*special && (failed(entry->handler(c, results)) ||
                    failed(selections.propagate(c, results))))
    return failure();
  pastLength.propagate(c, results);
  for (int i = 0; i < node.output_size(); ++i) {
    if (node.output(i).empty())
      continue;
    if (size_t(i) >= results.size())
      return emitError(loc) << "node '" << name << "' (" << node.op_type()
                            << "): output " << i << " is not supported";
    values[node.output(i)] = results[i];
  }
  return annotateNode(node, loc, name, c.inputs, results);
}

LogicalResult GraphImporter::annotateNode(const ::onnx::NodeProto &node,
                                          Location loc,
                                          const std::string &name,
                                          ArrayRef<Value> inputs,
                                          ArrayRef<Value> results) {
  std::vector<NodeDeviceConfiguration> configs;
  std::string why;
  if (!readNodeConfigurations(node, configs, why))
    return emitError(loc) << "the sharding annotation of node '" << name
                          << "' (" << node.op_type() << ") " << why;
  for (const NodeDeviceConfiguration &nc : configs) {
    auto config = llvm::find_if(deviceConfigs, [&](const auto &d) {
      return d.name == nc.configuration;
    });
    if (config == deviceConfigs.end())
      return emitError(loc) << "the sharding annotation of node '" << name
                            << "' names device configuration '"
                            << nc.configuration
                            << "', which the model does not define";
    for (const TensorShardingSpec &spec : nc.specs) {
      auto bad = [&]() {
        return emitError(loc)
               << "the sharding annotation of node '" << name
               << "' for tensor '" << spec.tensor << "' ";
      };
      if (!spec.devices.empty() &&
          int64_t(spec.devices.size()) != config->numDevices)
        return bad() << "uses " << spec.devices.size() << " of the "
                     << config->numDevices << " devices of configuration '"
                     << config->name << "'; tpc shards over all of them";
      for (auto [i, d] : llvm::enumerate(spec.devices))
        if (d != int64_t(i))
          return bad() << "places its shards on the devices of "
                       << "configuration '" << config->name
                       << "' in another order; tpc places shard i on "
                       << "device i";
      if (spec.axis >= 0 && spec.shards != config->numDevices)
        return bad() << "cuts axis " << spec.axis << " into " << spec.shards
                     << " shards over " << config->numDevices
                     << " devices; tpc gives each device one shard";
      Operation *op = nullptr;
      NamedAttribute slot(b.getStringAttr("result"), b.getI64IntegerAttr(0));
      Value v;
      for (int i = 0; i < node.output_size() && !op; ++i)
        if (node.output(i) == spec.tensor && size_t(i) < results.size() &&
            results[i] && results[i].getDefiningOp()) {
          v = results[i];
          op = v.getDefiningOp();
          slot = NamedAttribute(
              b.getStringAttr("result"),
              b.getI64IntegerAttr(cast<OpResult>(v).getResultNumber()));
        }
      for (int i = 0; i < node.input_size() && !op; ++i) {
        if (node.input(i) != spec.tensor || size_t(i) >= inputs.size() ||
            !inputs[i])
          continue;
        Operation *main =
            results.empty() || !results[0] ? nullptr
                                           : results[0].getDefiningOp();
        for (unsigned j = 0; main && j < main->getNumOperands(); ++j)
          if (main->getOperand(j) == inputs[i]) {
            op = main;
            v = inputs[i];
            slot = NamedAttribute(b.getStringAttr("operand"),
                                  b.getI64IntegerAttr(j));
            break;
          }
        if (!op)
          return bad() << "cannot be checked: the node does not read it "
                          "directly in tpc's import of it";
      }
      if (!op)
        return bad() << "names no input or output of the node";
      auto t = dyn_cast<RankedTensorType>(v.getType());
      if (spec.axis >= 0 && (!t || spec.axis >= t.getRank()))
        return bad() << "shards axis " << spec.axis << " of " << v.getType();
      if (spec.axis >= 0 && spec.dimValue >= 0 &&
          spec.dimValue != t.getDimSize(spec.axis))
        return bad() << "gives axis " << spec.axis << " the size "
                     << spec.dimValue << ", but it is " << v.getType();
      SmallVector<Attribute> entries;
      if (auto old = op->getAttrOfType<ArrayAttr>(kShardingSpecsAttr))
        entries.append(old.begin(), old.end());
      entries.push_back(b.getDictionaryAttr(
          {b.getNamedAttr("configuration", b.getStringAttr(config->name)),
           b.getNamedAttr("tensor", b.getStringAttr(spec.tensor)), slot,
           b.getNamedAttr("axis", b.getI64IntegerAttr(spec.axis)),
           b.getNamedAttr("shards", b.getI64IntegerAttr(spec.shards))}));
      op->setAttr(kShardingSpecsAttr, b.getArrayAttr(entries));
    }
  }
  return success();
}

OwningOpRef<ModuleOp> GraphImporter::run() {
  std::string err;
  if (!loadModelFile(path, model, inlineWeights, err)) {
    error() << err;
    return nullptr;
  }
  modelDir = fs::absolute(fs::path(path)).parent_path().string();
  if (failed(checkOpsets()))
    return nullptr;
  if (options.kvCacheLength > 0 && failed(resolveKVCacheShapes()))
    return nullptr;
  const ::onnx::GraphProto &g = model.graph();

  OwningOpRef<ModuleOp> module = ModuleOp::create(
      FileLineColLoc::get(&ctx, path, 0, 0));
  module->getOperation()->setAttr("onnx.source_dir",
                                  b.getStringAttr(modelDir));
  module->getOperation()->setAttr("onnx.opset", b.getI64IntegerAttr(opset));
  {
    std::string why;
    if (!readDeviceConfigurations(model, deviceConfigs, why))
      return error() << why, nullptr;
    SmallVector<Attribute> configs;
    for (const DeviceConfiguration &d : deviceConfigs)
      configs.push_back(b.getDictionaryAttr(
          {b.getNamedAttr("name", b.getStringAttr(d.name)),
           b.getNamedAttr("devices", b.getI64IntegerAttr(d.numDevices))}));
    if (!configs.empty())
      module->getOperation()->setAttr(kDeviceConfigurationsAttr,
                                      b.getArrayAttr(configs));
  }

  std::set<std::string> initNames;
  for (const ::onnx::TensorProto &t : g.initializer())
    initNames.insert(t.name());
  SmallVector<Type> argTypes;
  SmallVector<std::string> argNames;
  SmallVector<std::pair<std::string, DenseElementsAttr>> frozen;
  for (const auto &[name, ci] : options.constInputs) {
    const ::onnx::ValueInfoProto *vi = nullptr;
    for (const ::onnx::ValueInfoProto &in : g.input())
      if (in.name() == name && !initNames.count(name))
        vi = &in;
    if (!vi)
      return error() << "--const-input names '" << name
                     << "', which is not an input of '" << path << "'",
             nullptr;
    if (options.inputShapes.count(name))
      return error() << "input '" << name
                     << "' is given both --const-input and --input-shape",
             nullptr;
    ::onnx::TensorProto t;
    t.set_name(name);
    t.set_data_type(ci.onnxType);
    for (int64_t d : ci.shape)
      t.add_dims(d);
    t.set_raw_data(std::string(ci.data.begin(), ci.data.end()));
    std::string err;
    DenseElementsAttr value = tensorToAttr(&ctx, t, err);
    if (!value)
      return error() << "--const-input " << name << " (" << ci.source
                     << "): " << err,
             nullptr;
    const ::onnx::TypeProto_Tensor &tt = vi->type().tensor_type();
    Type declared = onnx::onnxElementType(&ctx, tt.elem_type());
    auto bad = [&]() {
      return error() << "--const-input " << name << " (" << ci.source
                     << ") is " << value.getType() << ", the input is ";
    };
    if (declared != value.getElementType())
      return bad() << "of element type " << tt.elem_type(), nullptr;
    if (tt.has_shape()) {
      if (tt.shape().dim_size() != int(ci.shape.size()))
        return bad() << "of rank " << tt.shape().dim_size(), nullptr;
      for (int i = 0; i < tt.shape().dim_size(); ++i)
        if (tt.shape().dim(i).has_dim_value() &&
            tt.shape().dim(i).dim_value() != ci.shape[i])
          return bad() << "fixed to " << tt.shape().dim(i).dim_value()
                       << " in dimension " << i,
                 nullptr;
    }
    frozen.push_back({name, value});
  }
  for (const ::onnx::ValueInfoProto &vi : g.input()) {
    if (initNames.count(vi.name()) || options.constInputs.count(vi.name()))
      continue;
    FailureOr<RankedTensorType> t = valueType(vi, /*isInput=*/true);
    if (failed(t))
      return nullptr;
    argTypes.push_back(*t);
    argNames.push_back(vi.name());
  }
  // A decode step's past length at run time: where its entries go in the
  // caches (tpc-kv-cache writes them there).
  if (options.kvCacheLength > 0) {
    if (llvm::is_contained(argNames, "cache_position"))
      return error() << "--kv-cache: '" << path
                     << "' has an input named 'cache_position', the name "
                        "of the position input a decode engine adds",
             nullptr;
    argTypes.push_back(RankedTensorType::get({1}, b.getI64Type()));
    argNames.push_back("cache_position");
  }
  for (const auto &[name, shape] : options.inputShapes)
    if (!llvm::is_contained(argNames, name))
      return error() << "--input-shape names '" << name
                     << "', which is not an input of '" << path << "'",
             nullptr;

  b.setInsertionPointToEnd(module->getBody());
  auto func = b.create<func::FuncOp>(module->getLoc(), "main",
                                     b.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  for (auto [i, name] : llvm::enumerate(argNames)) {
    func.setArgAttr(i, "onnx.name", b.getStringAttr(name));
    values[name] = entry->getArgument(i);
    if (auto dims = kvPastDims.find(name); dims != kvPastDims.end())
      pastLength.setInputDims(entry->getArgument(i), dims->second);
  }
  if (options.kvCacheLength > 0)
    pastLength.setPosition(entry->getArguments().back());
  b.setInsertionPointToStart(entry);
  for (const auto &[name, value] : frozen)
    values[name] = b.create<onnx::ConstantOp>(
        NameLoc::get(b.getStringAttr(name),
                     FileLineColLoc::get(&ctx, path, 0, 0)),
        value.getType(), value);
  for (const ::onnx::TensorProto &t : g.initializer())
    if (failed(importInitializer(t)))
      return nullptr;
  for (auto [i, node] : llvm::enumerate(g.node()))
    if (failed(importNode(node, i)))
      return nullptr;

  SmallVector<Value> results;
  SmallVector<Attribute> outNames;
  for (const ::onnx::ValueInfoProto &vi : g.output()) {
    auto it = values.find(vi.name());
    if (it == values.end())
      return error() << "graph output '" << vi.name()
                     << "' is not produced by any node",
             nullptr;
    if (const Selection *s = selections.lookup(it->second))
      return error() << "graph output '" << vi.name()
                     << "' depends on which elements of NonZero node '"
                     << s->origin
                     << "' are nonzero, which only the run knows; tpc "
                        "computes NonZero densely and supports its results "
                        "only where a scatter (or add) puts the selected "
                        "rows back",
             nullptr;
    FailureOr<RankedTensorType> declared = valueType(vi, /*isInput=*/false);
    if (failed(declared))
      return nullptr;
    if (*declared && *declared != it->second.getType())
      return error() << "graph output '" << vi.name() << "' is declared as "
                     << *declared << " but computes "
                     << it->second.getType(),
             nullptr;
    results.push_back(it->second);
    outNames.push_back(b.getStringAttr(vi.name()));
  }
  b.create<func::ReturnOp>(module->getLoc(), results);
  func.setFunctionType(b.getFunctionType(argTypes, ValueRange(results).getTypes()));
  func->setAttr("onnx.output_names", b.getArrayAttr(outNames));
  if (failed(verify(*module)))
    return nullptr;
  // Fold what the node-by-node folding left (chains whose last link was
  // created before its operands became constant) and drop dead constants.
  PassManager pm(&ctx);
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (failed(pm.run(*module)))
    return nullptr;
  return module;
}

} // namespace

std::map<std::string, int64_t> inputIndexBounds(ModuleOp module) {
  std::map<std::string, int64_t> bounds;
  auto func = module.lookupSymbol<func::FuncOp>("main");
  if (!func)
    return bounds;
  for (BlockArgument arg : func.getArguments()) {
    auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                  "onnx.name");
    if (!name || !isa<IntegerType>(
                     cast<RankedTensorType>(arg.getType()).getElementType()))
      continue;
    SmallVector<Value> work{arg};
    int64_t bound = -1;
    while (!work.empty()) {
      Value v = work.pop_back_val();
      for (OpOperand &use : v.getUses()) {
        Operation *user = use.getOwner();
        if (isa<onnx::CastOp>(user)) {
          work.push_back(user->getResult(0));
          continue;
        }
        auto gather = dyn_cast<onnx::GatherOp>(user);
        if (!gather || use.getOperandNumber() != 1)
          continue;
        Operation *table = gather->getOperand(0).getDefiningOp();
        if (!isa_and_nonnull<onnx::WeightOp, onnx::ConstantOp>(table))
          continue;
        auto t = cast<RankedTensorType>(gather->getOperand(0).getType());
        int64_t axis = gather.getAxis() < 0 ? gather.getAxis() + t.getRank()
                                            : gather.getAxis();
        int64_t rows = t.getDimSize(axis);
        bound = bound < 0 ? rows : std::min(bound, rows);
      }
    }
    if (bound > 0)
      bounds[name.str()] = bound;
  }
  return bounds;
}

OwningOpRef<ModuleOp> importOnnxModel(MLIRContext &ctx, const std::string &path,
                                      const ImportOptions &options) {
  ctx.loadDialect<func::FuncDialect, onnx::ONNXDialect>();
  return GraphImporter(ctx, path, options).run();
}

} // namespace tpc
