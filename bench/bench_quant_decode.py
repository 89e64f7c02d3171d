#!/usr/bin/env python3
"""Decode of a weight-only quantized Hub-size model: tpc's engines against
onnxruntime on the same MatMulNBits file, in one run.

    bench_quant_decode.py --tpc build/bin/tpc [--model qwen2.5-0.5b]
        [--bits 4] [--block-size 32] [--asymmetric] [--dtypes fp32,bf16]
        [--threads 2] [--tp 1] [--kv-cache 512] [--prompt 8] [--tokens 32]
        [--rounds 3] [--no-float] [--json OUT]

The float model is bench/make_hub_model.py's (optimum's with-past export,
seeded random weights); bench/make_quant_model.py quantizes it with
onnxruntime's own MatMulNBitsQuantizer (MatMulNBits nodes, or with --qdq its
QDQ format: DequantizeLinear of int4 weights; every MatMul with a constant weight,
the LM head included; round to nearest per block of K), both in the
generator virtualenv (scripts/gen-models --venv-only) and cached under
bench/.cache/hub/. For each activation dtype, `tpc compile` of the quantized
file, then `tpc generate --json` from one prompt; onnxruntime runs its own
past/present loop on the same quantized file (its MatMulNBits kernels, the
file's accuracy_level: unset, so fp32 arithmetic), with the same threads.
tpc's own `--quantize` of the float model (same bits and blocks) runs
too; its rounding is not onnxruntime's quantizer's bit for bit, so its
tokens may differ. Unless --no-float, tpc's bf16 engine of the float model
runs as well: the engine a user without a quantized file had. Every engine is compiled first;
each round runs every runner in turn; medians over the rounds.

Reported per runner: ms/token, onnxruntime / this, the bytes a decode step
must read (every initializer but tables only gathered from, as stored:
packed codes, scales, zero points; for the float engine its bf16 weights)
over the step time, against the DRAM read bandwidth measured in the same
run, and whether its greedy tokens equal onnxruntime's on the same file.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_hub_decode as hub  # noqa: E402
import machine  # noqa: E402

# Bytes per element by ONNX data type (4-bit types two to a byte).
ELEM_BYTES = {1: 4, 2: 1, 3: 1, 4: 2, 5: 2, 6: 4, 7: 8, 9: 1, 10: 2, 11: 8,
              12: 4, 13: 8, 16: 2, 21: 0.5, 22: 0.5}


def streamed_bytes(model):
    """Bytes of the initializers a decode step reads: all but the tables
    only gathered from (an embedding reads one row per token)."""
    import onnx
    m = onnx.load(model, load_external_data=False)
    size = {}
    for t in m.graph.initializer:
        n = 1
        for d in t.dims:
            n *= d
        size[t.name] = int(n * ELEM_BYTES.get(t.data_type, 4) + 0.5)
    readers = {}
    for node in m.graph.node:
        for k, name in enumerate(node.input):
            if name in size:
                readers.setdefault(name, []).append((node.op_type, k))
    gathered = sum(n for name, n in size.items()
                   if readers.get(name) and all(op == "Gather" and k == 0
                                                for op, k in readers[name]))
    return sum(size.values()) - gathered


def quant_model(folder, bits, block, asymmetric, qdq=False):
    out = "%s-q%db%d%s%s" % (folder, bits, block, "a" if asymmetric else "",
                             "-qdq" if qdq else "")
    args = [os.path.join(hub.GEN_VENV, "bin", "python"),
            os.path.join(HERE, "make_quant_model.py"),
            os.path.join(folder, "model.onnx"), out, "--bits", str(bits),
            "--block-size", str(block)] + (["--asymmetric"] if asymmetric else []) + \
        (["--qdq"] if qdq else [])
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("make_quant_model.py failed:\n%s" % r.stderr)
    return os.path.join(out, "model.onnx")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tpc", required=True)
    ap.add_argument("--model", default="qwen2.5-0.5b")
    ap.add_argument("--bits", type=int, default=4, choices=(4, 8))
    ap.add_argument("--block-size", type=int, default=32)
    ap.add_argument("--asymmetric", action="store_true")
    ap.add_argument("--dtypes", default="fp32,bf16")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--tp", type=int, default=1)
    ap.add_argument("--kv-cache", type=int, default=512)
    ap.add_argument("--prompt", type=int, default=8)
    ap.add_argument("--tokens", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-float", action="store_true")
    ap.add_argument("--qdq", action="store_true",
                    help="the quantizer's QDQ format instead of MatMulNBits nodes")
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    folder = hub.hub_model(a.model)
    qmodel = quant_model(folder, a.bits, a.block_size, a.asymmetric, a.qdq)
    with open(os.path.join(folder, "hf", "config.json")) as f:
        cfg = json.load(f)
    info = machine.cpu_info()
    bw = machine.membw(1024, (a.threads,))[str(a.threads)]["best_gbs"]
    rng = np.random.default_rng(0)
    prompt = [int(t) for t in rng.integers(3, cfg["vocab_size"], a.prompt)]
    qbytes = streamed_bytes(qmodel)
    fbytes = streamed_bytes(os.path.join(folder, "model.onnx"))
    work = tempfile.mkdtemp(prefix="tpc-quant-", dir=os.path.join(HERE, ".cache"))
    label = "int%d blocks of %d%s%s" % (a.bits, a.block_size,
                                        " asymmetric" if a.asymmetric else "",
                                        " QDQ" if a.qdq else "")
    runs = []
    try:
        plan = [(qmodel, d, "tpc %s, %s activations" % (label, d), qbytes, [])
                for d in a.dtypes.split(",")]
        fmodel = os.path.join(folder, "model.onnx")
        qflags = ["--quantize", "int%d" % a.bits, "--block-size", str(a.block_size)] + \
            (["--asymmetric"] if a.asymmetric else [])
        plan.append((fmodel, "fp32", "tpc --quantize of the float model, fp32 "
                     "activations", qbytes, qflags))
        if not a.no_float:
            plan.append((fmodel, "bf16", "tpc float model, bf16 weights",
                         fbytes / 2, []))
        for i, (model, dtype, name, nbytes, extra) in enumerate(plan):
            engine = os.path.join(work, "e%d" % i)
            compile_s = hub.timed([a.tpc, "compile", model, "--tp", str(a.tp),
                                   "--kv-cache", str(a.kv_cache), "--dtype", dtype,
                                   "--input-shape", "input_ids=1x1..%d" % a.prompt,
                                   "-o", engine, "--quiet"] + extra)
            j = json.loads(subprocess.run([a.tpc, "inspect", engine, "--json"],
                                          capture_output=True, text=True,
                                          check=True).stdout)
            runs.append(dict(runner=name, engine=engine, compile_s=compile_s,
                             bytes=nbytes, kernel=j.get("nbits_gemm_kernel"),
                             by_dtype=j["ranks"][0].get("weight_bytes_by_dtype"),
                             meds=[], ttfts=[], tokens=None))
        ort = dict(runner="onnxruntime %s (same file)" % label, bytes=qbytes,
                   meds=[], ttfts=[], tokens=None)
        for _ in range(a.rounds):
            for r in runs:
                toks, j = hub.tpc_generate(a.tpc, r["engine"], prompt, a.tokens,
                                           a.threads, work)
                r["meds"].append(j["per_token_ms"]["median"])
                r["ttfts"].append(j["time_to_first_token_ms"])
                r["tokens"] = toks
            toks, j = hub.ort_generate(qmodel, prompt, a.tokens, a.threads)
            ort["meds"].append(j["per_token_ms"]["median"])
            ort["ttfts"].append(j["time_to_first_token_ms"])
            ort["tokens"] = toks
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows = runs + [ort]
    ort_ms = statistics.median(ort["meds"])
    for r in rows:
        r["ms_per_token"] = statistics.median(r["meds"])
        r["ttft_ms"] = statistics.median(r["ttfts"])
        r["onnxruntime_over_this"] = ort_ms / r["ms_per_token"]
        step_bytes = r["bytes"] / a.tp
        r["read_gbs"] = step_bytes / (r["ms_per_token"] / 1000) / 1e9
        r["of_membw"] = r["read_gbs"] / bw
        r["tokens_agree_with_onnxruntime"] = r["tokens"] == ort["tokens"]
        del r["ttfts"]
        r.pop("engine", None)
    print(f"CPU: {info.get('model_name')} ({', '.join(info.get('simd', []))}); "
          f"DRAM read {bw:.1f} GB/s ({a.threads} threads); tpc's 4/8-bit kernel: "
          f"{runs[0]['kernel']}")
    print(f"{a.model}, {label}: {qbytes / 1e6:.0f} MB read per token "
          f"(float model: {fbytes / 1e6:.0f} MB in fp32); tp {a.tp}, {a.threads} "
          f"threads, --kv-cache {a.kv_cache}, prompt {a.prompt}, {a.tokens} tokens, "
          f"median of {a.rounds} rounds")
    print("| runner | ms/token | onnxruntime / this | TTFT ms | MB/token | GB/s "
          "| of DRAM bw | tokens = onnxruntime's | compile s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        compile_s = f"{r['compile_s']:.1f}" if "compile_s" in r else ""
        print(f"| {r['runner']} | {r['ms_per_token']:.1f} | {r['onnxruntime_over_this']:.2f}x "
              f"| {r['ttft_ms']:.0f} | {r['bytes'] / a.tp / 1e6:.0f} | {r['read_gbs']:.1f} "
              f"| {100 * r['of_membw']:.0f}% | {'yes' if r['tokens_agree_with_onnxruntime'] else 'no'} "
              f"| {compile_s} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"cpu": info, "membw_gbs": bw, "model": a.model,
                       "quantization": label, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
