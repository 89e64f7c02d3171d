//===- Fused.cpp - Params of the fused kernels, for every backend ---------===//
#include "kernels/Fused.h"
#include "kernels/Checks.h"

#include <cmath>

namespace tpc {

namespace {

const std::initializer_list<DType> kFloats = {DType::F32, DType::F64,
                                              DType::F16, DType::BF16};

} // namespace

Status makeAttentionParams(const std::vector<TensorDesc> &in,
                           const std::vector<TensorDesc> &out,
                           const Attrs &attrs, AttentionParams &p) {
  TPC_RETURN_IF_ERROR(checkOperands(in, out, 3, 5, 1, 1));
  TPC_RETURN_IF_ERROR(checkDType(in[0], "input 0 (Q)", kFloats));
  static const char *names[] = {"Q", "K", "V"};
  for (int i = 0; i < 3; ++i) {
    const std::string what =
        "input " + std::to_string(i) + " (" + names[i] + ")";
    TPC_RETURN_IF_ERROR(checkSameDType(in[i], what, in[0], "input 0 (Q)"));
    if (in[i].shape.size() != 4)
      return Status::error(what +
                           " must have rank 4 [batch, heads, seq, dim], got " +
                           fmtShape(in[i].shape));
  }
  const Shape &q = in[0].shape, &k = in[1].shape, &v = in[2].shape;
  if (k[0] != q[0] || v[0] != q[0] || v[1] != k[1] || v[2] != k[2] ||
      k[3] != q[3])
    return Status::error("Q " + fmtShape(q) + ", K " + fmtShape(k) + " and V " +
                         fmtShape(v) + " do not agree");
  if (k[1] <= 0 || q[1] % k[1] != 0)
    return Status::error("kv heads (" + std::to_string(k[1]) +
                         ") must divide q heads (" + std::to_string(q[1]) +
                         ")");
  bool causal;
  TPC_RETURN_IF_ERROR(requireFlag(attrs, "is_causal", causal));
  p = AttentionParams();
  p.dtype = in[0].dtype;
  p.batch = q[0];
  p.qHeads = q[1];
  p.kvHeads = k[1];
  p.qLen = q[2];
  p.kvLen = k[2];
  p.headDim = q[3];
  p.vDim = v[3];
  p.scale = q[3] > 0 ? 1.0 / std::sqrt(double(q[3])) : 1.0;
  if (attrs.has("scale"))
    TPC_RETURN_IF_ERROR(requireFloat(attrs, "scale", p.scale));
  p.causal = causal;
  if (attrs.has("nan_to_zero"))
    TPC_RETURN_IF_ERROR(requireFlag(attrs, "nan_to_zero", p.nanToZero));
  // After V: the mask (bool or Q's dtype) and nonpad_kv_seqlen (int64), each
  // optional, in that order.
  size_t next = 3;
  if (in.size() > next && !isAbsent(in[next]) &&
      in[next].dtype != DType::I64) {
    const TensorDesc &m = in[next++];
    if (m.dtype == DType::Bool)
      p.mask = AttentionParams::Mask::Bool;
    else if (m.dtype == in[0].dtype)
      p.mask = AttentionParams::Mask::Float;
    else
      return Status::error("input 3 (attn_mask) must be bool or Q's dtype");
    const Shape full = {p.batch, p.qHeads, p.qLen, p.kvLen};
    Shape b;
    if (m.shape.size() > 4 || !broadcastShapes({m.shape, full}, b).isOk() ||
        b != full)
      return Status::error("input 3 (attn_mask) shape " + fmtShape(m.shape) +
                           " does not broadcast to " + fmtShape(full));
    const std::vector<int64_t> s = broadcastStrides(m.shape, full);
    for (int d = 0; d < 4; ++d)
      p.maskStrides[d] = s[size_t(d)];
  }
  if (in.size() > next && !isAbsent(in[next])) {
    const TensorDesc &n = in[next];
    const std::string what =
        "input " + std::to_string(next) + " (nonpad_kv_seqlen)";
    TPC_RETURN_IF_ERROR(checkDType(n, what, {DType::I64}));
    if (n.shape != Shape{p.batch})
      return Status::error(what + " shape " + fmtShape(n.shape) +
                           " is not [batch] = " + fmtShape({p.batch}));
    p.kvLengthsInput = int(next++);
  }
  if (next != in.size())
    return Status::error("input " + std::to_string(next) +
                         " must be the attn_mask (bool or Q's dtype) or "
                         "nonpad_kv_seqlen (int64), in that order");
  TPC_RETURN_IF_ERROR(
      checkSameDType(out[0], "output 0 (Y)", in[0], "input 0 (Q)"));
  return checkOutputShape(out[0], {p.batch, p.qHeads, p.qLen, p.vDim},
                          "output 0 (Y)");
}

Status makeSwiGLUParams(const std::vector<TensorDesc> &in,
                        const std::vector<TensorDesc> &out, SwiGLUParams &p) {
  TPC_RETURN_IF_ERROR(checkOperands(in, out, 2, 2, 1, 1));
  TPC_RETURN_IF_ERROR(checkDType(in[0], "input 0 (gate)", kFloats));
  TPC_RETURN_IF_ERROR(
      checkSameDType(in[1], "input 1 (up)", in[0], "input 0 (gate)"));
  if (in[1].shape != in[0].shape)
    return Status::error("input 1 (up) shape " + fmtShape(in[1].shape) +
                         " differs from input 0 (gate) shape " +
                         fmtShape(in[0].shape));
  TPC_RETURN_IF_ERROR(
      checkSameDType(out[0], "output 0", in[0], "input 0 (gate)"));
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], in[0].shape));
  p = SwiGLUParams{in[0].dtype, in[0].numel()};
  return Status::ok();
}

