#!/usr/bin/env python3
"""tpc benchmarks against onnxruntime, measured in one run.

    bench.py [--quick] [--cases latency,seq1,bf16,compile,gemm,comm,profile] [--json OUT]
             [--markdown OUT] [--tpc PATH] [--keep-engines]
             [--drop-caches auto|yes|no] [--fma-gflops-per-core X]

Cases (all by default):
  latency  GPT-2-small-shaped model (bench/make_gpt2_model.py) at sequence 128:
           checks tpc's logits against onnxruntime's, then tpc tp=1 x 1 thread
           against onnxruntime 1 thread, and the two-thread setups (tpc tp=1
           x 2 threads, tpc tp=2 x 1 thread per rank, onnxruntime 2 threads),
           interleaved round by round.
  seq1     the same weights at sequence 1 (weight streaming), with a DRAM read
           bandwidth probe taken before and after in the same run.
  bf16     a --dtype bf16 engine (AMX or AVX512-BF16 products, whichever
           the CPU has, as tpc run reports) against tpc's and onnxruntime's
           fp32 at sequences 1 and 128, one thread, with the bf16 logits'
           agreement with onnxruntime; and PyTorch's own bf16 forward
           (bench/torch_forward.py) where an interpreter with torch is given.
  compile  tpc compile wall time and peak RSS on bench/make_big_model.py's
           1 GiB MLP stack (tp 1 and 8) against a plain cp of its weights, and
           on the GPT-2 model (tp 1 and 4).
  gemm     tpc_gemm_bench: tpc's sgemm (weights packed) against OpenBLAS, BLIS
           and oneDNN at the GPT-2-small weight shapes, 1 and 2 threads,
           sequence 128 and 1 (GFLOP/s, and weight GB/s at sequence 1).
  comm     tpc_comm_bench: all-reduce / all-gather / reduce-scatter of the
           in-process (2 ranks) and MPI (mpirun -np 2) communicators, with
           algorithm and bus bandwidth.
  profile  `perf record` of `tpc run` (tp=1, 1 thread) after engine load, at
           sequence 128 and 1; top symbols and a breakdown by kind of work.

--quick runs every case on a tiny model with few iterations (a smoke test:
about a minute). Generated models are cached under bench/.cache/ keyed by
their parameters; engines are compiled fresh each run and removed at the end.
Exits 1 when tpc's output does not match onnxruntime's (max |diff| > 1e-3).
"""
import argparse
import datetime
import gc
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CACHE = os.path.join(HERE, ".cache")
sys.path.insert(0, HERE)

import machine  # noqa: E402
import make_gpt2_model  # noqa: E402

GPT2_SMALL = dict(hidden=768, heads=12, layers=12, vocab=50257, positions=1024, seed=0, linear="gemm")
GPT2_TINY = dict(hidden=256, heads=4, layers=2, vocab=2048, positions=128, seed=0, linear="gemm")

PRESETS = {
    "full": dict(gpt2=GPT2_SMALL, seq=128, warmup=3, iterations=10, rounds_1t=3, rounds_2t=3,
                 seq1_warmup=5, seq1_iterations=30, seq1_rounds=3,
                 big_gib=1.0, big_tps=[1, 8], gpt2_tps=[1, 4], membw_mib=1024, sgemm_n=2048,
                 profile_target_s=6.0),
    "quick": dict(gpt2=GPT2_TINY, seq=32, warmup=1, iterations=3, rounds_1t=2, rounds_2t=2,
                  seq1_warmup=1, seq1_iterations=5, seq1_rounds=2,
                  big_gib=0.03, big_tps=[1, 8], gpt2_tps=[1, 4], membw_mib=128, sgemm_n=512,
                  profile_target_s=1.0),
}
VERIFY_TOL = 1e-3
TIMEOUT_S = 900


def log(msg):
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------
# running tpc and onnxruntime


class Tpc:
    def __init__(self, path):
        self.path = path
        self.cpus = os.cpu_count() or 1

    def compile(self, model, tp, out_dir, extra=(), log_path=None):
        """Compile in a fresh measuring process; returns wall/RSS and the engine size."""
        if os.path.exists(out_dir):
            shutil.rmtree(out_dir)
        res = measure([self.path, "compile", model, "--tp", str(tp), "-o", out_dir, *extra],
                      log_path or out_dir.rstrip("/") + ".compile.log")
        if res["rc"] != 0:
            raise RuntimeError(f"tpc compile failed (rc {res['rc']}); see {res['log']}:\n{res['log_tail']}")
        res["engine_bytes"] = dir_bytes(out_dir)
        return res

    def run(self, engine, inputs, tp, threads, warmup, iterations, output_dir=None):
        cmd = [self.path, "run", engine]
        for name, path in inputs.items():
            cmd += ["--input", f"{name}={path}"]
        cmd += ["--threads", str(threads), "--warmup", str(warmup), "--iterations", str(iterations), "--json"]
        if output_dir:
            cmd += ["--output-dir", output_dir]
        if tp * threads > self.cpus:
            cmd.append("--oversubscribe")
        t0 = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
        wall = time.perf_counter() - t0
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed (rc {r.returncode}):\n{r.stderr[-2000:]}")
        doc = None
        for line in r.stdout.splitlines():
            if line.startswith("{"):
                doc = json.loads(line)
        if doc is None:
            raise RuntimeError(f"no JSON from {' '.join(cmd)}:\n{r.stdout[-2000:]}")
        lat = doc["latency_ms"]
        # The kernel paths that ran, as tpc run reports them.
        self.kernels = {"gemm": doc.get("gemm_kernel"), "bf16_gemm": doc.get("bf16_gemm_kernel"),
                        "vector_math": doc.get("vector_math")}
        return {"median": lat["median"], "min": lat["min"], "max": lat["max"],
                "iterations": doc.get("iterations", iterations), "process_wall_s": wall}


class Ort:
    """One onnxruntime session, inputs and output bound once (IOBinding into a preallocated array)."""

    def __init__(self, model_path, threads, feeds):
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        t0 = time.perf_counter()
        self.sess = ort.InferenceSession(model_path, so, providers=["CPUExecutionProvider"])
        self.load_s = time.perf_counter() - t0
        out = self.sess.get_outputs()[0]
        self.out = np.empty([int(d) for d in out.shape], np.float32)
        self.binding = self.sess.io_binding()
        self.feeds = {k: np.ascontiguousarray(v) for k, v in feeds.items()}
        for name, arr in self.feeds.items():
            self.binding.bind_cpu_input(name, arr)
        self.binding.bind_output(name=out.name, device_type="cpu", device_id=0, element_type=np.float32,
                                 shape=self.out.shape, buffer_ptr=self.out.ctypes.data)

    def forward(self):
        self.sess.run_with_iobinding(self.binding)
        return self.out

    def run(self, warmup, iterations):
        for _ in range(warmup):
            self.forward()
        times = []
        for _ in range(iterations):
            t0 = time.perf_counter()
            self.forward()
            times.append((time.perf_counter() - t0) * 1e3)
        return {"median": statistics.median(times), "min": min(times), "max": max(times),
                "iterations": iterations, "samples_ms": times}


