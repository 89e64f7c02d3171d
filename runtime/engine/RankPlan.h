//===- RankPlan.h - A rank's program, validated -----------------*- C++ -*-===//
//
// The runtime's own copy of a rankN.plan: the protobuf message converted to
// plain structs once, after every structural check of docs/engine-format.md
// passed. Nothing past the loader sees protobuf types, so the public headers
// stay free of generated code.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_ENGINE_RANKPLAN_H
#define TPC_RUNTIME_ENGINE_RANKPLAN_H

#include "kernels/Types.h"
#include "runtime/format/PlanFormat.h"
#include "runtime/format/SymExpr.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tpc::runtime {

enum class BufferKind { Arena, Weight, State };

struct PlanBuffer {
  uint32_t id = 0;
  BufferKind kind = BufferKind::Arena;
  TensorDesc desc;
  /// desc.bytes(), checked against overflow.
  uint64_t bytes = 0;
  /// Arena buffers: byte offset in the arena.
  uint64_t offset = 0;
  /// Weight buffers: the tensor's name in the safetensors file.
  std::string tensor;
  /// The ONNX value name, for messages; may be empty.
  std::string name;
  /// A shape that depends on the symbols: one expression per dimension of
  /// `desc` (which holds the shape at the symbols' maxima); empty when the
  /// shape is static.
  std::vector<SymExpr> dims;
  /// A weight whose tensor is the value at the maxima and whose value at
  /// smaller symbols is the tensor's leading block.
  bool leadingBlock = false;
  /// An integer weight whose elements follow the symbols: one expression
  /// per element (the tensor holds their values at the maxima).
  std::vector<SymExpr> values;

  bool symbolic() const { return !dims.empty() || !values.empty(); }
};

/// Whether two non-empty arena buffers share any byte.
bool arenaOverlap(const PlanBuffer &a, const PlanBuffer &b);

enum class StepKind { Kernel, AllReduce, AllGather, ReduceScatter };

struct PlanStep {
  StepKind kind = StepKind::Kernel;
  std::string kernel;
  std::vector<uint32_t> inputs;
  std::vector<uint32_t> outputs;
  Attrs attrs;
  /// The ONNX node the step comes from; may be empty.
  std::string node;
  /// Integer attributes whose values depend on the symbols: an expression
  /// per entry (the values in `attrs` are those at the maxima).
  std::map<std::string, std::vector<SymExpr>> intExprs;
  /// Whether an operand's shape or an attribute depends on the symbols:
  /// the step is prepared again for each new set of values.
  bool symbolic = false;
};

struct PlanBinding {
  std::string name;
  uint32_t buffer = 0;
};

/// A rank's arena and the figures that reports set beside it.
struct ArenaSizes {
  /// The arena as planned.
  uint64_t bytes = 0;
  /// The sum of every arena buffer's bytes: the arena without reuse.
  uint64_t unplannedBytes = 0;
  /// The most arena bytes live at any one step: no arena can be smaller
  /// (0 when the plan predates the figure).
  uint64_t lowerBoundBytes = 0;
};

struct RankPlan {
  uint32_t formatVersion = 0;
  int rank = 0;
  int worldSize = 1;
  ArenaSizes arena;
  /// Indexed by buffer id (ids are dense).
  std::vector<PlanBuffer> buffers;
  std::vector<PlanStep> steps;
  std::vector<PlanBinding> inputs;
  std::vector<PlanBinding> outputs;
  std::string producer;
  /// Run-time dimensions (empty for a static plan). Shapes, offsets and
  /// the arena are those at the symbols' maxima.
  std::vector<PlanSymbol> symbols;

  /// Every symbol at its maximum.
  SymbolValues maxValues() const;
  /// Buffer `id`'s description at `values`.
  TensorDesc descAt(uint32_t id, const SymbolValues &values) const;
  /// Step `index`'s attributes at `values`.
  Attrs attrsAt(size_t index, const SymbolValues &values) const;
  /// "sequence=12, batch=1".
  std::string describeValues(const SymbolValues &values) const;

  /// "step 3 (MatMul, node '/h.0/mlp/MatMul')".
  std::string describeStep(size_t index) const;
  /// "buffer 7 ('x', f32[1x16])".
  std::string describeBuffer(uint32_t id) const;
};

/// Parses a serialized tpc.plan.Plan and checks its structure: a supported
/// version, dense and unique buffer ids, valid dtypes, non-negative shapes,
/// arena buffers inside the arena, weight buffers naming a tensor, steps
/// and bindings referring to existing buffers, outputs of steps and
/// bindings placed in the arena. Kernels, weights and collective attributes
/// are checked later, by the loader. Messages start with `fileName`.
Status parseRankPlan(const void *data, size_t size, const std::string &fileName,
                     RankPlan &out);

/// The collective a kernel name denotes, or StepKind::Kernel.
StepKind stepKindOf(const std::string &kernel);

} // namespace tpc::runtime

#endif // TPC_RUNTIME_ENGINE_RANKPLAN_H
