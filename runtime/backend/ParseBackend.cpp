//===- ParseBackend.cpp ---------------------------------------------------===//
#include "runtime/backend/Backend.h"

#include "runtime/support/ParseChoice.h"

namespace tpc::runtime {

Status parseBackend(const std::string &text, Backend &out) {
  return parseChoice("--backend", text,
                     {{"cpu", Backend::Cpu}, {"cuda", Backend::Cuda}}, out);
}

} // namespace tpc::runtime