def torch_python(args):
    """An interpreter with torch: --torch-python, $TPC_BENCH_TORCH_PYTHON, or
    this one; None where none has it (torch is not a dependency of tpc's
    bench: PyPI's wheel is about 5 GB)."""
    for py in (args.torch_python, os.environ.get("TPC_BENCH_TORCH_PYTHON"), sys.executable):
        if py and subprocess.run([py, "-c", "import torch, onnx"], capture_output=True).returncode == 0:
            return py
    return None


class Torch:
    """PyTorch's eager CPU forward of the bench model (bench/torch_forward.py),
    a fresh process per round so that its threads and allocator start clean."""

    def __init__(self, python, model_path, ids_path, heads, dtype, threads):
        self.cmd = [python, os.path.join(HERE, "torch_forward.py"), model_path, "--ids", ids_path,
                    "--heads", str(heads), "--dtype", dtype, "--threads", str(threads)]
        self.info = {}

    def run(self, warmup, iterations, logits=None):
        cmd = self.cmd + ["--warmup", str(warmup), "--iterations", str(iterations)]
        if logits:
            cmd += ["--logits", logits]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{r.stderr[-2000:]}")
        doc = json.loads(r.stdout.strip().splitlines()[-1])
        self.info = {k: doc[k] for k in ("torch", "cpu_capability", "onednn")}
        return doc


def measure(cmd, log_path):
    """Run cmd in a fresh bench/measure.py process: wall time and peak RSS of cmd alone."""
    r = subprocess.run([sys.executable, os.path.join(HERE, "measure.py"), "--log", log_path, "--", *cmd],
                       capture_output=True, text=True, timeout=TIMEOUT_S)
    if r.returncode != 0:
        raise RuntimeError(f"measure.py failed: {r.stderr[-2000:]}")
    res = json.loads(r.stdout)
    res["log"] = log_path
    try:
        with open(log_path, errors="replace") as f:
            res["log_tail"] = f.read()[-2000:]
    except OSError:
        res["log_tail"] = ""
    return res


