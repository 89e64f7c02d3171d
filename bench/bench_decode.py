#!/usr/bin/env python3
"""Decode-step latency: tpc generate against onnxruntime's past/present loop.

    bench_decode.py --tpc build/bin/tpc [--layers 12] [--tokens 64]
                    [--kv-cache 128] [--rounds 3] [--json OUT]
                    [--baseline-tpc OTHER_TPC]

One GPT-2-small-shaped decoder (bench/make_gpt2_model.py, build_past_graph;
random weights, cached in bench/.cache/) in the with-past form optimum
writes. Both sides feed one token per step, greedy, from the same first
token:

- tpc: `tpc compile --kv-cache K`, then `tpc generate --json` (per-rank KV
  caches written in place), at tp 1 with 1 and 2 kernel threads and at tp 2
  with one thread per rank;
- onnxruntime (CPU provider, 1 and 2 intra-op threads): an IO-binding loop
  that binds each step's present outputs as the next step's past inputs,
  so no Python copies are timed.

Reported: median and p90 ms per generated token (the steps after the
first), tokens/s, and the weight bytes read per token over the step time
against the machine's measured DRAM read bandwidth. Rounds alternate the
runners; each runner's median over rounds is kept. Greedy tokens of all
runners must agree (a correctness check of the run).
"""
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
import past_bench  # noqa: E402


def ort_decode(model, first, tokens, threads):
    import onnxruntime as ort
    s = past_bench.ort_session(model, threads)
    pasts = [i for i in s.get_inputs() if i.name.startswith("past_key_values")]
    presents = [o.name for o in s.get_outputs() if o.name.startswith("present")]
    cur = {i.name: ort.OrtValue.ortvalue_from_numpy(
        np.zeros((1, i.shape[1], 0, i.shape[3]), np.float32)) for i in pasts}
    out_tokens, times = [], []
    token = first
    for t in range(tokens):
        io = s.io_binding()
        io.bind_cpu_input("input_ids", np.array([[token]], np.int64))
        io.bind_cpu_input("position_ids", np.array([[t]], np.int64))
        io.bind_cpu_input("attention_mask", np.ones((1, t + 1), np.int64))
        for name, v in cur.items():
            io.bind_ortvalue_input(name, v)
        io.bind_output("logits")
        for name in presents:
            io.bind_output(name)
        t0 = time.perf_counter()
        s.run_with_iobinding(io)
        outs = io.get_outputs()
        token = int(np.argmax(outs[0].numpy()[0, -1]))
        times.append((time.perf_counter() - t0) * 1000)
        out_tokens.append(token)
        for name, v in zip(presents, outs[1:]):
            cur[name.replace("present", "past_key_values")] = v
    return out_tokens, times[1:]


def tpc_decode(tpc, engine, first, tokens, threads, work):
    prompt = os.path.join(work, "prompt.npy")
    np.save(prompt, np.array([[first]], np.int64))
    r = subprocess.run([tpc, "generate", engine, "--input-ids", prompt,
                        "--max-new-tokens", str(tokens), "--threads", str(threads),
                        "--json", "--oversubscribe"], capture_output=True, text=True, check=True)
    j = json.loads(r.stdout)
    return j["tokens"], j


