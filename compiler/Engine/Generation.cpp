//===- Generation.cpp - What a decode engine's inputs mean ----------------===//
#include "compiler/Engine/Generation.h"
#include "compiler/Dialect/Plan/IR/PlanOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace tpc {

llvm::json::Object
describeGeneration(ModuleOp module,
                   const std::map<std::string, int64_t> &indexBounds,
                   std::string &error) {
  auto kv = module->getAttrOfType<DictionaryAttr>("onnx.kv_cache");
  func::FuncOp func;
  for (auto f : module.getOps<func::FuncOp>())
    if (!f.isExternal()) {
      func = f;
      break;
    }
  if (!kv || !func) {
    error = "the module has no KV cache (run tpc-kv-cache)";
    return {};
  }
  int64_t length = kv.getAs<IntegerAttr>("length").getInt();
  std::string position = kv.getAs<StringAttr>("position").str();
  // The logits: the one output left once the presents are state.
  auto outNames = func->getAttrOfType<ArrayAttr>("onnx.output_names");
  FunctionType ft = func.getFunctionType();
  if (!outNames || outNames.size() != 1 || ft.getNumResults() != 1) {
    error = "a decode engine must have one output (the logits) besides the "
            "KV cache; this one has " +
            std::to_string(ft.getNumResults());
    return {};
  }
  // The last new token's logits (tpc-last-token-logits).
  auto logitsT = dyn_cast<RankedTensorType>(ft.getResult(0));
  if (!logitsT || logitsT.getRank() != 3 || logitsT.getDimSize(1) != 1 ||
      !logitsT.getElementType().isF32()) {
    error = "the output of a decode engine must be f32 logits [batch, 1, "
            "vocabulary] (the last new token's)";
    return {};
  }
  int64_t vocab = logitsT.getShape().back();
  int64_t batch = logitsT.getDimSize(0);
  // The new tokens of a forward: one, or a prompt's at once (a run-time
  // count), the second dim of the ids, the [batch, T] input indexing the
  // vocabulary.
  int64_t newTokens = 1;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    auto t = cast<RankedTensorType>(func.getArgument(i).getType());
    auto name = func.getArgAttrOfType<StringAttr>(i, "onnx.name");
    auto bound = name ? indexBounds.find(name.str()) : indexBounds.end();
    if (t.getRank() == 2 && bound != indexBounds.end() &&
        bound->second == vocab) {
      newTokens = t.getDimSize(1);
      break;
    }
  }
  std::string ids, mask, positions;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    std::string name =
        func.getArgAttrOfType<StringAttr>(i, "onnx.name").str();
    if (name == position)
      continue;
    auto t = cast<RankedTensorType>(func.getArgument(i).getType());
    auto bound = indexBounds.find(name);
    bool oneStep = t.getRank() == 2 && t.getDimSize(1) == newTokens;
    if (oneStep && bound != indexBounds.end() && bound->second == vocab &&
        ids.empty()) {
      ids = name;
    } else if (t.getRank() == 2 && t.getDimSize(1) == length &&
               mask.empty()) {
      mask = name;
    } else if (oneStep && isa<IntegerType>(t.getElementType()) &&
               positions.empty()) {
      positions = name;
    } else {
      std::string n = std::to_string(newTokens);
      error = "cannot tell what input '" + name +
              "' of the decode step is (token ids [batch, " + n +
              "] indexing the vocabulary, an attention mask [batch, " +
              std::to_string(length) + "] or position ids [batch, " + n + "])";
      return {};
    }
  }
  if (ids.empty()) {
    error = "no input of the decode step takes token ids ([batch, " +
            std::to_string(newTokens) +
            "], "
            "looked up in a table of " +
            std::to_string(vocab) + " rows, the logits' vocabulary)";
    return {};
  }
  llvm::json::Array pairs;
  for (auto p : kv.getAs<ArrayAttr>("pairs").getAsRange<ArrayAttr>())
    pairs.push_back(llvm::json::Array{cast<StringAttr>(p[0]).str(),
                                      cast<StringAttr>(p[1]).str()});
  // Each rank's cache: its states' bytes (kv heads split or replicated)
  // and their element type.
  llvm::json::Array rankBytes;
  std::string cacheType;
  for (auto f : module.getOps<func::FuncOp>()) {
    if (f.isExternal())
      continue;
    int64_t bytes = 0;
    f.walk([&](plan::StateOp st) {
      auto t = cast<RankedTensorType>(st.getType());
      bytes += t.getNumElements() * t.getElementTypeBitWidth() / 8;
      Type elem = t.getElementType();
      cacheType = elem.isF32()    ? "fp32"
                  : elem.isBF16() ? "bf16"
                  : elem.isF16()  ? "fp16"
                                  : "other";
    });
    rankBytes.push_back(bytes);
  }
  llvm::json::Object g{{"kv_cache_length", length},
                       {"kv_cache_bytes_per_rank", std::move(rankBytes)},
                       {"kv_cache_dtype", cacheType},
                       {"batch", batch},
                       {"vocab", vocab},
                       {"ids_input", ids},
                       {"position_input", position},
                       {"logits_output", cast<StringAttr>(outNames[0]).str()},
                       {"cache_pairs", std::move(pairs)}};
  if (!mask.empty())
    g["mask_input"] = mask;
  if (!positions.empty())
    g["positions_input"] = positions;
  return g;
}

} // namespace tpc
