//===- AttentionParts.h - Pieces shared by the attention importers -*- C++ -*-===//
//
// The standard Attention / RotaryEmbedding (opset 23) and ONNX Runtime's
// GroupQueryAttention are imported as the same onnx ops, so sharding and
// the fusion passes treat them alike.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_COMPILER_IMPORTER_ATTENTIONPARTS_H
#define TPC_COMPILER_IMPORTER_ATTENTIONPARTS_H

#include "compiler/Importer/Emitter.h"

namespace tpc {

/// [B, S, heads * d] -> [B, heads, S, d].
mlir::Value toHeads(Emitter &e, mlir::Value v, int64_t heads);

/// Grouped kv heads [B, kv, T, d] repeated for their q heads:
/// [B, qHeads, T, d] as [h0, h0, h1, h1, ...].
mlir::Value repeatKVHeads(Emitter &e, mlir::Value x, int64_t qHeads);

/// Rotates the first `rot` dims of each head of x [B, S, heads, d] by the
/// per-position caches cos, sin [B or 1, S, rot / 2], as halves (x1 = the
/// first half, x2 = the second) or as interleaved pairs; the other dims pass
/// through.
mlir::Value rotateHeads(Emitter &e, mlir::Value x, mlir::Value cos,
                        mlir::Value sin, int64_t rot, bool interleaved);

/// The scores Q K^T * scale of q [B, heads, S, d] and k [B, heads, T, d],
/// soft-capped as softcap * tanh(scores / softcap) when softcap > 0.
mlir::Value attentionScores(Emitter &e, mlir::Value q, mlir::Value k,
                            float scale, float softcap);

} // namespace tpc

#endif