def main(argv=None):
    ap = past_bench.arg_parser(__doc__, kv_cache=128)
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--baseline-tpc",
                    help="another tpc binary (an earlier build) whose tp 1 and "
                         "tp 2 runs of the same engines join the table, so a "
                         "change is measured against it in the same run")
    args = ap.parse_args(argv)
    cfg, model = past_bench.gpt2_small_past(args.layers)
    counts = make_gpt2_model.param_counts(cfg)
    streamed = counts["streamed_params"] * 4
    info = machine.cpu_info()
    bw = machine.membw(1024, (1, 2))
    work = tempfile.mkdtemp(prefix="tpc-decode-")
    engines = {}
    for tp in (1, 2):
        engines[tp] = os.path.join(work, "tp%d" % tp)
        subprocess.run([args.tpc, "compile", model, "--tp", str(tp), "--kv-cache",
                        str(args.kv_cache), "-o", engines[tp], "--quiet"], check=True)
    first = 464
    runners = {
        "tpc tp1 x1": lambda: tpc_decode(args.tpc, engines[1], first, args.tokens, 1, work),
        "tpc tp1 x2": lambda: tpc_decode(args.tpc, engines[1], first, args.tokens, 2, work),
        "tpc tp2 x1": lambda: tpc_decode(args.tpc, engines[2], first, args.tokens, 1, work),
        "onnxruntime x1": lambda: ort_decode(model, first, args.tokens, 1),
        "onnxruntime x2": lambda: ort_decode(model, first, args.tokens, 2),
    }
    if args.baseline_tpc:
        runners["baseline tp1 x1"] = lambda: tpc_decode(
            args.baseline_tpc, engines[1], first, args.tokens, 1, work)
        runners["baseline tp2 x1"] = lambda: tpc_decode(
            args.baseline_tpc, engines[2], first, args.tokens, 1, work)
    medians = {k: [] for k in runners}
    p90s = {k: [] for k in runners}
    tokens = {}
    for name, results in past_bench.alternate(runners, args.rounds).items():
        for toks, res in results:
            tokens[name] = toks
            steps = res if isinstance(res, list) else None
            if steps is None:
                medians[name].append(res["per_token_ms"]["median"])
                p90s[name].append(res["per_token_ms"]["p90"])
            else:
                medians[name].append(statistics.median(steps))
                p90s[name].append(sorted(steps)[int(0.9 * (len(steps) - 1) + 0.5)])
    ref = tokens["onnxruntime x1"]
    agree = {k: v == ref for k, v in tokens.items()}
    rows = []
    base = statistics.median(medians["onnxruntime x1"])
    base2 = statistics.median(medians["onnxruntime x2"])
    for name in runners:
        med = statistics.median(medians[name])
        two = "x2" in name or "tp2" in name
        peer = base2 if two else base
        gbs = streamed / (med / 1000) / 1e9
        bwk = "2" if two else "1"
        rows.append({"runner": name, "median_ms": med, "p90_ms": statistics.median(p90s[name]),
                     "tokens_per_s": 1000 / med,
                     "vs_onnxruntime_same_cores": peer / med,
                     "weight_read_gbs": gbs,
                     "fraction_of_membw": gbs / bw[bwk]["best_gbs"],
                     "tokens_agree": agree[name]})
    result = {"cpu": info, "membw": bw, "streamed_weight_bytes": streamed,
              "tokens": args.tokens, "kv_cache": args.kv_cache, "layers": args.layers,
              "rows": rows}
    print(f"CPU: {info.get('model_name')} ({', '.join(info.get('simd', []))}); "
          f"DRAM read {bw['1']['best_gbs']:.1f} GB/s (1 thread), {bw['2']['best_gbs']:.1f} GB/s (2)")
    print(f"decode, GPT-2-small shape ({args.layers} layers), {streamed / 1e6:.0f} MB of weights "
          f"per token, {args.tokens} tokens, tpc --kv-cache {args.kv_cache}, median of {args.rounds} rounds")
    print("| runner | ms/token (median) | p90 | tokens/s | onnxruntime / this (same cores) "
          "| weight GB/s | of DRAM bw | same tokens |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['runner']} | {r['median_ms']:.2f} | {r['p90_ms']:.2f} | {r['tokens_per_s']:.1f} "
              f"| {r['vs_onnxruntime_same_cores']:.2f}x | {r['weight_read_gbs']:.1f} "
              f"| {100 * r['fraction_of_membw']:.0f}% | {'yes' if r['tokens_agree'] else 'NO'} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0 if all(agree.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
