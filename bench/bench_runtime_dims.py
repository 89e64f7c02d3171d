#!/usr/bin/env python3
"""Run-time dimensions: one engine for sequence 1..MAX against engines
compiled for one length, and against onnxruntime, in the same run.

    bench_runtime_dims.py --tpc build/bin/tpc [--layers 12] [--max 128]
                          [--lengths 128,32,1] [--rounds 3] [--json OUT]

One GPT-2-small-shaped model (bench/make_gpt2_model.py, random weights
cached in bench/.cache/) in two forms on the same weights: a graph per
length (static) and one graph whose sequence axis is dynamic, positions and
causal mask computed from the input's shape as exporters write them. For
each length the table gives the median forward of

- tpc, the static engine compiled for that length (tp 1, 1 thread);
- tpc, the one engine compiled with --input-shape input_ids=1x1..MAX
  (tp 1, 1 thread), and its first forward at that length (which prepares
  the steps for it) against the static engine's first forward;
- onnxruntime (CPU provider, 1 thread) on the dynamic graph.

Rounds alternate the runners; each runner's median over rounds is kept.
Every tpc output is checked against onnxruntime's (max |diff|).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import machine  # noqa: E402
import make_gpt2_model  # noqa: E402


def tpc_run(tpc, engine, ids, out_dir, warmup, iterations):
    r = subprocess.run([tpc, "run", engine, "--input", "input_ids=" + ids, "--json",
                        "--warmup", str(warmup), "--iterations", str(iterations),
                        "--output-dir", out_dir], capture_output=True, text=True, check=True)
    return json.loads(r.stdout)["latency_ms"]["median"], np.load(os.path.join(out_dir, "logits.npy"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tpc", required=True)
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--max", type=int, default=128)
    ap.add_argument("--lengths", default="128,32,1")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=5)
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    lengths = [int(x) for x in args.lengths.split(",")]
    cfg = {"hidden": 768, "heads": 12, "layers": args.layers, "vocab": 50257,
           "positions": 1024, "seed": 0, "linear": "gemm"}
    cache = os.path.join(HERE, ".cache", make_gpt2_model.weight_key(cfg))
    log = lambda m: print(m, file=sys.stderr)  # noqa: E731
    dyn = make_gpt2_model.ensure_dynamic(cache, cfg, log)
    make_gpt2_model.ensure(cache, cfg, lengths, log)
    info = machine.cpu_info()
    work = tempfile.mkdtemp(prefix="tpc-rtdims-")
    engines = {}
    t0 = time.perf_counter()
    subprocess.run([args.tpc, "compile", dyn, "-o", os.path.join(work, "dyn"), "--quiet",
                    "--input-shape", "input_ids=1x1..%d" % args.max], check=True)
    compile_dyn_s = time.perf_counter() - t0
    compile_static_s = {}
    for n in lengths:
        t0 = time.perf_counter()
        engines[n] = os.path.join(work, "s%d" % n)
        subprocess.run([args.tpc, "compile", os.path.join(cache, "model_s%d.onnx" % n),
                        "-o", engines[n], "--quiet"], check=True)
        compile_static_s[n] = time.perf_counter() - t0
    ids = {}
    for n in lengths:
        ids[n] = os.path.join(work, "ids%d.npy" % n)
        np.save(ids[n], np.random.default_rng(n).integers(0, cfg["vocab"], size=(1, n), dtype=np.int64))

    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(dyn, so, providers=["CPUExecutionProvider"])

    def ort_run(n):
        feed = {"input_ids": np.load(ids[n])}
        sess.run(None, feed)
        times = []
        for _ in range(args.iterations):
            t = time.perf_counter()
            out = sess.run(None, feed)[0]
            times.append((time.perf_counter() - t) * 1000)
        return statistics.median(times), out

    rows = []
    out_dir = os.path.join(work, "out")
    for n in lengths:
        res = {"static": [], "dynamic": [], "static_first": [], "dynamic_first": [], "onnxruntime": []}
        diffs = {}
        for _ in range(args.rounds):
            ms, ref = ort_run(n)
            res["onnxruntime"].append(ms)
            for kind, eng in (("static", engines[n]), ("dynamic", os.path.join(work, "dyn"))):
                ms, got = tpc_run(args.tpc, eng, ids[n], out_dir, 1, args.iterations)
                res[kind].append(ms)
                diffs[kind] = float(np.abs(got - ref).max())
                first, _ = tpc_run(args.tpc, eng, ids[n], out_dir, 0, 1)
                res[kind + "_first"].append(first)
        med = {k: statistics.median(v) for k, v in res.items()}
        rows.append({"length": n, **{k + "_ms": v for k, v in med.items()},
                     "dynamic_over_static": med["dynamic"] / med["static"],
                     "dynamic_first_over_static_first": med["dynamic_first"] / med["static_first"],
                     "onnxruntime_over_dynamic": med["onnxruntime"] / med["dynamic"],
                     "max_abs_diff_vs_onnxruntime": diffs})
    result = {"cpu": info, "layers": args.layers, "max": args.max, "rounds": args.rounds,
              "compile_s": {"dynamic": compile_dyn_s, "static": compile_static_s}, "rows": rows}
    print(f"CPU: {info.get('model_name')} ({', '.join(info.get('simd', []))})")
    print(f"GPT-2-small shape, {args.layers} layers, tp 1, 1 thread; one engine for 1..{args.max} "
          f"(compiled in {compile_dyn_s:.1f} s) against one engine per length "
          f"(compiled in {statistics.median(compile_static_s.values()):.1f} s each); "
          f"median of {args.rounds} rounds of {args.iterations} forwards")
    print("| length | static ms | run-time dims ms | ratio | first forward: static / run-time dims ms "
          "| onnxruntime ms | onnxruntime / run-time dims | max abs diff vs onnxruntime |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['length']} | {r['static_ms']:.2f} | {r['dynamic_ms']:.2f} | "
              f"{r['dynamic_over_static']:.3f} | {r['static_first_ms']:.2f} / {r['dynamic_first_ms']:.2f} | "
              f"{r['onnxruntime_ms']:.2f} | {r['onnxruntime_over_dynamic']:.2f}x | "
              f"{max(r['max_abs_diff_vs_onnxruntime'].values()):.2e} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    ok = all(max(r["max_abs_diff_vs_onnxruntime"].values()) < 1e-3 for r in rows)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
