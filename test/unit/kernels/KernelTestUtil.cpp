//===- KernelTestUtil.cpp - Helpers for CPU kernel tests ------------------===//
#include "KernelTestUtil.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>

namespace tpc::cpu::test {
namespace {

/// Positive non-NaN values of a 16-bit float format, indexed by bit pattern
/// up to and including infinity, which is entered as the power of two it
/// would be with an unbounded exponent: rounding against that value is how
/// IEEE overflow to infinity behaves.
struct Codec16 {
  std::vector<double> vals;
  uint16_t infBits;

  uint16_t encode(double v) const {
    if (std::isnan(v))
      return infBits == 0x7C00 ? 0x7E00 : 0x7FC0; // a quiet NaN
    uint16_t sign = std::signbit(v) ? 0x8000 : 0;
    double a = std::fabs(v);
    if (a >= vals[infBits])
      return sign | infBits;
    // Largest pattern with value <= a; then round to nearest, ties to even.
    auto it = std::upper_bound(vals.begin(), vals.end(), a);
    size_t lo = static_cast<size_t>(it - vals.begin()) - 1;
    if (vals[lo] == a)
      return static_cast<uint16_t>(sign | lo);
    double mid = (vals[lo] + vals[lo + 1]) / 2; // exact in double
    size_t pick = a < mid ? lo : a > mid ? lo + 1 : (lo % 2 ? lo + 1 : lo);
    return static_cast<uint16_t>(sign | pick);
  }
};

/// The codec of a 16-bit float format decoded by `decode`, whose infinity
/// pattern `infBits` stands for `infValue` (the power of two it would be).
Codec16 makeCodec(uint16_t infBits, double infValue,
                  double (*decode)(uint16_t)) {
  Codec16 c;
  c.infBits = infBits;
  for (uint32_t b = 0; b < infBits; ++b)
    c.vals.push_back(decode(static_cast<uint16_t>(b)));
  c.vals.push_back(infValue);
  return c;
}

const Codec16 &halfCodec() {
  static const Codec16 c = makeCodec(0x7C00, 65536.0, refDecodeHalf);
  return c;
}

const Codec16 &bf16Codec() {
  static const Codec16 c =
      makeCodec(0x7F80, std::ldexp(1.0, 128), refDecodeBFloat16);
  return c;
}

/// Whether `t` is one of the signed integer types.
bool isSignedInt(DType t) {
  return t == DType::I8 || t == DType::I16 || t == DType::I32 ||
         t == DType::I64;
}

/// Decodes a 16-bit float with `mbits` mantissa bits and exponent `bias`
/// (binary16: 10 and 15; bfloat16: 7 and 127).
double refDecode16(uint16_t bits, int mbits, int bias) {
  const int eAll = (1 << (15 - mbits)) - 1; // all exponent bits set
  int e = (bits >> mbits) & eAll;
  int m = bits & ((1 << mbits) - 1);
  double sign = (bits & 0x8000) ? -1.0 : 1.0;
  if (e == eAll)
    return m ? std::nan("") : sign * INFINITY;
  if (e == 0)
    return sign * std::ldexp(m, 1 - bias - mbits);
  return sign * std::ldexp(1.0 + std::ldexp(m, -mbits), e - bias);
}

template <class T> T toInt(double v) {
  if (std::isnan(v))
    return 0;
  return static_cast<T>(static_cast<int64_t>(std::trunc(v)));
}

} // namespace

double refDecodeHalf(uint16_t bits) { return refDecode16(bits, 10, 15); }
double refDecodeBFloat16(uint16_t bits) { return refDecode16(bits, 7, 127); }

uint16_t refEncodeHalf(double v) { return halfCodec().encode(v); }
uint16_t refEncodeBFloat16(double v) { return bf16Codec().encode(v); }

Tensor::Tensor(DType dtype, Shape shape) {
  desc.dtype = dtype;
  desc.shape = std::move(shape);
  bytes.assign(desc.bytes(), 0);
}

double Tensor::at(int64_t i) const {
  switch (desc.dtype) {
  case DType::F32:
    return get<float>(i);
  case DType::F64:
    return get<double>(i);
  case DType::Bool:
    return get<uint8_t>(i) ? 1.0 : 0.0;
  case DType::F16:
    return refDecodeHalf(get<uint16_t>(i));
  case DType::BF16:
    return refDecodeBFloat16(get<uint16_t>(i));
  default: { // an integer (little-endian), or a storage type's code (a byte)
    const size_t n = dtypeSize(desc.dtype);
    uint64_t u = 0;
    std::memcpy(&u, bytes.data() + i * n, n);
    if (!isSignedInt(desc.dtype))
      return static_cast<double>(u);
    const int unused = 64 - 8 * static_cast<int>(n); // sign-extend
    return static_cast<double>(static_cast<int64_t>(u << unused) >> unused);
  }
  }
}

void Tensor::set(int64_t i, double v) {
  switch (desc.dtype) {
  case DType::F32:
    return put<float>(i, static_cast<float>(v));
  case DType::F64:
    return put<double>(i, v);
  case DType::Bool:
    return put<uint8_t>(i, v != 0 ? 1 : 0);
  case DType::F16:
    return put<uint16_t>(i, refEncodeHalf(v));
  case DType::BF16:
    return put<uint16_t>(i, refEncodeBFloat16(v));
  default: { // the low bytes of the truncated integer: it wraps
    const size_t n = dtypeSize(desc.dtype);
    const int64_t x = toInt<int64_t>(v);
    std::memcpy(bytes.data() + i * n, &x, n);
  }
  }
}

std::vector<double> Tensor::values() const {
  std::vector<double> v(numel());
  for (int64_t i = 0; i < numel(); ++i)
    v[i] = at(i);
  return v;
}

Tensor makeTensor(DType dtype, Shape shape, const std::vector<double> &values) {
  Tensor t(dtype, std::move(shape));
  EXPECT_EQ(static_cast<int64_t>(values.size()), t.numel());
  for (int64_t i = 0; i < t.numel() && i < static_cast<int64_t>(values.size());
       ++i)
    t.set(i, values[i]);
  return t;
}

Tensor randomTensor(DType dtype, Shape shape, uint64_t seed, double lo,
                    double hi) {
  Tensor t(dtype, std::move(shape));
  std::mt19937_64 rng(seed);
  const bool isInt = dtype == DType::I64 || dtype == DType::I32 ||
                     dtype == DType::I8 || dtype == DType::U8;
  std::uniform_real_distribution<double> real(lo, hi);
  std::uniform_int_distribution<int64_t> integer(
      static_cast<int64_t>(std::ceil(lo)),
      static_cast<int64_t>(std::floor(hi)));
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (isStorageOnlyDType(dtype))
      // Every code of the type, NaNs and infinities included; lo and hi
      // do not apply.
      t.put<uint8_t>(i, uint8_t(rng() & ((1u << dtypeBits(dtype)) - 1)));
    else if (dtype == DType::Bool)
      t.set(i, static_cast<double>(rng() & 1));
    else if (isInt)
      t.set(i, static_cast<double>(integer(rng)));
    else
      t.set(i, real(rng));
  }
  return t;
}

