//===- Support.cpp - Helpers shared by the CPU kernels --------------------===//
#include "kernels/cpu/Support.h"

#include <algorithm>
#include <sstream>

namespace tpc::cpu {

std::vector<int64_t> intsAttr(const Attrs &attrs, const std::string &name,
                              std::vector<int64_t> dflt) {
  const std::vector<int64_t> *v = attrs.getInts(name);
  return v ? *v : std::move(dflt);
}

} // namespace tpc::cpu
