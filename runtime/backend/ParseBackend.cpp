//===- ParseBackend.cpp ---------------------------------------------------===//
#include "runtime/backend/Backend.h"

namespace tpc::runtime {

Status parseBackend(const std::string &text, Backend &out) {
  if (text == "cpu")
    out = Backend::Cpu;
  else if (text == "cuda")
    out = Backend::Cuda;
  else
    return Status::invalidArgument("--backend must be 'cpu' or 'cuda', got '" +
                                   text + "'");
  return Status::ok();
}

} // namespace tpc::runtime
