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

const Codec16 &halfCodec() {
  static const Codec16 c = [] {
    Codec16 c;
    c.infBits = 0x7C00;
    for (uint32_t b = 0; b < 0x7C00; ++b)
      c.vals.push_back(refDecodeHalf(static_cast<uint16_t>(b)));
    c.vals.push_back(65536.0);
    return c;
  }();
  return c;
}

const Codec16 &bf16Codec() {
  static const Codec16 c = [] {
    Codec16 c;
    c.infBits = 0x7F80;
    for (uint32_t b = 0; b < 0x7F80; ++b)
      c.vals.push_back(refDecodeBFloat16(static_cast<uint16_t>(b)));
    c.vals.push_back(std::ldexp(1.0, 128));
    return c;
  }();
  return c;
}

template <class T> T toInt(double v) {
  if (std::isnan(v))
    return 0;
  return static_cast<T>(static_cast<int64_t>(std::trunc(v)));
}

} // namespace

double refDecodeHalf(uint16_t bits) {
  int e = (bits >> 10) & 0x1F;
  int m = bits & 0x3FF;
  double sign = (bits & 0x8000) ? -1.0 : 1.0;
  if (e == 31)
    return m ? std::nan("") : sign * INFINITY;
  if (e == 0)
    return sign * std::ldexp(m, -24);
  return sign * std::ldexp(1.0 + m / 1024.0, e - 15);
}

double refDecodeBFloat16(uint16_t bits) {
  int e = (bits >> 7) & 0xFF;
  int m = bits & 0x7F;
  double sign = (bits & 0x8000) ? -1.0 : 1.0;
  if (e == 255)
    return m ? std::nan("") : sign * INFINITY;
  if (e == 0)
    return sign * std::ldexp(m, -133);
  return sign * std::ldexp(1.0 + m / 128.0, e - 127);
}

uint16_t refEncodeHalf(double v) { return halfCodec().encode(v); }
uint16_t refEncodeBFloat16(double v) { return bf16Codec().encode(v); }

Tensor::Tensor(DType dtype, Shape shape) {
  desc.dtype = dtype;
  desc.shape = std::move(shape);
  bytes.assign(desc.bytes(), 0);
}

double Tensor::at(int64_t i) const {
  if (isStorageOnlyDType(desc.dtype))
    return get<uint8_t>(i); // the code, not its value
  switch (desc.dtype) {
  case DType::F32:
    return get<float>(i);
  case DType::F64:
    return get<double>(i);
  case DType::I64:
    return static_cast<double>(get<int64_t>(i));
  case DType::I32:
    return get<int32_t>(i);
  case DType::I8:
    return get<int8_t>(i);
  case DType::U8:
    return get<uint8_t>(i);
  case DType::I16:
    return get<int16_t>(i);
  case DType::U16:
    return get<uint16_t>(i);
  case DType::U32:
    return get<uint32_t>(i);
  case DType::U64:
    return static_cast<double>(get<uint64_t>(i));
  case DType::Bool:
    return get<uint8_t>(i) ? 1.0 : 0.0;
  case DType::F16:
    return refDecodeHalf(get<uint16_t>(i));
  case DType::BF16:
    return refDecodeBFloat16(get<uint16_t>(i));
  default: // the storage types, above
    break;
  }
  return 0;
}

void Tensor::set(int64_t i, double v) {
  if (isStorageOnlyDType(desc.dtype))
    return put<uint8_t>(i, toInt<uint8_t>(v)); // the code, not a value
  switch (desc.dtype) {
  case DType::F32:
    return put<float>(i, static_cast<float>(v));
  case DType::F64:
    return put<double>(i, v);
  case DType::I64:
    return put<int64_t>(i, toInt<int64_t>(v));
  case DType::I32:
    return put<int32_t>(i, toInt<int32_t>(v));
  case DType::I8:
    return put<int8_t>(i, toInt<int8_t>(v));
  case DType::U8:
    return put<uint8_t>(i, toInt<uint8_t>(v));
  case DType::I16:
    return put<int16_t>(i, toInt<int16_t>(v));
  case DType::U16:
    return put<uint16_t>(i, toInt<uint16_t>(v));
  case DType::U32:
    return put<uint32_t>(i, toInt<uint32_t>(v));
  case DType::U64:
    return put<uint64_t>(i, toInt<uint64_t>(v));
  case DType::Bool:
    return put<uint8_t>(i, v != 0 ? 1 : 0);
  case DType::F16:
    return put<uint16_t>(i, refEncodeHalf(v));
  case DType::BF16:
    return put<uint16_t>(i, refEncodeBFloat16(v));
  default: // the storage types, above
    break;
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

Attrs softmaxAttrs(int64_t axis) {
  Attrs a;
  a.setInt("axis", axis);
  return a;
}

Attrs modAttrs(int64_t fmod) {
  Attrs a;
  a.setInt("fmod", fmod);
  return a;
}

Attrs normAttrs(int64_t axis, double epsilon, int64_t rms) {
  Attrs a;
  a.setInt("axis", axis);
  a.setFloat("epsilon", epsilon);
  a.setInt("rms", rms);
  return a;
}

} // namespace tpc::cpu::test
