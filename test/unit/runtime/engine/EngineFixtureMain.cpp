//===- EngineFixtureMain.cpp - Engine folders for command-line tests ------===//
//
//   tpc_engine_fixture make DIR     writes DIR/engine (tp 2, unequal column
//                                   split), DIR/x.npy and DIR/expected.npy
//   tpc_engine_fixture compare A B  exit 0 if two f32 .npy files agree
//                                   to 1e-5
//
//===----------------------------------------------------------------------===//
#include "TestEngines.h"

#include "runtime/io/Npy.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

using namespace tpc;
using namespace tpc::test;

static int make(const std::string &dir) {
  MlpCase c = mlpCase(3, 4, 5);
  std::vector<float> expected(c.expected.begin(), c.expected.end());
  Status st = columnParallelEngine(c, 3).write(dir + "/engine");
  if (st)
    st = writeNpy(dir + "/x.npy", c.xDesc(), c.x.data());
  if (st)
    st = writeNpy(dir + "/expected.npy", c.yDesc(), expected.data());
  if (!st) {
    std::fprintf(stderr, "make: %s\n", st.message().c_str());
    return 1;
  }
  return 0;
}

static int compare(const std::string &a, const std::string &b) {
  NpyArray x, y;
  Status st = readNpy(a, x);
  if (st)
    st = readNpy(b, y);
  if (!st) {
    std::fprintf(stderr, "compare: %s\n", st.message().c_str());
    return 1;
  }
  if (x.desc.str() != y.desc.str() || x.desc.dtype != DType::F32) {
    std::fprintf(stderr, "compare: %s vs %s\n", x.desc.str().c_str(),
                 y.desc.str().c_str());
    return 1;
  }
  const float *p = reinterpret_cast<const float *>(x.data.data());
  const float *q = reinterpret_cast<const float *>(y.data.data());
  for (int64_t i = 0; i < x.desc.numel(); ++i)
    if (std::fabs(double(p[i]) - double(q[i])) > 1e-5) {
      std::fprintf(stderr, "compare: element %lld: %g vs %g\n", (long long)i,
                   double(p[i]), double(q[i]));
      return 1;
    }
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && !std::strcmp(argv[1], "make"))
    return make(argv[2]);
  if (argc == 4 && !std::strcmp(argv[1], "compare"))
    return compare(argv[2], argv[3]);
  std::fprintf(stderr, "usage: %s make DIR | compare A.npy B.npy\n", argv[0]);
  return 2;
}
