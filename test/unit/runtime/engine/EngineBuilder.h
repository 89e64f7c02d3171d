//===- EngineBuilder.h - Small engine folders for runtime tests -*- C++ -*-===//
//
// Writes engine folders the way `tpc compile` does (plans, safetensors
// shards, engine.json with real sizes and digests), from plans that a test
// spells out step by step, so that runtime tests need no compiler.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_TEST_UNIT_RUNTIME_ENGINE_ENGINEBUILDER_H
#define TPC_TEST_UNIT_RUNTIME_ENGINE_ENGINEBUILDER_H

#include "kernels/Types.h"
#include "runtime/format/plan.pb.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tpc::test {

plan::Attr intsAttr(const std::string &name, std::vector<int64_t> values);
plan::Attr floatAttr(const std::string &name, double value);
plan::Attr stringAttr(const std::string &name, const std::string &value);

/// One rank's plan and weights.
class RankBuilder {
public:
  RankBuilder(int rank, int worldSize);

  /// An arena buffer, placed after the previous ones (64-byte aligned).
  uint32_t arena(const std::string &name, DType dtype, Shape shape);
  /// A weight buffer backed by tensor `name` of the rank's safetensors file.
  uint32_t weight(const std::string &name, const std::vector<float> &values,
                  Shape shape);
  /// Adds a step.
  plan::Step &step(const std::string &kernel, std::vector<uint32_t> inputs,
                   std::vector<uint32_t> outputs,
                   std::vector<plan::Attr> attrs = {},
                   const std::string &node = "");
  void bindInput(const std::string &name, uint32_t buffer);
  void bindOutput(const std::string &name, uint32_t buffer);

  plan::Plan &plan() { return plan_; }
  /// The tensors written to the safetensors file; tests may alter them to
  /// disagree with the plan.
  struct Tensor {
    std::string name;
    TensorDesc desc;
    std::vector<uint8_t> bytes;
  };
  std::vector<Tensor> &tensors() { return tensors_; }

private:
  plan::Plan plan_;
  std::vector<Tensor> tensors_;
  uint64_t arenaEnd_ = 0;
};

class EngineBuilder {
public:
  explicit EngineBuilder(int tp);

  RankBuilder &rank(int r) { return ranks_[size_t(r)]; }
  int tp() const { return int(ranks_.size()); }
  void addInput(const std::string &name, const TensorDesc &desc);
  void addOutput(const std::string &name, const TensorDesc &desc);

  /// Writes the folder `dir` (created if needed). `editManifest`, when set,
  /// may change the engine.json text before it is written.
  Status write(const std::string &dir,
               const std::function<void(std::string &)> &editManifest = {});

private:
  std::vector<RankBuilder> ranks_;
  std::vector<std::pair<std::string, TensorDesc>> inputs_, outputs_;
};

/// Rewrites the sizes and digests in DIR/engine.json to match the files, so
/// that a test can plant a bad file that the manifest vouches for.
Status resealManifest(const std::string &dir);

/// Row-major float64 matrix product of an m x k and a k x n matrix.
std::vector<double> matmulRef(const std::vector<float> &a,
                              const std::vector<float> &b, int64_t m,
                              int64_t k, int64_t n);

/// Deterministic test values in [-1, 1).
std::vector<float> testValues(size_t n, uint32_t seed);

/// Flips one bit of the byte at `offset` (negative: from the end) of a file.
void flipByte(const std::string &path, int64_t offset);

} // namespace tpc::test

#endif // TPC_TEST_UNIT_RUNTIME_ENGINE_ENGINEBUILDER_H
