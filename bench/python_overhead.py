"""Per-call cost of a forward driven from Python: tpc.Engine.run in process
against starting `tpc run` per call (what a generation loop over the CLI
pays), on the same engine and input.

usage: PYTHONPATH=build/python python bench/python_overhead.py ENGINE_DIR
       INPUT=FILE.npy [--calls N]

Prints the engine's own forward time (last_run_ms), the mean wall time per
Engine.run call and per `tpc run` process, and the CPU model.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import tpc


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("engine")
    ap.add_argument("input", help="NAME=FILE.npy")
    ap.add_argument("--calls", type=int, default=20)
    a = ap.parse_args()
    name, path = a.input.split("=", 1)
    feeds = {name: np.load(path)}
    engine = tpc.Engine(a.engine)
    engine.run(feeds)
    t = time.perf_counter()
    forward = []
    for _ in range(a.calls):
        engine.run(feeds)
        forward.append(engine.last_run_ms)
    in_process = (time.perf_counter() - t) / a.calls * 1000
    with tempfile.TemporaryDirectory() as out:
        cmd = [tpc.tpc_binary(), "run", a.engine, "--input", a.input,
               "--output-dir", out]
        subprocess.run(cmd, check=True, capture_output=True)
        t = time.perf_counter()
        for _ in range(a.calls):
            subprocess.run(cmd, check=True, capture_output=True)
        per_process = (time.perf_counter() - t) / a.calls * 1000
    print("cpu: %s" % cpu_model())
    print("engine %s, tp %d, %d calls each" % (a.engine, engine.tp, a.calls))
    print("forward (last_run_ms, mean): %.3f ms" % (sum(forward) / len(forward)))
    print("tpc.Engine.run per call:     %.3f ms" % in_process)
    print("tpc run process per call:    %.1f ms (%.0fx)" % (
        per_process, per_process / in_process))
    return 0


if __name__ == "__main__":
    sys.exit(main())