def dir_bytes(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def drop_page_cache():
    """sync + drop the page cache; returns None on success, else the reason it could not."""
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("1\n")
        return None
    except OSError as e:
        return str(e)


def read_through(path):
    """Read a file once so that it sits in the page cache."""
    with open(path, "rb") as f:
        while f.read(16 << 20):
            pass


DEADLINE = [None]  # wall-clock time after which no further rounds start


def run_rounds(configs, rounds, warmup, iterations):
    """Run each config once per round, in order (A B A B ...); fill config['rounds'].

    After the first round, no new round starts once the run's deadline has passed."""
    for c in configs:
        c["rounds"] = []
    for r in range(rounds):
        if r and DEADLINE[0] and time.time() > DEADLINE[0]:
            log(f"  time budget spent: stopping after {r} of {rounds} rounds")
            break
        for c in configs:
            if c["kind"] == "tpc":
                res = c["tpc"].run(c["engine"], c["inputs"], c["tp"], c["threads"], warmup, iterations)
            elif c["kind"] == "torch":
                res = c["torch"].run(warmup, iterations)
            else:
                res = c["ort"].run(warmup, iterations)
            c["rounds"].append(res)
            log(f"  round {r + 1}/{rounds} {c['label']}: median {res['median']:.2f} ms")
    rows = []
    for c in configs:
        meds = [x["median"] for x in c["rounds"]]
        med = statistics.median(meds)
        rows.append({
            "label": c["label"], "engine": c["kind"], "tp": c.get("tp", 1), "threads": c["threads"],
            "cores_used": c.get("tp", 1) * c["threads"],
            "median_ms": med, "min_ms": min(x["min"] for x in c["rounds"]),
            "max_ms": max(x["max"] for x in c["rounds"]),
            "round_medians_ms": meds,
            "spread_pct": (max(meds) - min(meds)) / med * 100.0 if med else 0.0,
            "iterations_per_round": iterations, "warmup": warmup, "rounds": len(meds),
            "ort_samples_ms": [s for x in c["rounds"] for s in x.get("samples_ms", [])] or None,
        })
    return rows


def ort_runner(label, sess, threads):
    """A run_rounds config that times the onnxruntime session sess."""
    return {"label": label, "kind": "ort", "ort": sess, "threads": threads}


def compare(ref, got):
    d = np.abs(ref.astype(np.float64) - got.astype(np.float64))
    return {"max_abs_diff": float(d.max()), "mean_abs_diff": float(d.mean()),
            "max_abs_ref": float(np.abs(ref).max()), "shape": list(got.shape)}


# ----------------------------------------------------------------------------
# cases


class Context:
    def __init__(self, args, preset):
        self.args = args
        self.p = preset
        self.tpc = Tpc(args.tpc)
        self.engines = os.path.join(CACHE, "engines")
        os.makedirs(self.engines, exist_ok=True)
        self.results = {}
        self.failures = []
        self.model = None
        self.model_dir = None
        self.engine_paths = {}

    # -- model and engines

    def ensure_model(self):
        if self.model is not None:
            return
        cfg = dict(self.p["gpt2"])
        self.model_dir = os.path.join(CACHE, make_gpt2_model.weight_key(cfg))
        log(f"model: {self.model_dir} (generated once, then reused)")
        meta = make_gpt2_model.ensure(self.model_dir, cfg, [self.p["seq"], 1], log=log)
        self.model = meta
        self.results["model"] = {
            "config": cfg, "dir": os.path.relpath(self.model_dir, ROOT),
            "weights_bytes": meta["weights_bytes"], "total_params": meta["total_params"],
            "matmul_params": meta["matmul_params"], "streamed_params": meta["streamed_params"],
            "streamed_bytes": meta["streamed_params"] * 4,
            "flops": {s: v["flops"] for s, v in meta["models"].items()},
            "generate_s": meta["generate_s"],
        }

    def model_path(self, seq):
        return os.path.join(self.model_dir, f"model_s{seq}.onnx")

    def inputs(self, seq):
        return {"input_ids": os.path.join(self.model_dir, "inputs", f"input_ids_s{seq}.npy")}

    def engine(self, seq, tp, extra=()):
        key = (seq, tp, tuple(extra))
        if key in self.engine_paths:
            return self.engine_paths[key]
        suffix = "".join(e.replace("--", "_").replace("-", "_") for e in extra)
        out = os.path.join(self.engines, f"{os.path.basename(self.model_dir)}_s{seq}_tp{tp}{suffix}")
        log(f"compiling {os.path.basename(out)}")
        res = self.tpc.compile(self.model_path(seq), tp, out, extra)
        log(f"  {res['wall_s']:.1f} s, peak RSS {res['max_rss_kib'] / 1024:.0f} MiB")
        self.results.setdefault("engine_compiles", []).append(
            {"seq": seq, "tp": tp, "flags": list(extra), "wall_s": res["wall_s"],
             "max_rss_mib": res["max_rss_kib"] / 1024, "engine_bytes": res["engine_bytes"]})
        self.engine_paths[key] = out
        return out

    def tpc_runner(self, label, seq, engine, tp, threads):
        """A run_rounds config that times `tpc run` of engine on the inputs of seq."""
        return {"label": label, "kind": "tpc", "tpc": self.tpc, "engine": engine,
                "inputs": self.inputs(seq), "tp": tp, "threads": threads}

    def verify(self, seq, ort_sess, engines):
        """Compare tpc's logits (each engine) with onnxruntime's."""
        ref = ort_sess.forward().copy()
        out = []
        for label, engine, tp in engines:
            od = engine.rstrip("/") + ".out"
            os.makedirs(od, exist_ok=True)
            self.tpc.run(engine, self.inputs(seq), tp, 1, 0, 1, output_dir=od)
            got = np.load(os.path.join(od, "logits.npy"))
            res = {"label": label, "seq": seq, **compare(ref, got)}
            res["ok"] = res["max_abs_diff"] <= VERIFY_TOL and list(ref.shape) == res["shape"]
            if not res["ok"]:
                self.failures.append(f"{label} at seq {seq}: max |diff| {res['max_abs_diff']:.3g}")
            log(f"verify {label} seq {seq}: max |tpc - ort| = {res['max_abs_diff']:.3g} "
                f"(max |logit| {res['max_abs_ref']:.3g})")
            out.append(res)
            shutil.rmtree(od, ignore_errors=True)
        self.results.setdefault("verify", []).extend(out)

    def add_compute_metrics(self, rows, seq):
        flops = self.model["models"][str(seq)]["flops"]
        peak = self.results["machine"]["fma_limit"]["gflops_per_core"]
        sg = self.results["machine"].get("openblas", {}).get("sgemm", {}).get("threads", {})
        for r in rows:
            r["gflops"] = flops / (r["median_ms"] / 1e3) / 1e9
            r["fma_share_pct"] = r["gflops"] / (peak * r["cores_used"]) * 100.0
            ref = sg.get(str(r["cores_used"]))
            r["sgemm_share_pct"] = r["gflops"] / ref["median_gflops"] * 100.0 if ref else None

    # -- case: latency at seq (128)

    def case_latency(self):
        self.ensure_model()
        p, seq = self.p, self.p["seq"]
        ids = np.load(self.inputs(seq)["input_ids"])
        e1 = self.engine(seq, 1)
        e2 = self.engine(seq, 2)
        e2h = self.engine(seq, 2, ["--lm-head", "replicated"]) if not self.args.no_extra else None

        log("onnxruntime session, 1 thread")
        ort1 = Ort(self.model_path(seq), 1, {"input_ids": ids})
        self.verify(seq, ort1, [("tpc tp=1", e1, 1), ("tpc tp=2", e2, 2)]
                    + ([("tpc tp=2 --lm-head replicated", e2h, 2)] if e2h else []))

        log(f"latency seq {seq}, one thread: {p['rounds_1t']} rounds x ({p['warmup']} warm-up + "
            f"{p['iterations']} timed)")
        rows1 = run_rounds([
            self.tpc_runner("tpc tp=1 x1 thread", seq, e1, 1, 1),
            ort_runner("onnxruntime 1 thread", ort1, 1),
        ], p["rounds_1t"], p["warmup"], p["iterations"])
        ort_load_1 = ort1.load_s
        del ort1
        gc.collect()
        self.add_compute_metrics(rows1, seq)

        log("onnxruntime session, 2 threads")
        ort2 = Ort(self.model_path(seq), 2, {"input_ids": ids})
        configs = [
            self.tpc_runner("tpc tp=1 x2 threads", seq, e1, 1, 2),
            ort_runner("onnxruntime 2 threads", ort2, 2),
            self.tpc_runner("tpc tp=2 x1 thread/rank", seq, e2, 2, 1),
        ]
        if e2h:
            configs.append(self.tpc_runner("tpc tp=2 x1, --lm-head replicated", seq, e2h, 2, 1))
        log(f"latency seq {seq}, two threads: {p['rounds_2t']} rounds")
        rows2 = run_rounds(configs, p["rounds_2t"], p["warmup"], p["iterations"])
        ort_load_2 = ort2.load_s
        del ort2, configs
        gc.collect()
        self.add_compute_metrics(rows2, seq)

        ort1_med = rows1[1]["median_ms"]
        ort2_med = rows2[1]["median_ms"]
        for r in rows1:
            r["ratio_vs_ort"] = r["median_ms"] / ort1_med
        for r in rows2:
            r["ratio_vs_ort"] = r["median_ms"] / ort2_med
        self.results["latency"] = {
            "seq": seq, "flops": self.model["models"][str(seq)]["flops"],
            "one_thread": rows1, "two_threads": rows2,
            "ort_session_load_s": {"1": ort_load_1, "2": ort_load_2},
            "tpc_kernels": getattr(self.tpc, "kernels", {}),
        }

    # -- case: seq 1 (weight streaming)

    def case_seq1(self):
        self.ensure_model()
        p, seq = self.p, 1
        ids = np.load(self.inputs(seq)["input_ids"])
        e1 = self.engine(seq, 1)
        e2 = self.engine(seq, 2)
        # Split (the default), each rank streams its share of every weight;
        # a replicated LM head is read whole by every rank.
        e2h = self.engine(seq, 2, ["--lm-head", "replicated"]) if not self.args.no_extra else None
        bw = [self.membw("before")]

        ort1 = Ort(self.model_path(seq), 1, {"input_ids": ids})
        self.verify(seq, ort1, [("tpc tp=1", e1, 1), ("tpc tp=2", e2, 2)]
                    + ([("tpc tp=2 --lm-head replicated", e2h, 2)] if e2h else []))
        ort2 = Ort(self.model_path(seq), 2, {"input_ids": ids})
        log(f"latency seq 1: {p['seq1_rounds']} rounds x ({p['seq1_warmup']} warm-up + "
            f"{p['seq1_iterations']} timed)")
        rows = run_rounds([
            self.tpc_runner("tpc tp=1 x1 thread", seq, e1, 1, 1),
            ort_runner("onnxruntime 1 thread", ort1, 1),
            self.tpc_runner("tpc tp=2 x1 thread/rank", seq, e2, 2, 1),
            ort_runner("onnxruntime 2 threads", ort2, 2),
        ] + ([self.tpc_runner("tpc tp=2 x1, --lm-head replicated", seq, e2h, 2, 1)] if e2h else []),
            p["seq1_rounds"], p["seq1_warmup"], p["seq1_iterations"])
        del ort1, ort2
        gc.collect()
        bw.append(self.membw("after"))

        bw_by_threads = {}
        for t in ("1", "2"):
            meds = [b[t]["median_gbs"] for b in bw if t in b]
            bests = [b[t]["best_gbs"] for b in bw if t in b]
            if meds:
                bw_by_threads[t] = {"median_gbs": statistics.median(meds), "best_gbs": max(bests)}
        streamed = self.model["streamed_params"] * 4
        for r in rows:
            r["weight_gbs"] = streamed / (r["median_ms"] / 1e3) / 1e9
            ref = bw_by_threads.get(str(r["cores_used"])) or bw_by_threads.get("1")
            r["bw_share_pct"] = r["weight_gbs"] / ref["median_gbs"] * 100.0 if ref else None
        ort_meds = {1: rows[1]["median_ms"], 2: rows[3]["median_ms"]}
        for r in rows:
            r["ratio_vs_ort"] = r["median_ms"] / ort_meds[r["cores_used"]]
        self.add_compute_metrics(rows, seq)
        self.results["seq1"] = {"streamed_bytes": streamed, "rows": rows, "membw_runs": bw,
                                "membw": bw_by_threads}

    # -- case: a bf16 engine against fp32, one core

    def case_bf16(self):
        """--dtype bf16 (the AMX or AVX512-BF16 product where the CPU has it)
        against tpc's and onnxruntime's fp32, at sequence 1 and the latency sequence,
        one thread each, rounds alternating."""
        self.ensure_model()
        p = self.p
        out = {"kernel": None, "runs": []}
        py = torch_python(self.args)
        if not py:
            out["torch"] = "not installed (give --torch-python or $TPC_BENCH_TORCH_PYTHON)"
        for seq in (1, p["seq"]):
            ids = np.load(self.inputs(seq)["input_ids"])
            e32 = self.engine(seq, 1)
            e16 = self.engine(seq, 1, ["--dtype", "bf16"])
            ort1 = Ort(self.model_path(seq), 1, {"input_ids": ids})
            ref = ort1.forward().copy()
            od = e16.rstrip("/") + ".out"
            os.makedirs(od, exist_ok=True)
            self.tpc.run(e16, self.inputs(seq), 1, 1, 0, 1, output_dir=od)
            out["kernel"] = self.tpc.kernels.get("bf16_gemm") or "not reported"
            got = np.load(os.path.join(od, "logits.npy"))
            shutil.rmtree(od, ignore_errors=True)
            cmp = compare(ref, got)
            # bf16 keeps 8 bits of mantissa: the logits agree to about 1 %
            # of their range, and the arg-max of almost every position.
            cmp["top1_agreement"] = float(np.mean(ref.argmax(-1) == got.argmax(-1)))
            rounds = p["seq1_rounds"] if seq == 1 else p["rounds_1t"]
            warm = p["seq1_warmup"] if seq == 1 else p["warmup"]
            iters = p["seq1_iterations"] if seq == 1 else p["iterations"]
            configs = [
                self.tpc_runner("tpc tp=1 bf16 x1 thread", seq, e16, 1, 1),
                self.tpc_runner("tpc tp=1 fp32 x1 thread", seq, e32, 1, 1),
                ort_runner("onnxruntime fp32 1 thread", ort1, 1),
            ]
            torch_check = None
            if py:
                # PyTorch's bf16 (oneDNN, AMX where the CPU has it), checked
                # against onnxruntime like tpc's.
                t16 = Torch(py, self.model_path(seq), self.inputs(seq)["input_ids"], p["gpt2"]["heads"],
                            "bf16", 1)
                tl = os.path.join(self.engines, f"torch_bf16_s{seq}.npy")
                t16.run(0, 1, logits=tl)
                tgot = np.load(tl)
                os.unlink(tl)
                torch_check = compare(ref, tgot)
                torch_check["top1_agreement"] = float(np.mean(ref.argmax(-1) == tgot.argmax(-1)))
                out["torch"] = t16.info
                configs.append({"label": "PyTorch bf16 (eager) 1 thread", "kind": "torch", "torch": t16,
                                "threads": 1})
            log(f"bf16 seq {seq}: {rounds} rounds")
            rows = run_rounds(configs, rounds, warm, iters)
            del ort1
            gc.collect()
            for r in rows:
                r["ratio_vs_ort"] = r["median_ms"] / rows[2]["median_ms"]
            out["runs"].append({"seq": seq, "check": cmp, "torch_check": torch_check, "rows": rows})
        self.results["bf16"] = out

    def membw(self, when):
        log(f"DRAM read bandwidth probe ({when}), {self.p['membw_mib']} MiB")
        res = machine.membw(self.p["membw_mib"], (1, 2))
        res["when"] = when
        log("  " + ", ".join(f"{t} thread(s) {res[t]['median_gbs']:.1f} GB/s" for t in ("1", "2") if t in res))
        return res

    # -- case: compile time and peak memory

    def case_compile(self):
        p = self.p
        drop = self.args.drop_caches
        if drop == "auto":
            drop = "no" if self.args.quick else "yes"
        can_drop = None
        if drop == "yes":
            can_drop = drop_page_cache()
            cold_note = "cold (page cache dropped)" if can_drop is None else f"could not drop caches: {can_drop}"
        else:
            cold_note = "not measured (--drop-caches no)"
        states = ["cold", "warm"] if drop == "yes" and can_drop is None else ["warm"]

        big_dir = os.path.join(CACHE, f"big_mlp_g{p['big_gib']}")
        meta_path = os.path.join(big_dir, "meta.json")
        if not os.path.exists(meta_path):
            log(f"generating the {p['big_gib']} GiB MLP stack (bench/make_big_model.py)")
            subprocess.run([sys.executable, os.path.join(HERE, "make_big_model.py"), big_dir,
                            "--gib", str(p["big_gib"])], check=True, timeout=TIMEOUT_S)
        with open(meta_path) as f:
            big_meta = json.load(f)
        weights = os.path.join(big_dir, big_meta["weights_file"])
        big_model = os.path.join(big_dir, "model.onnx")

        rows = []

        def one(name, cmd, state, out_dir=None, src=weights):
            if state == "cold":
                err = drop_page_cache()
                if err:
                    raise RuntimeError(f"drop_caches failed: {err}")
            else:
                read_through(src)
            logp = os.path.join(self.engines, f"measure-{len(rows)}.log")
            res = measure(cmd, logp)
            if res["rc"] != 0:
                raise RuntimeError(f"{' '.join(cmd)} failed; see {logp}:\n{res['log_tail']}")
            row = {"case": name, "cache": state, "wall_s": res["wall_s"], "user_s": res["user_s"],
                   "sys_s": res["sys_s"], "max_rss_mib": res["max_rss_kib"] / 1024}
            if out_dir:
                row["output_bytes"] = dir_bytes(out_dir) if os.path.isdir(out_dir) else os.path.getsize(out_dir)
                if os.path.isdir(out_dir):
                    shutil.rmtree(out_dir)
                else:
                    os.remove(out_dir)
            os.remove(logp)
            rows.append(row)
            log(f"  {name} [{state}]: {row['wall_s']:.2f} s, peak RSS {row['max_rss_mib']:.0f} MiB")
            return row

        log(f"compile: big model {big_meta['weights_bytes'] / (1 << 30):.2f} GiB; caches: {', '.join(states)}")
        copy_dst = os.path.join(self.engines, "weights-copy.bin")
        for state in states:
            one("cp weights.bin", ["cp", weights, copy_dst], state, copy_dst)
            for tp in p["big_tps"]:
                out = os.path.join(self.engines, f"big_tp{tp}")
                one(f"tpc compile big --tp {tp}", [self.tpc.path, "compile", big_model, "--tp", str(tp), "-o", out],
                    state, out)

        self.ensure_model()
        gpt_weights = os.path.join(self.model_dir, "weights.bin")
        gpt_rows = []
        for tp in p["gpt2_tps"]:
            out = os.path.join(self.engines, f"gpt2_compile_tp{tp}")
            gpt_rows.append(one(f"tpc compile gpt2 s{p['seq']} --tp {tp}",
                                [self.tpc.path, "compile", self.model_path(p["seq"]), "--tp", str(tp), "-o", out],
                                "warm", out, src=gpt_weights))
        cp_row = {r["cache"]: r for r in rows if r["case"].startswith("cp ")}
        for r in rows:
            base = cp_row.get(r["cache"])
            if base and not r["case"].startswith("cp ") and "big" in r["case"]:
                r["vs_cp"] = r["wall_s"] / base["wall_s"]
        self.results["compile"] = {
            "big_model": {"dir": os.path.relpath(big_dir, ROOT), "weights_bytes": big_meta["weights_bytes"],
                          "layers": big_meta["layers"], "hidden": big_meta["hidden"]},
            "gpt2_weights_bytes": self.model["weights_bytes"],
            "cold_cache": cold_note, "rows": rows,
        }

    # -- case: profile

    def native(self, name):
        """A benchmark binary built beside tpc (scripts/bench builds it)."""
        path = os.path.join(os.path.dirname(self.args.tpc), name)
        if not os.access(path, os.X_OK):
            self.failures.append(f"{name} not built (scripts/build {name})")
            return None
        return path

    def case_gemm(self):
        exe = self.native("tpc_gemm_bench")
        if not exe:
            return
        q = self.args.quick
        rows = []
        for threads in (1, 2):
            cmd = [exe, "--threads", str(threads), "--tokens", "128,1"]
            if q:
                cmd += ["--hidden", "256", "--vocab", "2048", "--repeats", "5"]
            log("gemm: " + " ".join(cmd[1:]))
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
            if r.returncode != 0:
                self.failures.append(f"tpc_gemm_bench failed: {r.stderr.strip()[:200]}")
                return
            for row in json.loads(r.stdout)["results"]:
                row["threads"] = threads
                rows.append(row)
        self.results["gemm"] = {"rows": rows}

    def case_comm(self):
        exe = self.native("tpc_comm_bench")
        if not exe:
            return
        top = str(1 << 20) if self.args.quick else str(64 << 20)
        runs = {"inprocess": [exe, "--ranks", "2", "--max-bytes", top]}
        mpirun = shutil.which("mpirun")
        if mpirun:
            runs["mpi"] = [mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "2", exe, "--mpi",
                           "--max-bytes", top]
        out = {}
        for name, cmd in runs.items():
            log("comm: " + name)
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
            if r.returncode != 0:
                self.failures.append(f"tpc_comm_bench ({name}) failed: {r.stderr.strip()[:200]}")
                continue
            out[name] = json.loads(r.stdout)["results"]
        self.results["comm"] = out

    def case_profile(self):
        self.ensure_model()
        perf = shutil.which("perf")
        if not perf:
            self.results["profile"] = {"skipped": "perf not found (Debian: apt-get install linux-perf)"}
            log("profile: perf not found, skipped")
            return
        if DEADLINE[0] and time.time() > DEADLINE[0]:
            self.results["profile"] = {"skipped": "time budget spent"}
            log("profile: time budget spent, skipped")
            return
        out = {"tool": "perf record -F 999 (cpu-clock samples), perf report --no-children --sort dso,sym",
               "runs": []}
        seq = self.p["seq"]
        out["runs"].append(self.perf_one(perf, self.engine(seq, 1), seq, steady=False))
        for s in (seq, 1):
            out["runs"].append(self.perf_one(perf, self.engine(s, 1), s, steady=True))
        self.results["profile"] = out

    def perf_one(self, perf, engine, seq, steady):
        """perf record of `tpc run` (tp=1, 1 thread).

        steady=False: the whole process with one forward (engine load included).
        steady=True: sampling starts after engine load (timed beforehand) plus a
        margin that warm-up forwards cover, then about profile_target_s seconds
        of forwards."""
        inputs = self.inputs(seq)
        probe_iters = 3
        r = self.tpc.run(engine, inputs, 1, 1, 0, probe_iters)
        forward_s = r["median"] / 1e3
        startup_s = max(0.0, r["process_wall_s"] - probe_iters * forward_s)
        if steady:
            margin_s = max(0.3, 0.15 * startup_s)
            warmup = int(2 * margin_s / forward_s) + 2
            iterations = max(5, int(self.p["profile_target_s"] / forward_s))
            delay_ms = int((startup_s + margin_s) * 1000)
        else:
            warmup, iterations, delay_ms = 0, 1, 0
        data = os.path.join(self.engines, f"perf-s{seq}.data")
        cmd = [self.tpc.path, "run", engine]
        for name, path in inputs.items():
            cmd += ["--input", f"{name}={path}"]
        cmd += ["--threads", "1", "--warmup", str(warmup), "--iterations", str(iterations), "--json"]
        log(f"profile seq {seq} ({'after load' if steady else 'whole process'}): {warmup} + {iterations} "
            f"forwards of ~{forward_s * 1e3:.1f} ms, load ~{startup_s:.2f} s, sampling from {delay_ms} ms")
        rec_cmd = [perf, "record", "-F", "999"] + (["-D", str(delay_ms)] if delay_ms else []) + ["-o", data, "--", *cmd]
        rec = subprocess.run(rec_cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
        base = {"seq": seq, "steady_state": steady, "warmup": warmup, "iterations": iterations,
                "startup_s": startup_s, "forward_ms": r["median"], "delay_ms": delay_ms}
        if rec.returncode != 0:
            return {**base, "error": rec.stderr[-1000:]}
        rep = subprocess.run([perf, "report", "-i", data, "--no-children", "--sort", "dso,sym", "--stdio", "-q",
                              "--percent-limit", "0.05"], capture_output=True, text=True, timeout=TIMEOUT_S)
        for path in (data, data + ".old"):
            if os.path.exists(path):
                os.remove(path)
        symbols = []
        for line in rep.stdout.splitlines():
            m = re.match(r"\s*([\d.]+)%\s+(\S+)\s+\[(.)\]\s+(.*\S)", line)
            if m:
                symbols.append({"share_pct": float(m.group(1)), "dso": m.group(2), "sym": m.group(4)})
        if not symbols:
            return {**base, "error": "no samples: " + (rep.stderr or rec.stderr)[-500:]}
        cats = {}
        for s in symbols:
            c = classify(s["dso"], s["sym"])
            cats[c] = cats.get(c, 0.0) + s["share_pct"]
        listed = sum(s["share_pct"] for s in symbols)
        if listed < 99.95:
            cats["other (below 0.05% each)"] = cats.get("other (below 0.05% each)", 0.0) + 100.0 - listed
        return {**base, "top": symbols[:15], "categories": dict(sorted(cats.items(), key=lambda kv: -kv[1]))}


def short_symbol(sym, width=90):
    """Drop namespaces and argument lists so that template kernels stay readable."""
    s = sym.replace("(anonymous namespace)::", "").replace("tpc::cpu::", "cpu::")
    prev = None
    while prev != s:
        prev, s = s, re.sub(r"\([^()]*\)", "()", s)
    return s if len(s) <= width else s[:width - 3] + "..."


def classify(dso, sym):
    s = sym
    if "openblas" in dso:
        if "gemv" in s:
            return "OpenBLAS sgemv"
        if re.search(r"gemm_kernel", s):
            return "OpenBLAS sgemm micro-kernel"
        if re.search(r"gemm_.*copy", s):
            return "OpenBLAS sgemm packing (copies)"
        if "beta" in s:
            return "OpenBLAS sgemm beta (C scaling)"
        return "OpenBLAS other (thread sync, driver)"
    if "kallsyms" in dso or s.startswith("[k]"):
        return "OS kernel (page faults, syscalls)"
    if re.search(r"sha256|compressSha", s, re.I):
        return "engine checksum (sha256)"
    if re.search(r"sgemm|bgemm|gemv|dotsAvx|tileAvx|tileGeneric|tileBf16|amxBlock|packA|packBPanel|storeTile", s):
        return "tpc GEMM (micro-kernels, packing, epilogue)"
    if re.search(r"attention", s, re.I):
        return "Attention"
    if re.search(r"gelu|silu|mapV", s, re.I):
        return "GELU / activations (vector math)"
    if re.search(r"softmax", s, re.I) or re.match(r"__expf", s):
        return "Softmax (incl. libm expf)"
    if dso.startswith("libm"):
        return "GELU math (libm powf/tanhf/expm1f)"
    if re.search(r"norm", s, re.I):
        return "LayerNorm"
    if re.search(r"transpose|strided|Movement|Layout|memmove|memcpy|copy|split|concat|gather", s, re.I):
        return "Transpose / copies / Split / Gather"
    if re.search(r"binary|unary|visitNumeric|numeric|pow|tanh|where|Kernel", s, re.I) and "tpc" in s:
        return "elementwise loops (Add/Mul/Pow/Tanh)"
    if re.search(r"allreduce|Comm|barrier", s, re.I):
        return "collectives"
    if "tpc::" in s:
        return "tpc runtime (step dispatch, engine)"
    return "other"


# ----------------------------------------------------------------------------
# output


def torch_notes(b16, run):
    t = b16.get("torch")
    if isinstance(t, str):
        return [f"PyTorch: {t}"]
    c = run.get("torch_check")
    if not t or not c:
        return []
    return [f"PyTorch {t['torch']} (CPU capability {t['cpu_capability']}, oneDNN "
            f"{'on' if t['onednn'] else 'off'}), bench/torch_forward.py: its bf16 logits vs onnxruntime fp32: "
            f"max |diff| {c['max_abs_diff']:.3g}, top-1 agreement {c['top1_agreement'] * 100:.1f} %"]


def table(headers, rows, aligns=None):
    cells = [[str(c) for c in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    aligns = aligns or ["<"] + [">"] * (len(headers) - 1)
    fmt = "  ".join(f"{{:{a}{w}}}" for a, w in zip(aligns, widths))
    lines = [fmt.format(*headers), "  ".join("-" * w for w in widths)]
    lines += [fmt.format(*r) for r in cells]
    return "\n".join(lines)


def md_table(headers, rows):
    def esc(c):
        return str(c).replace("|", "\\|")
    headers = [esc(h) for h in headers]
    rows = [[esc(c) for c in r] for r in rows]
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" if i == 0 else "---:" for i in range(len(headers))) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def f(x, nd=1):
    return "-" if x is None else f"{x:.{nd}f}"


def report_sections(res):
    """[(title, headers, rows, notes)] for the text and markdown reports."""
    secs = []
    m = res.get("machine", {})
    if "verify" in res:
        secs.append(("Correctness: tpc logits vs onnxruntime",
                     ["engine", "seq", "max |diff|", "mean |diff|", "max |logit|", "ok"],
                     [[v["label"], v["seq"], f"{v['max_abs_diff']:.2e}", f"{v['mean_abs_diff']:.2e}",
                       f"{v['max_abs_ref']:.3f}", "yes" if v["ok"] else "NO"] for v in res["verify"]], []))
    lat = res.get("latency")
    if lat:
        peak = m["fma_limit"]["gflops_per_core"]
        hdr = ["setup", "median ms", "min ms", "max ms", "round medians ms", "spread %", "GFLOP/s",
               "% FMA limit", "% sgemm", "vs ORT"]

        def rowsof(rows):
            return [[r["label"], f(r["median_ms"]), f(r["min_ms"]), f(r["max_ms"]),
                     " / ".join(f(x) for x in r["round_medians_ms"]), f(r["spread_pct"]), f(r["gflops"]),
                     f(r["fma_share_pct"]), f(r["sgemm_share_pct"]), f"{r['ratio_vs_ort']:.2f}x"] for r in rows]
        notes = [f"{lat['flops'] / 1e9:.2f} GFLOP per forward (2 x matmul params x tokens + 4 x layers x s^2 x hidden); "
                 f"FMA limit {peak:.0f} GFLOP/s per core ({m['fma_limit']['source']}); "
                 "% sgemm: against OpenBLAS cblas_sgemm "
                 f"{m.get('openblas', {}).get('sgemm', {}).get('n', '?')}^3 measured in this run with as many threads",
                 "tpc kernel paths: GEMM " + str(lat.get("tpc_kernels", {}).get("gemm")) + ", vector math "
                 + str(lat.get("tpc_kernels", {}).get("vector_math"))]
        secs.append((f"Latency, sequence {lat['seq']}, one core", hdr, rowsof(lat["one_thread"]), notes))
        secs.append((f"Latency, sequence {lat['seq']}, two cores", hdr, rowsof(lat["two_threads"]), []))
    s1 = res.get("seq1")
    if s1:
        bw = s1["membw"]
        notes = [f"weights streamed per forward: {s1['streamed_bytes'] / 1e6:.1f} MB (every initializer except the "
                 "wte/wpe tables, which are gathered); DRAM read bandwidth measured in this run: "
                 + ", ".join(f"{t} thread(s) median {v['median_gbs']:.1f} GB/s (best {v['best_gbs']:.1f})"
                             for t, v in bw.items())]
        secs.append(("Sequence 1 (weight streaming)",
                     ["setup", "median ms", "min ms", "max ms", "spread %", "weights GB/s", "% DRAM BW", "vs ORT"],
                     [[r["label"], f(r["median_ms"], 2), f(r["min_ms"], 2), f(r["max_ms"], 2), f(r["spread_pct"]),
                       f(r["weight_gbs"]), f(r["bw_share_pct"]), f"{r['ratio_vs_ort']:.2f}x"] for r in s1["rows"]],
                     notes))
    b16 = res.get("bf16")
    if b16:
        for run in b16["runs"]:
            c = run["check"]
            secs.append((f"bf16 engine against fp32, sequence {run['seq']}, one core",
                         ["setup", "median ms", "min ms", "max ms", "round medians ms", "spread %", "vs ORT fp32"],
                         [[r["label"], f(r["median_ms"], 2), f(r["min_ms"], 2), f(r["max_ms"], 2),
                           " / ".join(f(x, 2) for x in r["round_medians_ms"]), f(r["spread_pct"]),
                           f"{r['ratio_vs_ort']:.2f}x"] for r in run["rows"]],
                         [f"bf16 product: {b16['kernel']}; bf16 logits vs onnxruntime fp32: max |diff| "
                          f"{c['max_abs_diff']:.3g} of max |logit| {c['max_abs_ref']:.3g}, top-1 agreement "
                          f"{c['top1_agreement'] * 100:.1f} %"] + torch_notes(b16, run)))
    comp = res.get("compile")
    if comp:
        bm = comp["big_model"]
        notes = [f"big model: {bm['layers']} MLP blocks, hidden {bm['hidden']}, "
                 f"{bm['weights_bytes'] / (1 << 30):.2f} GiB of weights; GPT-2 weights "
                 f"{comp['gpt2_weights_bytes'] / (1 << 30):.2f} GiB; cold cache: {comp['cold_cache']}; "
                 "peak RSS from getrusage(RUSAGE_CHILDREN) in a fresh process per row"]
        secs.append(("Compile time and peak memory",
                     ["command", "page cache", "wall s", "user s", "sys s", "peak RSS MiB", "output MiB", "vs cp"],
                     [[r["case"], r["cache"], f(r["wall_s"], 2), f(r["user_s"], 2), f(r["sys_s"], 2),
                       f(r["max_rss_mib"], 0), f(r.get("output_bytes", 0) / (1 << 20), 0),
                       f"{r['vs_cp']:.1f}x" if "vs_cp" in r else "-"] for r in comp["rows"]], notes))
    gemm = res.get("gemm")
    if gemm:
        libs = []
        for r in gemm["rows"]:
            if r["library"] not in libs:
                libs.append(r["library"])
        keys = []
        for r in gemm["rows"]:
            k = (r["threads"], r["m"], r["shape"], r["k"], r["n"])
            if k not in keys:
                keys.append(k)
        by = {(r["threads"], r["m"], r["shape"], r["library"]): r for r in gemm["rows"]}
        rows = []
        for (t, mm, shape, kk, nn) in keys:
            cells = [t, f"{shape} {mm}x{kk}x{nn}"]
            for lib in libs:
                r = by.get((t, mm, shape, lib))
                if not r or not r["available"]:
                    cells.append("n/a")
                elif mm == 1:
                    cells.append(f"{r['weight_gbps']:.1f} GB/s")
                else:
                    cells.append(f"{r['gflops']:.1f}")
            rows.append(cells)
        unavailable = sorted({f"{r['library']}: {r['detail']}" for r in gemm["rows"] if not r["available"]})
        secs.append(("fp32 GEMM libraries at GPT-2-small shapes (GFLOP/s; weight GB/s at m = 1)",
                     ["threads", "shape m x k x n"] + libs, rows,
                     ["tpc: weights packed once (as at engine load); the others get the row-major weight each call"]
                     + unavailable))
    comm = res.get("comm")
    if comm:
        rows = []
        for name, results in comm.items():
            for r in results:
                rows.append([name, r["op"], r["bytes"], f(r["time_us"], 1), f(r["algbw_gbps"], 2),
                             f(r["busbw_gbps"], 2)])
        secs.append(("Collectives, 2 ranks (f32)", ["communicator", "op", "bytes", "time us", "algbw GB/s",
                                                   "busbw GB/s"], rows,
                     ["time: the slowest rank's median; busbw = algbw x 2(n-1)/n (all-reduce), x (n-1)/n "
                      "(all-gather, reduce-scatter)"]))
    prof = res.get("profile")
    if prof and "runs" in prof:
        for run in prof["runs"]:
            if "error" in run:
                continue
            if run["steady_state"]:
                what = f"sequence {run['seq']}, after engine load"
                note = (f"{run['warmup']} + {run['iterations']} forwards of {run['forward_ms']:.1f} ms; sampling "
                        f"started {run['delay_ms']} ms into the process (engine load took {run['startup_s']:.2f} s "
                        "and is not in these shares)")
            else:
                what = f"sequence {run['seq']}, whole `tpc run` process with one forward"
                note = (f"engine load {run['startup_s']:.2f} s + one forward of {run['forward_ms']:.1f} ms")
            secs.append((f"Profile, tpc tp=1 x1 thread, {what}: by kind of work",
                         ["kind", "share %"], [[k, f(v)] for k, v in run["categories"].items() if v >= 0.1], [note]))
            secs.append((f"Profile, {what}: top symbols", ["symbol", "dso", "share %"],
                         [[short_symbol(s["sym"]), s["dso"], f(s["share_pct"])] for s in run["top"][:12]], []))
    return secs


def print_report(res):
    m = res["machine"]
    ob = m.get("openblas", {})
    print()
    print(f"tpc benchmarks, {res['date']} ({'quick' if res['quick'] else 'full'})")
    print(f"machine: {m['cpu'].get('model_name')} (family {m['cpu'].get('family')} model {m['cpu'].get('model')}), "
          f"{m['cpu'].get('logical_cpus')} logical CPUs, {m['cpu'].get('mhz')} MHz, SIMD {','.join(m['cpu'].get('simd', []))}, "
          f"{m['cpu'].get('mem_total_gib')} GiB; load average at start {m['cpu']['loadavg'][0]:.2f}, "
          f"at end {m.get('loadavg_end', [0])[0]:.2f}")
    sg = ob.get("sgemm", {}).get("threads", {})
    print(f"OpenBLAS (as linked by tpc): {ob.get('corename')} [{ob.get('config')}], OPENBLAS_CORETYPE="
          f"{m.get('OPENBLAS_CORETYPE')!r}; sgemm {ob.get('sgemm', {}).get('n')}^3: "
          + ", ".join(f"{t} thread(s) {v['median_gflops']:.1f} GFLOP/s" for t, v in sg.items()))
    for title, hdr, rows, notes in report_sections(res):
        print()
        print(f"== {title}")
        print(table(hdr, rows))
        for n in notes:
            print(f"   {n}")
    if res.get("failures"):
        print()
        print("FAILED: " + "; ".join(res["failures"]))


def markdown(res):
    out = []
    for title, hdr, rows, notes in report_sections(res):
        out.append(f"#### {title}\n")
        out.append(md_table(hdr, rows))
        out.append("")
        for n in notes:
            out.append(f"{n}.\n" if not n.endswith(".") else n + "\n")
    return "\n".join(out)


# ----------------------------------------------------------------------------


def fma_limit(cpu, override):
    if override:
        return {"gflops_per_core": override, "source": "given with --fma-gflops-per-core"}
    simd = cpu.get("simd", [])
    lanes = 16 if "avx512f" in simd else 8 if "avx2" in simd or "fma" in simd else 4
    # AMD family 25 (Zen 4) runs AVX-512 on two 256-bit FMA pipes: 8 lanes
    # each; family 26 (Zen 5) has 512-bit pipes.
    if lanes == 16 and cpu.get("vendor") == "AuthenticAMD" and str(cpu.get("family")) == "25":
        lanes = 8
    try:
        ghz = float(cpu.get("mhz")) / 1000.0
    except (TypeError, ValueError):
        ghz = 3.0
    return {"gflops_per_core": 2 * 2 * lanes * ghz,
            "source": f"2 FMA pipes x {lanes} fp32 lanes x 2 FLOP x {ghz:.2f} GHz (/proc/cpuinfo clock)"}


def git_describe():
    try:
        return subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"], capture_output=True,
                              text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--quick", action="store_true", help="tiny model, few iterations (smoke test)")
    ap.add_argument("--cases", default="latency,seq1,compile,gemm,comm,profile")
    ap.add_argument("--json", metavar="OUT", help="write all results as JSON")
    ap.add_argument("--markdown", metavar="OUT", help="write the result tables as Markdown")
    ap.add_argument("--tpc", default=os.path.join(os.environ.get("TPC_BUILD_DIR", os.path.join(ROOT, "build")),
                                                  "bin", "tpc"))
    ap.add_argument("--keep-engines", action="store_true", help="leave compiled engines in bench/.cache/engines")
    ap.add_argument("--drop-caches", choices=("auto", "yes", "no"), default="auto",
                    help="drop the page cache before the cold compile measurements (auto: yes unless --quick)")
    ap.add_argument("--fma-gflops-per-core", type=float, help="fp32 FMA limit to report shares against")
    ap.add_argument("--no-extra", action="store_true", help="skip the tp=2 --lm-head replicated engine")
    ap.add_argument("--torch-python", metavar="PYTHON",
                    help="an interpreter with torch and onnx, for the bf16 case's PyTorch row")
    ap.add_argument("--budget-min", type=float, default=13.0,
                    help="after this many minutes no new timing round starts and the profile is skipped "
                         "(the first round of every setup always runs)")
    args = ap.parse_args(argv)
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = set(cases) - {"latency", "seq1", "bf16", "compile", "gemm", "comm", "profile"}
    if unknown:
        ap.error(f"unknown case(s): {', '.join(sorted(unknown))}")
    if not os.access(args.tpc, os.X_OK):
        ap.error(f"tpc not found at {args.tpc} (build it with scripts/build tpc)")
    args.tpc = os.path.abspath(args.tpc)
    preset = PRESETS["quick" if args.quick else "full"]

    t_start = time.time()
    DEADLINE[0] = t_start + args.budget_min * 60.0 if args.budget_min > 0 else None
    ctx = Context(args, preset)
    cpu = machine.cpu_info()
    log(f"machine: {cpu.get('model_name')}, {cpu.get('logical_cpus')} CPUs, load {cpu['loadavg'][0]:.2f}")
    ob = machine.openblas_info(args.tpc, preset["sgemm_n"], (1, 2))
    log(f"OpenBLAS {ob.get('corename')}; sgemm {preset['sgemm_n']}^3: "
        + ", ".join(f"{t}t {v['median_gflops']:.1f} GFLOP/s" for t, v in ob.get("sgemm", {}).get("threads", {}).items()))
    import onnxruntime
    ctx.results.update({
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "quick": args.quick, "cases": cases, "argv": sys.argv[1:],
        "machine": {"cpu": cpu, "openblas": ob, "fma_limit": fma_limit(cpu, args.fma_gflops_per_core),
                    "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
                    "shared_host_note": "other processes may be running; see loadavg"},
        "versions": {"tpc": git_describe(), "onnxruntime": onnxruntime.__version__, "numpy": np.__version__,
                     "python": sys.version.split()[0]},
        "preset": {k: v for k, v in preset.items()},
    })
    try:
        for case in ("latency", "seq1", "bf16", "compile", "gemm", "comm", "profile"):
            if case in cases:
                t0 = time.time()
                log(f"=== {case}")
                getattr(ctx, f"case_{case}")()
                ctx.results.setdefault("case_seconds", {})[case] = time.time() - t0
    finally:
        if not args.keep_engines:
            shutil.rmtree(ctx.engines, ignore_errors=True)
    ctx.results["machine"]["loadavg_end"] = os.getloadavg()
    ctx.results["total_seconds"] = time.time() - t_start
    ctx.results["failures"] = ctx.failures
    print_report(ctx.results)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(ctx.results, fh, indent=1)
            fh.write("\n")
        log(f"wrote {args.json}")
    if args.markdown:
        with open(args.markdown, "w") as fh:
            fh.write(markdown(ctx.results))
        log(f"wrote {args.markdown}")
    log(f"done in {ctx.results['total_seconds']:.0f} s")
    return 1 if ctx.failures else 0


if __name__ == "__main__":
    sys.exit(main())
