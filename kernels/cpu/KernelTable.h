//===- KernelTable.h - Per-family kernel registration -----------*- C++ -*-===//
//
// Each kernel family's file appends its KernelDefs to the table that
// Registry.cpp sorts once, with adapters that build the family's params
// (kernels/<Family>.h) and bind them into a kernel. Internal to the CPU
// kernel library.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_CPU_KERNELTABLE_H
#define TPC_KERNELS_CPU_KERNELTABLE_H

#include "kernels/Family.h"
#include "kernels/cpu/Registry.h"
#include "kernels/cpu/Support.h"

#include <memory>
#include <tuple>
#include <type_traits>
#include <vector>

namespace tpc::cpu {

using KernelTable = std::vector<KernelDef>;

/// The families, in the order Registry.cpp adds them: each defines
/// `void add<Family>Kernels(KernelTable &)`.
#define TPC_CPU_KERNEL_FAMILIES(X)                                             \
  X(Binary) X(Unary) X(Copy) X(Movement) X(Reduce) X(Norm) X(MatMul) X(Fused)

#define TPC_DECLARE_ADD_KERNELS(Family)                                        \
  void add##Family##Kernels(KernelTable &);
TPC_CPU_KERNEL_FAMILIES(TPC_DECLARE_ADD_KERNELS)
#undef TPC_DECLARE_ADD_KERNELS

/// The operand descriptions a prepare() receives.
using Operands = std::vector<TensorDesc>;

/// A kernel's prepare(), as the table holds it.
using PrepareFn = decltype(KernelDef::prepare);

/// Appends `List` as addListed does, marking every kernel it adds
/// elementwise (KernelDef::elementwise): the memory planner may run them in
/// place.
template <const auto &List, class AdapterAt>
void addElementwise(KernelTable &table, AdapterAt adapterAt) {
  const size_t first = table.size();
  addListed<List>(table, adapterAt);
  for (size_t i = first; i < table.size(); ++i)
    table[i].elementwise = true;
}

/// The kernel that calls `Run(p, inputs, outputs, ctx)` with its copy of
/// `p`: Run is a function of the params, called directly.
template <auto Run, class Params>
std::unique_ptr<PreparedKernel> bindRun(const Params &p) {
  return makeKernel([p](const void *const *i, void *const *o,
                        const ExecContext &ctx) { Run(p, i, o, ctx); });
}

namespace detail {
/// The params a builder `Status (*)(..., Params &)` fills.
template <class Build> struct BuiltParams;
template <class... Args> struct BuiltParams<Status (*)(Args...)> {
  using type = std::remove_reference_t<
      std::tuple_element_t<sizeof...(Args) - 1, std::tuple<Args...>>>;
};
} // namespace detail

/// The params that builder `Build` of kernels/<Family>.h fills.
template <auto Build>
using BuiltParamsOf = typename detail::BuiltParams<decltype(Build)>::type;

/// The adapter of a kernel whose params come from one builder of
/// kernels/<Family>.h: `Build(lead..., in, out, attrs, p)`, or
/// `Build(lead..., in, out, p)` for a builder that reads no attribute.
/// `Bind(p, in)` then makes the kernel.
template <auto Build, auto Bind, auto... Lead>
Status prepareBound(const Operands &in, const Operands &out, const Attrs &attrs,
                    std::unique_ptr<PreparedKernel> &kernel) {
  using Params = BuiltParamsOf<Build>;
  Params p;
  if constexpr (std::is_invocable_v<decltype(Build), decltype(Lead)...,
                                    const Operands &, const Operands &,
                                    const Attrs &, Params &>)
    TPC_RETURN_IF_ERROR(Build(Lead..., in, out, attrs, p));
  else
    TPC_RETURN_IF_ERROR(Build(Lead..., in, out, p));
  kernel = Bind(p, in);
  return Status::ok();
}

namespace detail {
template <auto Run, class Params>
std::unique_ptr<PreparedKernel> bindRunOf(const Params &p, const Operands &) {
  return bindRun<Run>(p);
}
} // namespace detail

/// prepareBound for the usual kernel, which only runs its params:
/// `Run(p, inputs, outputs, ctx)`.
template <auto Build, auto Run, auto... Lead>
constexpr PrepareFn prepareWith =
    prepareBound<Build, detail::bindRunOf<Run, BuiltParamsOf<Build>>, Lead...>;

} // namespace tpc::cpu

#endif // TPC_KERNELS_CPU_KERNELTABLE_H