Status prepareOnly(const std::string &name, const std::vector<TensorDesc> &in,
                   const std::vector<TensorDesc> &out, const Attrs &attrs) {
  const KernelDef *def = lookupKernel(name);
  if (!def)
    return Status::error("no kernel named " + name);
  std::unique_ptr<PreparedKernel> k;
  Status s = def->prepare(in, out, attrs, k);
  if (s.isOk() && !k)
    return Status::error("prepare succeeded without a kernel");
  return s;
}

Status runKernel(const std::string &name,
                 const std::vector<const Tensor *> &inputs,
                 std::vector<Tensor> &outputs, const Attrs &attrs,
                 int numThreads) {
  const KernelDef *def = lookupKernel(name);
  if (!def)
    return Status::error("no kernel named " + name);
  std::vector<TensorDesc> inDescs, outDescs;
  std::vector<const void *> inPtrs;
  for (const Tensor *t : inputs) {
    inDescs.push_back(t ? t->desc : absentOperand());
    inPtrs.push_back(t ? t->data() : nullptr);
  }
  std::vector<void *> outPtrs;
  for (Tensor &t : outputs) {
    outDescs.push_back(t.desc);
    t.bytes.assign(isAbsent(t.desc) ? 0 : t.desc.bytes(), 0xCD);
  }
  for (Tensor &t : outputs)
    outPtrs.push_back(isAbsent(t.desc) ? nullptr : t.data());
  std::unique_ptr<PreparedKernel> k;
  TPC_RETURN_IF_ERROR(def->prepare(inDescs, outDescs, attrs, k));
  ExecContext ctx;
  ctx.numThreads = numThreads;
  k->run(inPtrs.data(), outPtrs.data(), ctx);
  return k->runStatus();
}

Tensor runOne(const std::string &name, const std::vector<const Tensor *> &in,
              DType outType, const Shape &outShape, const Attrs &attrs) {
  std::vector<Tensor> outs;
  outs.emplace_back(outType, outShape);
  Status s = runKernel(name, in, outs, attrs);
  EXPECT_TRUE(s.isOk()) << name << ": " << s.message();
  return outs[0];
}

double storedAs(DType t, double v) {
  Tensor x(t, {});
  x.set(0, v);
  return x.at(0);
}

