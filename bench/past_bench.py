"""What bench_decode.py and bench_prefill.py share: their common flags, the
GPT-2-small-shaped with-past model, onnxruntime sessions, and rounds that
alternate the runners."""
import argparse
import os
import sys

import make_gpt2_model

HERE = os.path.dirname(os.path.abspath(__file__))


def arg_parser(doc, kv_cache):
    """--tpc, --layers, --kv-cache (default kv_cache), --rounds and --json."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--tpc", required=True)
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--kv-cache", type=int, default=kv_cache)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json")
    return ap


def gpt2_small_past(layers):
    """(cfg, path) of the with-past model of GPT-2 small's shape with this
    many layers; random weights, made once into bench/.cache/."""
    cfg = {"hidden": 768, "heads": 12, "layers": layers, "vocab": 50257,
           "positions": 1024, "seed": 0, "linear": "gemm"}
    cache = os.path.join(HERE, ".cache", make_gpt2_model.weight_key(cfg))
    return cfg, make_gpt2_model.ensure_past(cache, cfg, log=lambda m: print(m, file=sys.stderr))


def ort_session(model, threads):
    """A CPU onnxruntime session with `threads` intra-op threads."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])


def alternate(runners, rounds):
    """Calls every runner once per round, in order (A B A B ...); returns
    name -> the runner's results, one per round."""
    results = {name: [] for name in runners}
    for _ in range(rounds):
        for name, fn in runners.items():
            results[name].append(fn())
    return results