Status makeMatMulBiasParams(const std::vector<TensorDesc> &in,
                            const std::vector<TensorDesc> &out,
                            const Attrs &attrs, MatMulBiasParams &p) {
  TPC_RETURN_IF_ERROR(checkOperands(in, out, 3, 3, 1, 1));
  TPC_RETURN_IF_ERROR(checkDType(in[0], "input 0 (A)", kFloats));
  const Shape &a = in[0].shape, &b = in[1].shape;
  if (b.size() != 2 || a.size() < 2 || a.back() != b[0])
    return Status::error("MatMulBias takes A [..., K] and B [K, N], got " +
                         fmtShape(a) + " and " + fmtShape(b));
  TPC_RETURN_IF_ERROR(
      checkSameDType(in[1], "input 1 (B)", in[0], "input 0 (A)"));
  const int64_t n = b[1];
  TPC_RETURN_IF_ERROR(
      checkSameDType(in[2], "input 2 (Bias)", in[0], "input 0 (A)"));
  if (stripLeadingOnes(in[2].shape) != Shape{n})
    return Status::error("input 2 (Bias) shape " + fmtShape(in[2].shape) +
                         " is not one value per column of " +
                         std::to_string(n));
  Shape expected(a.begin(), a.end() - 1);
  expected.push_back(n);
  TPC_RETURN_IF_ERROR(checkSameDType(out[0], "output 0", in[0], "input 0 (A)"));
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], expected));
  std::string act;
  TPC_RETURN_IF_ERROR(requireString(attrs, "activation", act));
  static const std::pair<const char *, BiasActivation> kActs[] = {
      {"none", BiasActivation::None},
      {"relu", BiasActivation::Relu},
      {"gelu", BiasActivation::Gelu},
      {"gelu_tanh", BiasActivation::GeluTanh}};
  bool known = false;
  for (const auto &[name, value] : kActs)
    if (act == name) {
      p.activation = value;
      known = true;
    }
  if (!known)
    return Status::error("attribute activation must be none, relu, gelu or "
                         "gelu_tanh, got \"" +
                         act + "\"");
  p.dtype = in[0].dtype;
  p.n = n;
  p.k = b[0];
  p.rows = n ? out[0].numel() / n : product(a, 0, a.size() - 1);
  return Status::ok();
}

