"""The tensors that IoInterop.cpp writes and expects (keep the two in sync),
and the reporting that check_npy.py and check_safetensors.py share."""

import subprocess
import sys

SKIP = 77  # ctest SKIP_RETURN_CODE

try:
    import numpy as np
except ImportError:
    print("SKIP: numpy is not installed for", sys.executable)
    sys.exit(SKIP)

# name -> (numpy dtype or "bf16", shape)
SPECS = {
    "f32": ("<f4", (2, 3)),
    "f16": ("<f2", (5,)),
    "f64": ("<f8", (3,)),
    "i64": ("<i8", (4,)),
    "i32": ("<i4", (2, 2)),
    "i8": ("|i1", (6,)),
    "u8": ("|u1", (7,)),
    "bool": ("|b1", (5,)),
    "scalar": ("<f4", ()),
    "empty": ("<f4", (0, 3)),
    "big": ("<f4", (300, 7)),
    "bf16": ("bf16", (2, 4)),
}


def values(dtype, shape):
    """The array IoInterop.cpp's value() formula describes, as float64 or
    int64 before conversion."""
    n = int(np.prod(shape, dtype=np.int64))
    i = np.arange(n, dtype=np.int64)
    kind = dtype if dtype == "bf16" else np.dtype(dtype).kind
    if kind in ("f", "bf16"):
        v = (i % 11) * 0.5 - 2.5
    elif kind == "i":
        v = (i * 37 % 201) - 100
    elif kind == "u":
        v = i * 37 % 256
    else:
        v = i % 3 == 0
    return v.reshape(shape)


def expected(name):
    dtype, shape = SPECS[name]
    return values(dtype, shape).astype(np.dtype(dtype))


def numpy_specs():
    return [name for name, (dtype, _) in SPECS.items() if dtype != "bf16"]


def compare(what, got, want, failures):
    if got.dtype != want.dtype or got.shape != want.shape:
        failures.append(f"{what}: got {got.dtype}{got.shape}, "
                        f"expected {want.dtype}{want.shape}")
    elif not np.array_equal(got, want):
        failures.append(f"{what}: values differ: {got!r} vs {want!r}")


def check_cpp_reads(helper, command, path, what, failures):
    """Runs `helper command path`, the C++ side reading a file Python wrote;
    the helper prints its own errors."""
    if subprocess.run([helper, command, path]).returncode != 0:
        failures.append(f"C++ reading {what} failed (see above)")


def report(failures):
    """Prints each failure and a summary line; returns the exit status."""
    for f in failures:
        print("FAIL:", f)
    print("OK" if not failures else f"{len(failures)} failure(s)")
    return 1 if failures else 0
