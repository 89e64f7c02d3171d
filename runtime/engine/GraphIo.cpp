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
    Input in{spec.name, bound->buffer, spec.desc, nullptr, {}, {}};
    in.dims = engine.plan().buffers[bound->buffer].dims;
    if (!in.dims.empty())
      in.maxShape = spec.desc.shape;
    inputs_.push_back(std::move(in));
  }
  symbols_ = engine.plan().symbols;
  for (const TensorSpec &spec : engine.manifest().outputs) {
    const PlanBinding *bound = engine.findOutput(spec.name);
    if (!bound)
      return Status::internal(who_ + "no plan buffer for output '" + spec.name +
                              "'");
    Output o{spec.name, bound->buffer, spec.desc, {}, nullptr, {}};
    o.dims = engine.plan().buffers[bound->buffer].dims;
    o.data.resize(spec.desc.bytes());
    outputs_.push_back(std::move(o));
  }
  return Status::ok();
}

Status GraphIo::checkSymbolicShape(const Input &in, const Shape &shape) const {
  auto expected = [&] {
    std::string s = "[";
    for (size_t d = 0; d < in.dims.size(); ++d)
      s += (d ? ", " : "") + in.dims[d].str(symbols_);
    return s + "]";
  };
  if (shape.size() != in.dims.size())
    return Status::invalidArgument(
        who_ + "input '" + in.name + "' has shape " + shapeToString(shape) +
        ", but the engine takes " + expected() + " (rank " +
        std::to_string(in.dims.size()) + ")");
  for (size_t d = 0; d < in.dims.size(); ++d) {
    int k = in.dims[d].plainSymbol();
    if (in.dims[d].isConstant() && shape[d] != in.maxShape[d])
      return Status::invalidArgument(
          who_ + "input '" + in.name + "' has shape " + shapeToString(shape) +
          ", but the engine takes " + expected() + ": dimension " +
          std::to_string(d) + " must be " + std::to_string(in.maxShape[d]));
    if (k >= 0 && (shape[d] < symbols_[size_t(k)].min ||
                   shape[d] > symbols_[size_t(k)].max))
      return Status::invalidArgument(
          who_ + "input '" + in.name + "' has shape " + shapeToString(shape) +
          ", but the engine takes " + expected() + " with " +
          symbols_[size_t(k)].name + " in " +
          std::to_string(symbols_[size_t(k)].min) + ".." +
          std::to_string(symbols_[size_t(k)].max) +
          " (the range it was compiled for)");
  }
  return Status::ok();
}

Status GraphIo::resolveSymbols(const RankPlan &plan,
                               SymbolValues &values) const {
  values.assign(plan.symbols.size(), -1);
  std::vector<std::string> from(plan.symbols.size());
  for (const Input &in : inputs_)
    for (size_t d = 0; d < in.dims.size(); ++d) {
      int k = in.dims[d].plainSymbol();
      if (k < 0)
        continue;
      std::string here =
          "input '" + in.name + "' dimension " + std::to_string(d);
      if (values[size_t(k)] < 0) {
        values[size_t(k)] = in.desc.shape[d];
        from[size_t(k)] = here;
      } else if (values[size_t(k)] != in.desc.shape[d]) {
        return Status::invalidArgument(
            who_ + here + " is " + std::to_string(in.desc.shape[d]) + ", but " +
            from[size_t(k)] + " sets " + plan.symbols[size_t(k)].name + " to " +
            std::to_string(values[size_t(k)]) +
            ": both are that one run-time dimension");
      }
    }
  for (size_t k = 0; k < values.size(); ++k)
    if (values[k] < 0)
      return Status::internal(who_ +
                              "no graph input gives the run-time "
                              "dimension '" +
                              plan.symbols[k].name + "'");
  for (const Input &in : inputs_)
    for (size_t d = 0; d < in.dims.size(); ++d) {
      int64_t want = 0;
      if (!in.dims[d].eval(values, want) || want != in.desc.shape[d])
        return Status::invalidArgument(
            who_ + "input '" + in.name + "' has shape " +
            shapeToString(in.desc.shape) + ", but at " +
            plan.describeValues(values) + " dimension " + std::to_string(d) +
            " must be " + in.dims[d].str(plan.symbols) + " = " +
            std::to_string(want));
    }
  return Status::ok();
}

void GraphIo::shapeOutputs(const RankPlan &plan, const SymbolValues &values) {
  for (Output &o : outputs_)
    if (!o.dims.empty())
      o.desc.shape = plan.descAt(o.buffer, values).shape;
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
    if (!in.dims.empty()) {
      TPC_RETURN_IF_ERROR(checkSymbolicShape(in, desc.shape));
      if (!data && desc.bytes() != 0)
        return Status::invalidArgument(who_ + "input '" + name +
                                       "' has no data");
      in.desc.shape = desc.shape;
      in.data = data;
      return Status::ok();
    }
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
