//===- Movement.h - The data-movement kernels, for every backend -*- C++
//-*-===//
//
// Kernels that move elements without looking at their values, so they work
// on any dtype by element size: strided copies (Transpose, Expand, Tile,
// Slice, Pad), Concat/Split, Gather/GatherElements/GatherND,
// ScatterND/ScatterElements, Trilu and the KV-cache write. The scatters'
// reductions are the exception: they combine values, so they go by dtype.
//
// This header holds the params both backends run from and their builders,
// which validate the operand descriptions and read the attributes. Every
// attribute comes from the plan, which carries each with the onnx dialect's
// default (ODS): a kernel states no default of its own.
//
// Kernels that read indices follow ONNX: a negative index counts from the
// end of its axis, and an index outside [-dim, dim) fails the run. The
// kernels never read or write out of bounds on such an index: gathers give
// zeros there, scatters skip it, and the backend reports the run failed.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_MOVEMENT_H
#define TPC_KERNELS_MOVEMENT_H

#include "kernels/Family.h"
#include "kernels/Layout.h"

#include <vector>

namespace tpc {

// X(Name, summary): the movement kernels, in the order both kernel tables
// list them; Name is the kernel and its MovementOp.
#define TPC_MOVEMENT_KERNELS(X)                                                \
  X(Transpose, "permute dims (attr perm)")                                     \
  X(Expand, "broadcast to the output shape")                                   \
  X(Tile, "repeat along each dim (attr repeats)")                              \
  X(Slice, "strided window (attrs starts, ends, axes, steps)")                 \
  X(Pad, "constant padding (attrs pads, value; negative pads crop)")           \
  X(Concat, "join inputs along attr axis")                                     \
  X(Split, "cut along attr axis into attr split sizes")                        \
  X(Gather, "take slices along attr axis by index tensor")                     \
  X(GatherElements, "take elements along attr axis by index")                  \
  X(GatherND, "take slices addressed by index tuples (attr batch_dims)")       \
  X(ScatterND,                                                                 \
    "copy of data with slices written at index tuples (attr reduction)")       \
  X(ScatterElements,                                                           \
    "copy of data with updates written along attr axis at indices (attr "      \
    "reduction)")                                                              \
  X(Trilu, "keep the upper or lower triangle (attrs upper, k)")                \
  X(CacheWrite, "write new KV-cache entries at a position, in place")

TPC_DECLARE_KERNEL_FAMILY(MovementOp, kMovementKernels,
                          TPC_MOVEMENT_KERNELS);

/// The name `op` has in the kernel tables.
constexpr const char *movementName(MovementOp op) {
  for (const auto &k : kMovementKernels)
    if (k.op == op)
      return k.name;
  return "";
}

/// One sliced axis, per ONNX Slice: negative starts/ends count from the end,
/// then both are clamped ([0, dim] for positive steps, [0, dim - 1] and
/// [-1, dim - 1] for negative ones), which also tames INT64_MIN/MAX.
struct AxisSlice {
  int64_t start = 0;
  int64_t size = 0;
  int64_t step = 1;
};

/// The slice of an axis of length `dim` that ONNX Slice takes for `start`,
/// `end` and `step` (step != 0).
AxisSlice sliceAxis(int64_t dim, int64_t start, int64_t end, int64_t step);

/// Copies a strided view of the input to a strided view of the output.
/// Transpose permutes input strides, Expand and Tile use stride 0 for
/// repeated dims, Slice scales strides by its steps (possibly negative) and
/// Pad writes into an interior window of the output.
struct StridedCopyParams {
  size_t elemSize = 4;
  /// Element offsets of the first element of each view.
  int64_t outOffset = 0;
  int64_t inOffset = 0;
  /// Operands: 0 output, 1 input.
  StridedLayout<2> layout;
  /// Set when the last two dims swap contiguity (output rows contiguous,
  /// input columns contiguous), as in a transpose of the trailing dims: the
  /// copy then goes by square tiles so that both sides stay in cache.
  /// `blocks` walks the dims before those two, with a unit trailing dim.
  bool tiled = false;
  StridedLayout<2> blocks;
};

/// Builds StridedCopyParams for a walk of `shape` with the given element
/// strides and offsets.
Status makeStridedCopy(size_t elemSize, const Shape &shape,
                       std::vector<int64_t> outStrides, int64_t outOffset,
                       std::vector<int64_t> inStrides, int64_t inOffset,
                       StridedCopyParams &p);

/// Transpose (data -> transposed); attribute perm, a permutation of the
/// input's dims.
Status makeTransposeParams(const std::vector<TensorDesc> &in,
                           const std::vector<TensorDesc> &out,
                           const Attrs &attrs, StridedCopyParams &p);

/// Expand (input, optional shape input -> output): the input broadcast to
/// the output's shape, which the compiler resolved from the shape input
/// (ONNX broadcasts both ways: a 1 there keeps the input's dim).
Status makeExpandParams(const std::vector<TensorDesc> &in,
                        const std::vector<TensorDesc> &out, const Attrs &attrs,
                        StridedCopyParams &p);

/// Tile (input, optional repeats input -> output); attribute repeats, one
/// non-negative entry per dim.
Status makeTileParams(const std::vector<TensorDesc> &in,
                      const std::vector<TensorDesc> &out, const Attrs &attrs,
                      StridedCopyParams &p);

/// Slice (data and up to four inputs the compiler resolved to attributes
/// -> output); attributes starts, ends, axes and steps of one length.
Status makeSliceParams(const std::vector<TensorDesc> &in,
                       const std::vector<TensorDesc> &out, const Attrs &attrs,
                       StridedCopyParams &p);

/// The builder of a movement op that is one strided copy (Transpose,
/// Expand, Tile, Slice); nullptr for the others.
using StridedCopyBuilder = Status (*)(const std::vector<TensorDesc> &,
                                      const std::vector<TensorDesc> &,
                                      const Attrs &, StridedCopyParams &);
StridedCopyBuilder stridedCopyBuilder(MovementOp op);

/// Pad in constant mode: the output is filled with `value` converted to the
/// element type, then the overlap of input and output is copied (a negative
/// pad crops).
struct PadParams {
  StridedCopyParams copy;
  double value = 0;
  int64_t numel = 0;
};

/// Pad (data and up to three inputs the compiler resolved to attributes ->
/// output); attributes pads (begins of every dim, then ends) and value.
Status makePadParams(const std::vector<TensorDesc> &in,
                     const std::vector<TensorDesc> &out, const Attrs &attrs,
                     PadParams &p);

/// Concat and Split see their operands as `outer` rows; operand i owns a
/// contiguous chunk of chunkBytes[i] in each row of the joined tensor.
struct ConcatParams {
  int64_t outer = 0;
  int64_t rowBytes = 0;
  std::vector<int64_t> chunkBytes;
};

/// Concat (inputs -> output); attribute axis.
Status makeConcatParams(const std::vector<TensorDesc> &in,
                        const std::vector<TensorDesc> &out, const Attrs &attrs,
                        ConcatParams &p);

/// Split (input, optional split input -> outputs, some possibly absent);
/// attributes axis and split (one size per output, summing to the axis).
Status makeSplitParams(const std::vector<TensorDesc> &in,
                       const std::vector<TensorDesc> &out, const Attrs &attrs,
                       ConcatParams &p);

/// Gather along one axis: data is [outer, axisDim, inner], indices are
/// `numIndices` values, out is [outer, numIndices, inner].
struct GatherParams {
  int64_t outer = 0;
  int64_t axisDim = 0;
  int64_t numIndices = 0;
  int64_t innerBytes = 0;
  DType indexType = DType::I64;
};

/// Gather (data, indices -> output); attribute axis.
Status makeGatherParams(const std::vector<TensorDesc> &in,
                        const std::vector<TensorDesc> &out, const Attrs &attrs,
                        GatherParams &p);

/// GatherElements: out[i] = data[i with dim `axis` replaced by indices[i]].
struct GatherElementsParams {
  size_t elemSize = 4;
  DType indexType = DType::I64;
  int64_t axisDim = 0;
  int64_t axisStride = 0;
  /// Operands: 0 output and indices (dense), 1 data with the axis stride 0.
  StridedLayout<2> layout;
};

/// GatherElements (data, indices -> output); attribute axis.
Status makeGatherElementsParams(const std::vector<TensorDesc> &in,
                                const std::vector<TensorDesc> &out,
                                const Attrs &attrs, GatherElementsParams &p);

/// GatherND: for each batch and each index tuple of depth `depth`, copies
/// the slice of data that the tuple addresses.
struct GatherNDParams {
  int64_t batch = 1;          // product of the batch_dims leading dims
  int64_t tuples = 0;         // index tuples per batch
  int64_t depth = 0;          // entries per tuple (indices.shape[-1])
  std::vector<int64_t> dims;  // data dims the tuple indexes
  int64_t slicesPerBatch = 0; // product of `dims`
  int64_t sliceBytes = 0;     // bytes of one addressed slice
  DType indexType = DType::I64;
};

/// GatherND (data, indices -> output); attribute batch_dims.
Status makeGatherNDParams(const std::vector<TensorDesc> &in,
                          const std::vector<TensorDesc> &out,
                          const Attrs &attrs, GatherNDParams &p);

/// How a scatter combines an update u with the element d already there:
/// None writes u; Add d + u and Mul d * u (integers wrap); Max and Min
/// std::max(d, u) and std::min(d, u), as onnxruntime does (a NaN in d stays,
/// a NaN in u is dropped).
enum class ScatterReduction { None, Add, Mul, Max, Min };

/// ScatterND: out = data, then for each index tuple in order the slice it
/// addresses is combined with the next `sliceElems` elements of updates.
/// With None, a duplicate tuple's last slice wins.
struct ScatterNDParams {
  DType dtype = DType::F32;
  ScatterReduction reduction = ScatterReduction::None;
  int64_t numel = 0;         // elements of data and out
  int64_t tuples = 0;        // index tuples
  int64_t depth = 0;         // entries per tuple (indices.shape[-1])
  std::vector<int64_t> dims; // data dims the tuple indexes
  int64_t sliceElems = 0;    // elements of one addressed slice
  DType indexType = DType::I64;
};

/// ScatterND (data, indices, updates -> output); attribute reduction.
Status makeScatterNDParams(const std::vector<TensorDesc> &in,
                           const std::vector<TensorDesc> &out,
                           const Attrs &attrs, ScatterNDParams &p);

/// ScatterElements: out = data, then for every element i of indices in
/// row-major order, out[i with dim `axis` replaced by indices[i]] is
/// combined with updates[i]. Two elements can address one output element
/// only if they lie on the same line along `axis`, so a kernel may walk the
/// lines in any order as long as it walks each line in order: the result is
/// that of the row-major walk.
struct ScatterElementsParams {
  DType dtype = DType::F32;
  ScatterReduction reduction = ScatterReduction::None;
  int64_t numel = 0; // elements of data and out
  DType indexType = DType::I64;
  int64_t lineLength = 0;  // indices.shape[axis]
  int64_t indexStride = 0; // element stride of indices along the axis
  int64_t axisDim = 0;     // data.shape[axis]
  int64_t axisStride = 0;  // element stride of data along the axis
  /// The lines: the indices' shape with the axis dim 1. Operands: 0
  /// indices and updates (dense), 1 data and out, at index 0 on the axis.
  StridedLayout<2> lines;
};

/// ScatterElements (data, indices, updates -> output); attributes axis and
/// reduction.
Status makeScatterElementsParams(const std::vector<TensorDesc> &in,
                                 const std::vector<TensorDesc> &out,
                                 const Attrs &attrs, ScatterElementsParams &p);

/// Trilu on [batch, rows, cols]: keeps elements with col - row >= k (upper)
/// or col - row <= k (lower) and zeroes the rest.
struct TriluParams {
  size_t elemSize = 4;
  int64_t batch = 0;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t k = 0;
  bool upper = true;
};

/// Trilu (input, optional k input the compiler resolved -> output);
/// attributes upper and k.
Status makeTriluParams(const std::vector<TensorDesc> &in,
                       const std::vector<TensorDesc> &out, const Attrs &attrs,
                       TriluParams &p);

/// CacheWrite(state, update, position): the state is [outer, length, inner]
/// around `axis`, the update [outer, n, inner]; the update's rows go to
/// positions [position, position + n), which must lie in [0, length - n].
/// The output is the state's own buffer.
struct CacheWriteParams {
  int64_t outer = 0;
  int64_t length = 0;
  int64_t n = 0;
  int64_t rowBytes = 0;
};

/// CacheWrite (state, update, one-element i64 position -> state); attribute
/// axis.
Status makeCacheWriteParams(const std::vector<TensorDesc> &in,
                            const std::vector<TensorDesc> &out,
                            const Attrs &attrs, CacheWriteParams &p);

} // namespace tpc

#endif // TPC_KERNELS_MOVEMENT_H
