"""Cross-checks the .npy reader and writer against NumPy.

Usage: check_npy.py TPC_IO_INTEROP WORKDIR
Exits 77 (skipped) when NumPy is missing.
"""

import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from io_interop_specs import (np, check_cpp_reads, compare, expected,  # noqa: E402
                              numpy_specs, report)


def main():
    helper, work = sys.argv[1], sys.argv[2]
    failures = []

    # C++ writes, NumPy reads.
    cpp_dir = os.path.join(work, "npy_from_cpp")
    os.makedirs(cpp_dir, exist_ok=True)
    subprocess.run([helper, "write-npy", cpp_dir], check=True)
    for name in numpy_specs():
        got = np.load(os.path.join(cpp_dir, name + ".npy"))
        compare(f"C++ {name}.npy read by NumPy", got, expected(name), failures)
    # (The writer's format 2.0 needs a header over 64 KiB, which takes more
    # dimensions than NumPy's limit of 64; NpyTest covers it.)

    # NumPy writes, C++ reads.
    py_dir = os.path.join(work, "npy_from_numpy")
    os.makedirs(py_dir, exist_ok=True)
    for name in numpy_specs():
        # Every other file in format 2.0, to cover both header layouts.
        arr = expected(name)
        with open(os.path.join(py_dir, name + ".npy"), "wb") as f:
            version = (2, 0) if len(name) % 2 else (1, 0)
            np.lib.format.write_array(f, arr, version=version)
    np.save(os.path.join(py_dir, "fortran.npy"),
            np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)))
    np.save(os.path.join(py_dir, "bigendian.npy"),
            np.arange(3, dtype=">f4"))
    np.save(os.path.join(py_dir, "complex.npy"),
            np.arange(3, dtype=np.complex64))
    np.save(os.path.join(py_dir, "object.npy"),
            np.array([1, "x"], dtype=object), allow_pickle=True)
    check_cpp_reads(helper, "check-npy", py_dir, "NumPy's files", failures)
    return report(failures)


if __name__ == "__main__":
    sys.exit(main())
