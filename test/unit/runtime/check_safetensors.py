"""Cross-checks the safetensors reader and writer against the reference
`safetensors` package.

Usage: check_safetensors.py TPC_IO_INTEROP WORKDIR
Exits 77 (skipped) when numpy or safetensors is missing.
"""

import json
import os
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from io_interop_specs import (SKIP, np, check_cpp_reads, compare,  # noqa: E402
                              expected, numpy_specs, report, values)

try:
    from safetensors import safe_open
    from safetensors.numpy import load_file, save_file
except ImportError:
    print("SKIP: safetensors is not installed for", sys.executable)
    sys.exit(SKIP)


def check_bf16(path, failures):
    """NumPy has no bfloat16, so read that tensor's bits from the raw file:
    this also checks the layout independently of the library."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    if (8 + n) % 8:
        failures.append(f"data buffer starts at {8 + n}, not 8-aligned")
    info = header["bf16"]
    if info["dtype"] != "BF16" or info["shape"] != [2, 4]:
        failures.append(f"bf16 header entry is {info}")
        return
    begin, end = info["data_offsets"]
    bits = np.frombuffer(raw[8 + n + begin:8 + n + end], dtype="<u2")
    got = (bits.astype(np.uint32) << 16).view(np.float32).reshape(2, 4)
    compare("bf16 bits", got, values("bf16", (2, 4)).astype(np.float32),
            failures)


def main():
    helper, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    failures = []

    # C++ writes, the reference loader reads.
    cpp_file = os.path.join(work, "from_cpp.safetensors")
    subprocess.run([helper, "write-safetensors", cpp_file], check=True)
    loaded = load_file(cpp_file)
    if set(loaded) != set(numpy_specs()):
        failures.append(f"tensor names are {sorted(loaded)}")
    for name in numpy_specs():
        if name in loaded:
            compare(f"C++ {name} read by load_file", loaded[name],
                    expected(name), failures)
    with safe_open(cpp_file, framework="numpy") as f:
        if f.metadata() != {"producer": "tpc", "format": "np"}:
            failures.append(f"metadata is {f.metadata()}")

    # With bf16 included, safe_open still reads the numpy-typed tensors
    # (and so validates the whole header); the bf16 bits are checked raw.
    bf16_file = os.path.join(work, "from_cpp_bf16.safetensors")
    subprocess.run([helper, "write-safetensors-bf16", bf16_file], check=True)
    with safe_open(bf16_file, framework="numpy") as f:
        for name in numpy_specs():
            compare(f"C++ {name} read by safe_open", f.get_tensor(name),
                    expected(name), failures)
    check_bf16(bf16_file, failures)

    # The reference writer writes, C++ reads.
    py_file = os.path.join(work, "from_numpy.safetensors")
    save_file({name: expected(name) for name in numpy_specs()}, py_file,
              metadata={"producer": "numpy"})
    check_cpp_reads(helper, "check-safetensors", py_file, "safetensors' file", failures)
    return report(failures)


if __name__ == "__main__":
    sys.exit(main())
