#!/usr/bin/env python3
"""Facts about the machine a benchmark runs on, and two reference probes.

    machine.py info                      print cpu/memory/openblas facts as JSON
    machine.py openblas LIB [--sgemm N] [--threads T ...]
                                         corename/config of LIB and, with --sgemm,
                                         cblas_sgemm N^3 GFLOP/s per thread count
    machine.py membw [--mib 1024] [--threads T ...]
                                         DRAM read bandwidth (GB/s)

The OpenBLAS probe loads the library tpc links (found with ldd), in its own
process so that OPENBLAS_NUM_THREADS and OPENBLAS_CORETYPE apply exactly as
they do to `tpc run`. The bandwidth probe sums a large float32 array with a
small C routine (bench/membw.c, built with the system C compiler into
bench/.cache/); without a compiler it falls back to numpy's sum, which is
compute-bound on most machines and therefore a lower bound.
"""
import argparse
import ctypes
import hashlib
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.path.join(HERE, ".cache")


def cpu_info():
    info = {"logical_cpus": os.cpu_count(), "kernel": platform.release()}
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
        first = text.split("\n\n")[0]
        fields = dict((k.strip(), v.strip()) for k, _, v in
                      (line.partition(":") for line in first.splitlines()) if k.strip())
        info["model_name"] = fields.get("model name")
        info["vendor"] = fields.get("vendor_id")
        info["family"] = fields.get("cpu family")
        info["model"] = fields.get("model")
        info["stepping"] = fields.get("stepping")
        info["mhz"] = fields.get("cpu MHz")
        info["cache"] = fields.get("cache size")
        flags = set(fields.get("flags", "").split())
        info["simd"] = [f for f in ("avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl",
                                    "avx512_bf16", "avx_vnni") if f in flags]
    except OSError:
        pass
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    info["mem_total_gib"] = round(int(line.split()[1]) / (1 << 20), 1)
    except OSError:
        pass
    info["loadavg"] = os.getloadavg()
    return info


def linked_openblas(binary):
    """Path of the libopenblas the binary resolves, or None."""
    try:
        out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    for line in out.splitlines():
        m = re.match(r"\s*(libopenblas\S*)\s+=>\s+(\S+)", line)
        if m:
            return os.path.realpath(m.group(2))
    return None


def _openblas_probe(lib_path, sgemm_n, thread_counts):
    lib = ctypes.CDLL(lib_path)
    out = {"library": lib_path}
    for name in ("openblas_get_corename", "openblas_get_config"):
        fn = getattr(lib, name, None)
        if fn is not None:
            fn.restype = ctypes.c_char_p
            out[name.replace("openblas_get_", "")] = fn().decode()
    if not sgemm_n:
        return out
    n = sgemm_n
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    c = np.zeros((n, n), np.float32)
    sgemm = lib.cblas_sgemm
    sgemm.restype = None
    P, I, F = ctypes.c_void_p, ctypes.c_int, ctypes.c_float
    sgemm.argtypes = [I, I, I, I, I, I, F, P, I, P, I, F, P, I]
    set_threads = lib.openblas_set_num_threads
    set_threads.argtypes = [I]
    res = {}
    for t in thread_counts:
        set_threads(t)
        sgemm(101, 111, 111, n, n, n, 1.0, a.ctypes.data, n, b.ctypes.data, n, 0.0, c.ctypes.data, n)
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            sgemm(101, 111, 111, n, n, n, 1.0, a.ctypes.data, n, b.ctypes.data, n, 0.0, c.ctypes.data, n)
            times.append(time.perf_counter() - t0)
        flop = 2.0 * n ** 3
        res[str(t)] = {"best_gflops": flop / min(times) / 1e9,
                       "median_gflops": flop / statistics.median(times) / 1e9}
    out["sgemm"] = {"n": n, "threads": res}
    return out


def openblas_info(binary, sgemm_n=0, thread_counts=(1,)):
    """Run the OpenBLAS probe in a child process; {} if the library is not found."""
    lib = linked_openblas(binary)
    if not lib:
        return {}
    cmd = [sys.executable, os.path.abspath(__file__), "openblas", lib, "--sgemm", str(sgemm_n)]
    for t in thread_counts:
        cmd += ["--threads", str(t)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return {"library": lib, "error": r.stderr.strip()[-500:]}
    return json.loads(r.stdout)


def _membw_lib():
    src = os.path.join(HERE, "membw.c")
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if not cc or not os.path.exists(src):
        return None
    with open(src, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:12]
    so = os.path.join(CACHE, f"membw-{digest}.so")
    if not os.path.exists(so):
        os.makedirs(CACHE, exist_ok=True)
        tmp = so + f".{os.getpid()}.tmp"
        r = subprocess.run([cc, "-O3", "-march=native", "-shared", "-fPIC", "-o", tmp, src],
                           capture_output=True, text=True)
        if r.returncode != 0:
            return None
        os.replace(tmp, so)
    lib = ctypes.CDLL(so)
    fn = lib.tpc_bench_read_sum
    fn.restype = ctypes.c_float
    fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    return fn


def membw(mib=1024, thread_counts=(1, 2), reps=5):
    """Read bandwidth over a `mib` MiB float32 array: per thread count, best and median GB/s."""
    fn = _membw_lib()
    n = (mib << 20) // 4
    arr = np.empty(n, np.float32)
    arr.fill(1.0)  # touch every page before timing
    out = {"array_mib": mib, "method": "C loop (bench/membw.c)" if fn else "numpy sum (compute-bound lower bound)"}
    for t in thread_counts:
        part = n // t
        times = []
        for _ in range(reps):
            if fn is None:
                t0 = time.perf_counter()
                arr.sum()
                times.append(time.perf_counter() - t0)
                continue
            ths = [threading.Thread(target=fn, args=(arr.ctypes.data + 4 * part * k, part)) for k in range(t)]
            t0 = time.perf_counter()
            for th in ths:
                th.start()
            for th in ths:
                th.join()
            times.append(time.perf_counter() - t0)
        nbytes = (part * t if fn else n) * 4
        out[str(t)] = {"best_gbs": nbytes / min(times) / 1e9,
                       "median_gbs": nbytes / statistics.median(times) / 1e9}
        if fn is None:
            break
    del arr
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("info")
    ob = sub.add_parser("openblas")
    ob.add_argument("lib")
    ob.add_argument("--sgemm", type=int, default=0)
    ob.add_argument("--threads", type=int, action="append")
    mb = sub.add_parser("membw")
    mb.add_argument("--mib", type=int, default=1024)
    mb.add_argument("--threads", type=int, action="append")
    args = ap.parse_args(argv)
    if args.cmd == "info":
        res = cpu_info()
    elif args.cmd == "openblas":
        res = _openblas_probe(args.lib, args.sgemm, args.threads or [1])
    else:
        res = membw(args.mib, args.threads or [1, 2])
    json.dump(res, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
