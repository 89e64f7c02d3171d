#!/usr/bin/env python3
"""Prefill: the time to the first token of a prompt, tpc against onnxruntime.

    bench_prefill.py --tpc build/bin/tpc [--layers 12] [--prompt 128]
                     [--kv-cache 256] [--rounds 3] [--json OUT]

One GPT-2-small-shaped decoder in the with-past form optimum writes
(bench/make_gpt2_model.py, ensure_past: a causal mask over the past and the
new tokens; random weights cached in bench/.cache/). For a prompt of
PROMPT tokens, the time from feeding it to having the first new token:

- tpc, one decode engine compiled with --kv-cache K and
  --input-shape input_ids=1x1..PROMPT, so generation prefills the prompt in
  one forward: tp 1 with 1 and 2 kernel threads, tp 2 with one thread per
  rank (ranks as threads of this process; the time to first token of
  tpc.Engine.generate, which runs runtime::generate as `tpc generate`
  does, after one warm-up generation);
- tpc, the decode engine of one token per forward (no range), which feeds
  the prompt one token at a time: what prefill cost before;
- onnxruntime (CPU provider, 1 and 2 intra-op threads): the forward of the
  whole prompt with empty past inputs, IO-bound, after one warm-up run.

Rounds alternate the runners; each runner's median over rounds is kept.
Every runner's first token must be onnxruntime's.
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
import past_bench  # noqa: E402


def ort_prefill(model, prompt, threads):
    s = past_bench.ort_session(model, threads)
    n = prompt.shape[1]
    io = s.io_binding()
    io.bind_cpu_input("input_ids", prompt)
    io.bind_cpu_input("position_ids", np.arange(n, dtype=np.int64)[None])
    io.bind_cpu_input("attention_mask", np.ones((1, n), np.int64))
    for i in s.get_inputs():
        if i.name.startswith("past_key_values"):
            io.bind_cpu_input(i.name, np.zeros((1, i.shape[1], 0, i.shape[3]), np.float32))
    for o in s.get_outputs():
        io.bind_output(o.name)
    s.run_with_iobinding(io)  # warm-up
    t0 = time.perf_counter()
    s.run_with_iobinding(io)
    ms = (time.perf_counter() - t0) * 1000
    token = int(np.argmax(io.get_outputs()[0].numpy()[0, -1]))
    return token, ms


def tpc_first_token(engine, prompt, threads):
    """Engine.generate through the Python API (runtime::generate, as tpc
    generate runs it), after one warm-up generation like onnxruntime's."""
    import tpc
    e = tpc.Engine(engine, threads=threads)
    e.generate(prompt, 1)
    r = e.generate(prompt, 1)
    return int(r.tokens[0, 0]), r.time_to_first_token_ms


def main(argv=None):
    ap = past_bench.arg_parser(__doc__, kv_cache=256)
    ap.add_argument("--prompt", type=int, default=128)
    args = ap.parse_args(argv)
    # The tpc Python package of the same build as --tpc.
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(args.tpc))), "python"))
    cfg, model = past_bench.gpt2_small_past(args.layers)
    info = machine.cpu_info()
    work = tempfile.mkdtemp(prefix="tpc-prefill-")
    prompt = np.random.default_rng(0).integers(0, cfg["vocab"], size=(1, args.prompt), dtype=np.int64)
    engines = {}
    for name, tp, shapes in (("range1", 1, True), ("range2", 2, True), ("token1", 1, False)):
        engines[name] = os.path.join(work, name)
        extra = ["--input-shape", "input_ids=1x1..%d" % args.prompt] if shapes else []
        subprocess.run([args.tpc, "compile", model, "--tp", str(tp), "--kv-cache",
                        str(args.kv_cache), "-o", engines[name], "--quiet"] + extra, check=True)
    runners = {
        "tpc tp1 x1, prompt in one forward": lambda: tpc_first_token(engines["range1"], prompt, 1),
        "tpc tp1 x2, prompt in one forward": lambda: tpc_first_token(engines["range1"], prompt, 2),
        "tpc tp2 x1, prompt in one forward": lambda: tpc_first_token(engines["range2"], prompt, 1),
        "tpc tp1 x1, one token per forward": lambda: tpc_first_token(engines["token1"], prompt, 1),
        "onnxruntime x1": lambda: ort_prefill(model, prompt, 1),
        "onnxruntime x2": lambda: ort_prefill(model, prompt, 2),
    }
    results = past_bench.alternate(runners, args.rounds)
    times = {name: [ms for _, ms in r] for name, r in results.items()}
    first = {name: r[-1][0] for name, r in results.items()}
    ref = first["onnxruntime x1"]
    base = {"1": statistics.median(times["onnxruntime x1"]),
            "2": statistics.median(times["onnxruntime x2"])}
    rows = []
    for name in runners:
        med = statistics.median(times[name])
        cores = "2" if ("x2" in name or "tp2" in name) else "1"
        rows.append({"runner": name, "median_ms": med, "min_ms": min(times[name]),
                     "vs_onnxruntime_same_cores": base[cores] / med,
                     "first_token_agrees": first[name] == ref})
    result = {"cpu": info, "layers": args.layers, "prompt": args.prompt,
              "kv_cache": args.kv_cache, "rounds": args.rounds, "rows": rows}
    print(f"CPU: {info.get('model_name')} ({', '.join(info.get('simd', []))})")
    print(f"prefill, GPT-2-small shape ({args.layers} layers), prompt {args.prompt} tokens, "
          f"tpc --kv-cache {args.kv_cache}, median of {args.rounds} rounds")
    print("| runner | time to first token ms (median) | min | onnxruntime / this (same cores) "
          "| same first token |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['runner']} | {r['median_ms']:.1f} | {r['min_ms']:.1f} "
              f"| {r['vs_onnxruntime_same_cores']:.2f}x | {'yes' if r['first_token_agrees'] else 'NO'} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0 if all(r["first_token_agrees"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
