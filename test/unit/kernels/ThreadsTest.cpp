//===- ThreadsTest.cpp - Kernels give the same bytes on any thread count --===//
//
// The kernels that split their rows or elements over threads
// (ExecContext::numThreads) must write every element, and exactly what one
// thread writes: each row is computed the same way whichever thread takes
// it. Sizes are large enough to pass the parallel threshold, with row
// counts that do and do not divide by the thread count, and fewer rows
// than threads.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"

#include "kernels/cpu/Parallel.h"

#include <atomic>

namespace tpc::cpu::test {
namespace {

/// Runs `name` on 1 thread and on 2 and 3, and expects identical bytes in
/// every output (the runner poisons outputs, so an unwritten element
/// differs).
void expectThreadInvariant(const std::string &name,
                           const std::vector<const Tensor *> &in,
                           const std::vector<TensorDesc> &outDescs,
                           const Attrs &attrs = {}) {
  SCOPED_TRACE(name);
  auto run = [&](int threads) {
    std::vector<Tensor> outs;
    for (const TensorDesc &d : outDescs)
      outs.emplace_back(d.dtype, d.shape);
    Status st = runKernel(name, in, outs, attrs, threads);
    EXPECT_TRUE(st.isOk()) << st.message();
    return outs;
  };
  const std::vector<Tensor> one = run(1);
  for (int threads : {2, 3}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    const std::vector<Tensor> many = run(threads);
    ASSERT_EQ(one.size(), many.size());
    for (size_t o = 0; o < one.size(); ++o)
      EXPECT_TRUE(one[o].bytes == many[o].bytes) << "output " << o;
  }
}

const Shape kShapes[] = {{301, 384}, {2, 70000}, {1, 1, 200000}};

TEST(Threads, UnaryKernels) {
  for (const Shape &s : kShapes)
    for (DType t : {DType::F32, DType::BF16}) {
      Tensor x = randomTensor(t, s, 1, -6, 6);
      for (const char *op : {"Erf", "Sigmoid", "Tanh", "Exp", "Neg"})
        expectThreadInvariant(op, {&x}, {x.desc});
      expectThreadInvariant("IsNaN", {&x}, {{DType::Bool, s}});
    }
}

TEST(Threads, NormsAndSoftmax) {
  for (const Shape &s : kShapes) {
    const int64_t n = s.back();
    Tensor x = randomTensor(DType::F32, s, 2), y = randomTensor(DType::F32, s, 3);
    Tensor g = randomTensor(DType::F32, {n}, 4), b = randomTensor(DType::F32, {n}, 5);
    Shape stat = s;
    stat.back() = 1;
    expectThreadInvariant("LayerNormalization", {&x, &g, &b},
                          {x.desc, {DType::F32, stat}, {DType::F32, stat}},
                          normAttrs());
    expectThreadInvariant("RMSNormalization", {&x, &g}, {x.desc}, normAttrs());
    expectThreadInvariant("AddNormalization", {&x, &y, &g, &b},
                          {x.desc, x.desc}, normAttrs());
    expectThreadInvariant("AddNormalization", {&x, &y, &g}, {x.desc, x.desc},
                          normAttrs(-1, 1e-5, 1));
    expectThreadInvariant("Softmax", {&x}, {x.desc}, softmaxAttrs());
    expectThreadInvariant("LogSoftmax", {&x}, {x.desc}, softmaxAttrs());
    expectThreadInvariant("Softmax", {&x}, {x.desc}, softmaxAttrs(0));
  }
}

TEST(Threads, SplitAndConcat) {
  for (const Shape &s : kShapes) {
    const int axis = int(s.size()) - 1;
    const int64_t n = s.back();
    Tensor x = randomTensor(DType::F32, s, 6);
    Attrs a;
    a.setInt("axis", axis);
    a.setInts("split", {n / 3, n - n / 3 - 7, 7});
    std::vector<TensorDesc> parts;
    std::vector<Tensor> pieces;
    for (int64_t size : {n / 3, n - n / 3 - 7, int64_t(7)}) {
      Shape p = s;
      p.back() = size;
      parts.push_back({DType::F32, p});
      pieces.push_back(randomTensor(DType::F32, p, 7 + size));
    }
    expectThreadInvariant("Split", {&x}, parts, a);
    Attrs c;
    c.setInt("axis", axis);
    expectThreadInvariant("Concat", {&pieces[0], &pieces[1], &pieces[2]},
                          {x.desc}, c);
  }
}

TEST(Threads, StridedCopies) {
  // The head transposes around attention (contiguous rows), a transpose of
  // the last two dims (square tiles), a strided slice and a broadcast.
  Tensor x = randomTensor(DType::F32, {3, 128, 12, 64}, 13);
  Attrs heads;
  heads.setInts("perm", {0, 2, 1, 3});
  expectThreadInvariant("Transpose", {&x}, {{DType::F32, {3, 12, 128, 64}}},
                        heads);
  Attrs last;
  last.setInts("perm", {0, 1, 3, 2});
  expectThreadInvariant("Transpose", {&x}, {{DType::F32, {3, 128, 64, 12}}},
                        last);
  Tensor m = randomTensor(DType::F32, {5, 300, 301}, 14);
  Attrs swap;
  swap.setInts("perm", {0, 2, 1});
  expectThreadInvariant("Transpose", {&m}, {{DType::F32, {5, 301, 300}}},
                        swap);
  Tensor row = randomTensor(DType::F32, {1, 1, 4096}, 15);
  Attrs shape;
  shape.setInts("shape", {7, 33, 4096});
  expectThreadInvariant("Expand", {&row}, {{DType::F32, {7, 33, 4096}}},
                        shape);
}

TEST(Threads, MatMulBiasEpilogue) {
  Tensor a = randomTensor(DType::F32, {2, 67, 96}, 8);
  Tensor w = randomTensor(DType::F32, {96, 300}, 9);
  Tensor bias = randomTensor(DType::F32, {300}, 10);
  for (const char *act : {"none", "relu", "gelu", "gelu_tanh"}) {
    Attrs attrs;
    attrs.setString("activation", act);
    expectThreadInvariant("MatMulBias", {&a, &w, &bias},
                          {{DType::F32, {2, 67, 300}}}, attrs);
  }
  Tensor c = randomTensor(DType::F32, {67, 300}, 11);
  Tensor a2 = randomTensor(DType::F32, {67, 96}, 12);
  const Attrs beta = gemmAttrs(0, 0, 1.0, 0.5);
  for (const Tensor *cc : {&bias, &c})
    expectThreadInvariant("Gemm", {&a2, &w, cc}, {{DType::F32, {67, 300}}},
                          beta);
}

TEST(Parallel, ForCoversTheRangeOnce) {
  for (int threads : {1, 2, 3, 8})
    for (int64_t n : {int64_t(0), int64_t(1), int64_t(5), int64_t(100000)})
      for (int64_t bytes : {int64_t(1), int64_t(4096)}) {
        std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
        parallelFor(threads, n, bytes, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i)
            hits[size_t(i)]++;
        });
        for (int64_t i = 0; i < n; ++i)
          ASSERT_EQ(hits[size_t(i)].load(), 1) << "n " << n << " at " << i;
      }
}

} // namespace
} // namespace tpc::cpu::test
