//===- Cores.h - The cores this process may use ------------------*- C++ -*-===//
#ifndef TPC_BASE_CORES_H
#define TPC_BASE_CORES_H

#include <sched.h>

namespace tpc {

/// The cores this process may run on (its affinity mask, which taskset,
/// cgroups and MPI launchers narrow); at least 1.
inline int usableCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
    return CPU_COUNT(&set);
  return 1;
}

} // namespace tpc

#endif // TPC_BASE_CORES_H
