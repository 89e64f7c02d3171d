//===- GraphIo.cpp - An engine's graph inputs and outputs, bound ----------===//
#include "runtime/engine/GraphIo.h"

namespace tpc::runtime {

Status GraphIo::bind(const RankEngine &engine, std::string who) {
  who_ = std::move(who);
  inputs_.clear();
  outputs_.clear();
  hasRun_ = false;
  // engine.json order, which RankEngine checked the plan's bindings against.
  for (const TensorSpec &spec : engine.manifest().inputs) {
    const PlanBinding *bound = engine.findInput(spec.name);
    if (!bound)
      return Status::internal(who_ + "no plan buffer for input '" + spec.name +
                              "'");
    inputs_.push_back({spec.name, bound->buffer, spec.desc, nullptr});
  }
  for (const TensorSpec &spec : engine.manifest().outputs) {
    const PlanBinding *bound = engine.findOutput(spec.name);
    if (!bound)
      return Status::internal(who_ + "no plan buffer for output '" + spec.name +
                              "'");
    Output o{spec.name, bound->buffer, spec.desc, {}};
    o.data.resize(spec.desc.bytes());
    outputs_.push_back(std::move(o));
  }
  return Status::ok();
}

Status GraphIo::setInput(const std::string &name, const TensorDesc &desc,
                         const void *data) {
  for (Input &in : inputs_) {
    if (in.name != name)
      continue;
    if (desc.dtype != in.desc.dtype)
      return Status::invalidArgument(
          who_ + "input '" + name + "' has dtype " + dtypeName(desc.dtype) +
          ", but the engine expects " + dtypeName(in.desc.dtype) + " (" +
          in.desc.str() + ")");
    if (desc.shape != in.desc.shape)
      return Status::invalidArgument(
          who_ + "input '" + name + "' has shape " + shapeToString(desc.shape) +
          ", but the engine was compiled for " + shapeToString(in.desc.shape) +
          " (" + in.desc.str() + ")");
    if (!data && in.desc.bytes() != 0)
      return Status::invalidArgument(who_ + "input '" + name + "' has no data");
    in.data = data;
    return Status::ok();
  }
  std::string names;
  for (const Input &in : inputs_)
    names += (names.empty() ? "'" : ", '") + in.name + "'";
  return Status::notFound(who_ + "the engine has no input '" + name +
                          "' (its inputs: " + (names.empty() ? "none" : names) +
                          ")");
}

Status GraphIo::checkInputsSet() const {
  std::string missing;
  for (const Input &in : inputs_)
    if (!in.data && in.desc.bytes() != 0)
      missing += (missing.empty() ? "'" : ", '") + in.name + "'";
  if (missing.empty())
    return Status::ok();
  return Status::invalidArgument(who_ + "input " + missing +
                                 " not set before run");
}

bool GraphIo::output(const std::string &name, TensorDesc &desc,
                     const void *&data) const {
  for (const Output &o : outputs_) {
    if (o.name != name)
      continue;
    desc = o.desc;
    data = !hasRun_ ? nullptr : o.external ? o.external : o.data.data();
    return true;
  }
  return false;
}

std::vector<std::string> GraphIo::outputNames() const {
  std::vector<std::string> names;
  for (const Output &o : outputs_)
    names.push_back(o.name);
  return names;
}

} // namespace tpc::runtime