Status makeMatMulNBitsParams(const std::vector<TensorDesc> &in,
                             const std::vector<TensorDesc> &out,
                             const Attrs &attrs, MatMulNBitsParams &p) {
  TPC_RETURN_IF_ERROR(checkOperands(in, out, 3, 4, 1, 1));
  static const std::initializer_list<DType> k16and32 = {
      DType::F32, DType::F16, DType::BF16};
  TPC_RETURN_IF_ERROR(checkDType(in[0], "input 0 (A)", k16and32));
  TPC_RETURN_IF_ERROR(checkDType(in[1], "input 1 (B)", {DType::U8}));
  TPC_RETURN_IF_ERROR(checkDType(in[2], "input 2 (scales)", k16and32));
  int64_t bits = 0, blockSize = 0;
  TPC_RETURN_IF_ERROR(requireInt(attrs, "bits", bits));
  TPC_RETURN_IF_ERROR(requireInt(attrs, "block_size", blockSize));
  if (bits != 4 && bits != 8)
    return Status::error("attribute bits must be 4 or 8, got " +
                         std::to_string(bits));
  if (blockSize < 16 || blockSize > 256 || (blockSize & (blockSize - 1)))
    return Status::error("attribute block_size must be a power of two from "
                         "16 to 256, got " +
                         std::to_string(blockSize));
  const Shape &a = in[0].shape, &b = in[1].shape;
  const int64_t blob = blockSize * bits / 8;
  if (a.empty() || b.size() != 3 || b[2] != blob)
    return Status::error("MatMulNBits takes A [..., K] and B [N, blocks, " +
                         std::to_string(blob) + "], got " + fmtShape(a) +
                         " and " + fmtShape(b));
  p.dtype = in[0].dtype;
  p.k = a.back();
  p.n = b[0];
  p.blocks = b[1];
  p.bits = int(bits);
  p.blockSize = blockSize;
  if (p.blocks != (p.k + blockSize - 1) / blockSize)
    return Status::error("input 1 (B) has " + std::to_string(p.blocks) +
                         " blocks per column; K " + std::to_string(p.k) +
                         " in blocks of " + std::to_string(blockSize) +
                         " needs " +
                         std::to_string((p.k + blockSize - 1) / blockSize));
  if (in[2].numel() != p.n * p.blocks)
    return Status::error("input 2 (scales) " + in[2].str() + " must hold " +
                         std::to_string(p.n * p.blocks) +
                         " values (N x blocks)");
  p.scaleType = in[2].dtype;
  if (in.size() > 3 && !isAbsent(in[3])) {
    const TensorDesc &z = in[3];
    const int64_t packed = p.n * ((p.blocks * p.bits + 7) / 8);
    p.zeroType = z.dtype;
    if (z.dtype == DType::U8 && z.numel() == packed)
      p.zero = MatMulNBitsParams::Zero::Packed;
    else if (z.dtype != DType::U8 && z.numel() == p.n * p.blocks)
      p.zero = MatMulNBitsParams::Zero::PerBlock;
    else if (z.dtype != DType::U8 && z.numel() == 1)
      p.zero = MatMulNBitsParams::Zero::Scalar;
    else
      return Status::error(
          "input 3 (zero_points) " + z.str() + " must be " +
          std::to_string(packed) + " packed u8 codes, or " +
          std::to_string(p.n * p.blocks) + " or 1 float values");
    if (p.zero != MatMulNBitsParams::Zero::Packed)
      TPC_RETURN_IF_ERROR(checkDType(z, "input 3 (zero_points)", k16and32));
  }
  Shape expected(a.begin(), a.end() - 1);
  expected.push_back(p.n);
  TPC_RETURN_IF_ERROR(checkSameDType(out[0], "output 0", in[0], "input 0 (A)"));
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], expected));
  p.rows = product(a, 0, a.size() - 1);
  return Status::ok();
}

} // namespace tpc
