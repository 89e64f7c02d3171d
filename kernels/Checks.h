//===- Checks.h - Operand checks shared by every backend ---------*- C++ -*-===//
//
// The checks a kernel's params builder makes of the operand descriptions
// it is given: arity, dtypes, shapes. Backend-neutral, so that the CPU and
// the CUDA kernels of a family validate through the same builder.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_CHECKS_H
#define TPC_KERNELS_CHECKS_H

#include "kernels/Types.h"

#include <initializer_list>
#include <string>
#include <vector>

namespace tpc {

/// Description of an absent optional operand.
inline TensorDesc absentOperand() { return TensorDesc{DType::F32, {-1}}; }
inline bool isAbsent(const TensorDesc &d) {
  return d.shape.size() == 1 && d.shape[0] == -1;
}

/// Formats a shape for messages: "[2, 3]", "[]" for a scalar.
std::string fmtShape(const Shape &shape);

/// Maps an ONNX axis in [-rank, rank) to [0, rank); `attr` names it in the
/// error message.
Status normalizeAxis(int64_t axis, int64_t rank, const std::string &attr,
                     int64_t &out);

/// `s` without its leading unit dims.
Shape stripLeadingOnes(const Shape &s);

/// Product of shape[begin, end).
int64_t product(const Shape &shape, size_t begin, size_t end);

/// Checks the number of inputs and outputs, then that every present
/// description has non-negative dims and a valid dtype. An input past
/// `minIn` may be absent (see isAbsent) only where the kernel allows
/// optional inputs.
Status checkOperands(const std::vector<TensorDesc> &inputs,
                     const std::vector<TensorDesc> &outputs, size_t minIn,
                     size_t maxIn, size_t minOut, size_t maxOut);

/// Checks that `d` has one of `allowed`; `what` names the operand
/// ("input 0", "output 0") in the message.
Status checkDType(const TensorDesc &d, const std::string &what,
                  std::initializer_list<DType> allowed);

/// Checks that two operands share a dtype.
Status checkSameDType(const TensorDesc &a, const std::string &whatA,
                      const TensorDesc &b, const std::string &whatB);

/// Checks that the output shape given by the compiler equals the one implied
/// by the inputs and attributes.
Status checkOutputShape(const TensorDesc &out, const Shape &expected,
                        const std::string &what = "output 0");

/// The float attribute `name`, which the plan must carry: the compiler
/// writes every attribute with its default, so a missing one is a plan
/// written by something else and an error rather than a guess.
Status requireFloat(const Attrs &attrs, const std::string &name, double &out);
/// As requireFloat, for an integer attribute.
Status requireInt(const Attrs &attrs, const std::string &name, int64_t &out);
/// As requireInt, for an attribute that must be 0 or 1.
Status requireFlag(const Attrs &attrs, const std::string &name, bool &out);
/// As requireFloat, for an integer list attribute (of any length).
Status requireInts(const Attrs &attrs, const std::string &name,
                   std::vector<int64_t> &out);
/// As requireFloat, for a string attribute.
Status requireString(const Attrs &attrs, const std::string &name,
                     std::string &out);

} // namespace tpc

#endif // TPC_KERNELS_CHECKS_H
