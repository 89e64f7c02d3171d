//===- Movement.h - Data-movement kernels -----------------------*- C++ -*-===//
//
// Kernels that move elements without looking at their values, so they work
// on any dtype by element size: strided copies (Transpose, Expand, Tile,
// Slice, Pad), Concat/Split, Gather/GatherElements/GatherND,
// ScatterND/ScatterElements and Trilu. The scatters' reductions are the
// exception: they combine values, so they go by dtype.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_CPU_MOVEMENT_H
#define TPC_KERNELS_CPU_MOVEMENT_H

#include "kernels/cpu/Support.h"

#include <vector>

namespace tpc::cpu {

/// One sliced axis, per ONNX Slice: negative starts/ends count from the end,
/// then both are clamped ([0, dim] for positive steps, [0, dim - 1] and
/// [-1, dim - 1] for negative ones), which also tames INT64_MIN/MAX.
struct AxisSlice {
  int64_t start = 0;
  int64_t size = 0;
  int64_t step = 1;
};

/// The slice of an axis of length `dim` that ONNX Slice takes for `start`,
/// `end` and `step` (step != 0). The CPU and CUDA Slice adapters share it.
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

/// On up to numThreads threads when there are enough bytes.
void stridedCopy(const StridedCopyParams &p, const void *in, void *out,
                 int numThreads = 1);

/// Builds StridedCopyParams for a walk of `shape` with the given element
/// strides and offsets.
Status makeStridedCopy(size_t elemSize, const Shape &shape,
                       std::vector<int64_t> outStrides, int64_t outOffset,
                       std::vector<int64_t> inStrides, int64_t inOffset,
                       StridedCopyParams &p);

/// Concat and Split see their operands as `outer` rows; operand i owns a
/// contiguous chunk of chunkBytes[i] in each row of the joined tensor.
struct ConcatParams {
  int64_t outer = 0;
  int64_t rowBytes = 0;
  std::vector<int64_t> chunkBytes;
};

/// Rows are copied on up to numThreads threads when there are enough bytes.
void concatKernel(const ConcatParams &p, const void *const *inputs, void *out,
                  int numThreads = 1);
/// Outputs that are nullptr (absent) are skipped.
void splitKernel(const ConcatParams &p, const void *in, void *const *outputs,
                 int numThreads = 1);

/// Gather along one axis: data is [outer, axisDim, inner], indices are
/// `numIndices` values, out is [outer, numIndices, inner].
struct GatherParams {
  int64_t outer = 0;
  int64_t axisDim = 0;
  int64_t numIndices = 0;
  int64_t innerBytes = 0;
  DType indexType = DType::I64;
};

/// Negative indices count from the end (ONNX); indices still out of range
/// produce zero rows instead of reading out of bounds.
void gatherKernel(const GatherParams &p, const void *data, const void *indices,
                  void *out);

/// GatherElements: out[i] = data[i with dim `axis` replaced by indices[i]].
struct GatherElementsParams {
  size_t elemSize = 4;
  DType indexType = DType::I64;
  int64_t axisDim = 0;
  int64_t axisStride = 0;
  /// Operands: 0 output and indices (dense), 1 data with the axis stride 0.
  StridedLayout<2> layout;
};

/// Same index rules as gatherKernel; out-of-range elements become zero.
void gatherElementsKernel(const GatherElementsParams &p, const void *data,
                          const void *indices, void *out);

/// GatherND: for each batch and each index tuple of depth `depth`, copies
/// the slice of data that the tuple addresses.
struct GatherNDParams {
  int64_t batch = 1;        // product of the batch_dims leading dims
  int64_t tuples = 0;       // index tuples per batch
  int64_t depth = 0;        // entries per tuple (indices.shape[-1])
  std::vector<int64_t> dims; // data dims the tuple indexes
  int64_t slicesPerBatch = 0; // product of `dims`
  int64_t sliceBytes = 0;   // bytes of one addressed slice
  DType indexType = DType::I64;
};

/// Same index rules as gatherKernel; an out-of-range tuple gives a zero slice.
void gatherNDKernel(const GatherNDParams &p, const void *data,
                    const void *indices, void *out);

/// How ScatterND combines an update u with the element d already there:
/// None writes u; Add d + u and Mul d * u (integers wrap); Max and Min
/// std::max(d, u) and std::min(d, u), as onnxruntime does (a NaN in d stays,
/// a NaN in u is dropped).
enum class ScatterReduction { None, Add, Mul, Max, Min };

/// ScatterND: out = data, then for each index tuple in order the slice it
/// addresses is combined with the next `sliceElems` elements of updates.
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

/// The params of ScatterND on inputs (data, indices, updates) and output
/// `out`, with attribute reduction ("none" by default). Checks every operand
/// and attribute; shared by the CPU and CUDA adapters.
Status makeScatterNDParams(const std::vector<TensorDesc> &in,
                           const std::vector<TensorDesc> &out,
                           const Attrs &attrs, ScatterNDParams &p);

/// Negative indices count from the end of their axis; a tuple still out of
/// range is skipped (its slice of out keeps data). With None, a duplicate
/// tuple's last slice wins. `out` may be `data`.
void scatterNDKernel(const ScatterNDParams &p, const void *data,
                     const void *indices, const void *updates, void *out);

/// ScatterElements: out = data, then for every element i of indices in
/// row-major order, out[i with dim `axis` replaced by indices[i]] is
/// combined with updates[i]. Two elements can address one output element
/// only if they lie on the same line along `axis`, so the kernel walks the
/// lines in any order and each line along the axis in order (the CUDA
/// kernel gives each line a thread): the result is that of the row-major
/// walk.
struct ScatterElementsParams {
  DType dtype = DType::F32;
  ScatterReduction reduction = ScatterReduction::None;
  int64_t numel = 0;     // elements of data and out
  DType indexType = DType::I64;
  int64_t lineLength = 0;  // indices.shape[axis]
  int64_t indexStride = 0; // element stride of indices along the axis
  int64_t axisDim = 0;     // data.shape[axis]
  int64_t axisStride = 0;  // element stride of data along the axis
  /// The lines: the indices' shape with the axis dim 1. Operands: 0
  /// indices and updates (dense), 1 data and out, at index 0 on the axis.
  StridedLayout<2> lines;
};

/// The params of ScatterElements on inputs (data, indices, updates) and
/// output `out`, with attributes axis (default 0) and reduction ("none").
/// Checks every operand and attribute; shared by the CPU and CUDA adapters.
Status makeScatterElementsParams(const std::vector<TensorDesc> &in,
                                 const std::vector<TensorDesc> &out,
                                 const Attrs &attrs, ScatterElementsParams &p);

/// Same index rules as scatterNDKernel: an element whose index is still out
/// of range is skipped; with None a duplicate's last update wins. `out` may
/// be `data`.
void scatterElementsKernel(const ScatterElementsParams &p, const void *data,
                           const void *indices, const void *updates,
                           void *out);

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

void triluKernel(const TriluParams &p, const void *in, void *out);

/// Fills `numel` elements of `elemSize` bytes with the pattern at `value`.
void fillKernel(size_t elemSize, int64_t numel, const void *value, void *out);

} // namespace tpc::cpu

#endif // TPC_KERNELS_CPU_MOVEMENT_H