std::vector<double> refMatMul(const Tensor &a, const Tensor &b, Shape &out) {
  // A 1-D A is one row and a 1-D B one column; the result drops that dim.
  const Shape &ra = a.desc.shape, &rb = b.desc.shape;
  const Shape sa = ra.size() == 1 ? Shape{1, ra[0]} : ra;
  const Shape sb = rb.size() == 1 ? Shape{rb[0], 1} : rb;
  const int64_t m = sa[sa.size() - 2], k = sa.back(), n = sb.back();
  Shape ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
  const size_t rank = std::max(ba.size(), bb.size());
  Shape batch(rank, 1);
  for (size_t i = 0; i < ba.size(); ++i)
    batch[rank - ba.size() + i] = ba[i];
  for (size_t i = 0; i < bb.size(); ++i)
    if (bb[i] != 1)
      batch[rank - bb.size() + i] = bb[i];
  out = batch;
  if (ra.size() != 1)
    out.push_back(m);
  if (rb.size() != 1)
    out.push_back(n);
  std::vector<double> r;
  for (int64_t bi = 0; bi < numElements(batch); ++bi) {
    std::vector<int64_t> idx = unravel(bi, batch);
    int64_t oa = broadcastIndex(idx, ba) * m * k;
    int64_t ob = broadcastIndex(idx, bb) * k * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p)
          s += a.at(oa + i * k + p) * b.at(ob + p * n + j);
        r.push_back(s);
      }
  }
  return r;
}

std::vector<int64_t> unravel(int64_t flat, const Shape &shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  return idx;
}

int64_t ravel(const std::vector<int64_t> &idx, const Shape &shape) {
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    flat = flat * shape[d] + idx[d];
  return flat;
}

int64_t broadcastIndex(const std::vector<int64_t> &outIdx, const Shape &in) {
  size_t off = outIdx.size() - in.size();
  int64_t flat = 0;
  for (size_t d = 0; d < in.size(); ++d)
    flat = flat * in[d] + (in[d] == 1 ? 0 : outIdx[off + d]);
  return flat;
}

void expectClose(const Tensor &actual, const std::vector<double> &expected,
                 double rtol, double atol) {
  ASSERT_EQ(actual.numel(), static_cast<int64_t>(expected.size()));
  int failures = 0;
  for (int64_t i = 0; i < actual.numel(); ++i) {
    double a = actual.at(i), e = expected[i];
    bool ok = (std::isnan(a) && std::isnan(e)) || a == e ||
              std::fabs(a - e) <= atol + rtol * std::fabs(e);
    if (!ok && ++failures <= 5)
      ADD_FAILURE() << "element " << i << " of " << actual.desc.str()
                    << ": got " << a << ", expected " << e;
  }
  EXPECT_EQ(failures, 0) << "mismatching elements";
}

void expectRunError(const std::string &name,
                    const std::vector<const Tensor *> &in, DType outType,
                    const Shape &outShape, const std::string &fragment,
                    const Attrs &attrs) {
  std::vector<Tensor> outs;
  outs.emplace_back(outType, outShape);
  std::vector<TensorDesc> descs;
  for (const Tensor *t : in)
    descs.push_back(t->desc);
  ASSERT_TRUE(prepareOnly(name, descs, {outs[0].desc}, attrs).isOk());
  Status st = runKernel(name, in, outs, attrs);
  ASSERT_FALSE(st.isOk()) << name << " ran without an error";
  EXPECT_NE(st.message().find(fragment), std::string::npos) << st.message();
}

void expectPrepareErrors(const std::vector<PrepareErrorCase> &cases) {
  for (size_t i = 0; i < cases.size(); ++i) {
    const PrepareErrorCase &c = cases[i];
    SCOPED_TRACE(std::string(c.name) + " case " + std::to_string(i) +
                 " (expecting '" + c.needle + "')");
    EXPECT_PREPARE_ERROR(prepareOnly(c.name, c.in, c.out, c.attrs), c.needle);
  }
}

Attrs ints(const char *k, std::vector<int64_t> v) {
  Attrs a;
  a.setInts(k, std::move(v));
  return a;
}

Attrs gemmAttrs(int64_t transA, int64_t transB, double alpha, double beta) {
  Attrs a;
  a.setInt("transA", transA);
  a.setInt("transB", transB);
  a.setFloat("alpha", alpha);
  a.setFloat("beta", beta);
  return a;
}

Attrs softmaxAttrs(int64_t axis) { return ints("axis", {axis}); }

Attrs modAttrs(int64_t fmod) { return ints("fmod", {fmod}); }

Attrs normAttrs(int64_t axis, double epsilon, int64_t rms) {
  Attrs a = ints("axis", {axis});
  a.setFloat("epsilon", epsilon);
  a.setInt("rms", rms);
  return a;
}

} // namespace tpc::cpu::test
