#!/usr/bin/env python3
"""Decode of a Hub-size model against the cache's capacity, and against
onnxruntime on the same file.

    bench_hub_decode.py --tpc build/bin/tpc [--model qwen2.5-0.5b]
        [--capacities 256,8192,32768] [--dtypes fp32,bf16] [--threads 2]
        [--prompt 8] [--tokens 32] [--rounds 3] [--json OUT] [--no-ort]

The model is one of bench/make_hub_model.py's (built on first use into
bench/.cache/hub/, optimum's with-past export; the generator virtualenv
must exist: scripts/gen-models --venv-only). For each dtype and cache
capacity, `tpc compile --kv-cache C` (timed against `cp` of the data) and
`tpc generate --json` from the same prompt: the decode steps read the same
positions (prompt .. prompt + tokens) whatever the capacity, so their
medians compare the cost of a step with the cache's capacity, and the
prompt's forward gives the time to first token. onnxruntime runs its own
past/present loop (IO binding, presents fed back as pasts) on the same
file in the same run, with the same threads. Greedy tokens must agree
across capacities (fp32: with onnxruntime too). Reported: ms/token,
its ratio to the smallest capacity, onnxruntime / tpc, and the weight and
KV bytes read per token (every weight but the tables only gathered from)
over the step time against measured DRAM read bandwidth. Every engine is
compiled first; each round then runs every engine and onnxruntime in turn,
and the medians are over the rounds.
"""
import argparse
import json
import os
import shutil
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

GEN_VENV = os.environ.get("TPC_GEN_VENV", "/opt/tpc-gen")


def hub_model(name):
    """The export folder of `name`, made on first use."""
    r = subprocess.run([os.path.join(GEN_VENV, "bin", "python"),
                        os.path.join(HERE, "make_hub_model.py"), name],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("make_hub_model.py %s failed:\n%s" % (name, r.stderr))
    return r.stdout.strip().splitlines()[-1]


def model_bytes(folder):
    return sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder)
               if f.startswith("model.onnx"))


def streamed_fraction(model):
    """The share of the model's initializer bytes a decode step reads: all
    but the tables only gathered from (an embedding reads one row of its
    table per token; a tied LM head that reads the same table counts)."""
    import onnx
    m = onnx.load(model, load_external_data=False)
    size = {}
    for t in m.graph.initializer:
        n = 1
        for d in t.dims:
            n *= d
        size[t.name] = n
    readers = {}
    for node in m.graph.node:
        for k, name in enumerate(node.input):
            if name in size:
                readers.setdefault(name, []).append((node.op_type, k))
    total = sum(size.values())
    gathered = sum(n for name, n in size.items()
                   if readers.get(name) and all(op == "Gather" and k == 0
                                                for op, k in readers[name]))
    return (total - gathered) / total if total else 1.0


def timed(args):
    t0 = time.perf_counter()
    subprocess.run(args, check=True, capture_output=True)
    return time.perf_counter() - t0


def tpc_generate(tpc, engine, prompt, tokens, threads, work):
    path = os.path.join(work, "prompt.npy")
    np.save(path, np.array([prompt], np.int64))
    r = subprocess.run([tpc, "generate", engine, "--input-ids", path,
                        "--max-new-tokens", str(tokens), "--threads", str(threads), "--json"],
                       capture_output=True, text=True, check=True)
    j = json.loads(r.stdout)
    return j["tokens"][len(prompt):] if len(j["tokens"]) > tokens else j["tokens"], j


def ort_generate(model, prompt, tokens, threads):
    """Greedy with onnxruntime's past/present loop: the prompt in one
    forward, then one token per step."""
    import onnxruntime as ort
    s = past_bench.ort_session(model, threads)
    names = {i.name: i for i in s.get_inputs()}
    pasts = [i for i in s.get_inputs() if i.name.startswith("past_key_values")]
    presents = [o.name for o in s.get_outputs() if o.name.startswith("present")]
    cur = {i.name: ort.OrtValue.ortvalue_from_numpy(
        np.zeros((1, i.shape[1], 0, i.shape[3]), np.float32)) for i in pasts}
    ids, pos, out, times = list(prompt), 0, [], []
    for step in range(tokens):
        n = len(ids)
        io = s.io_binding()
        io.bind_cpu_input("input_ids", np.array([ids], np.int64))
        if "position_ids" in names:
            io.bind_cpu_input("position_ids", np.arange(pos, pos + n, dtype=np.int64)[None])
        io.bind_cpu_input("attention_mask", np.ones((1, pos + n), np.int64))
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
        for name, v in zip(presents, outs[1:]):
            cur[name.replace("present", "past_key_values")] = v
        out.append(token)
        pos += n
        ids = [token]
    return out, {"time_to_first_token_ms": times[0],
                 "per_token_ms": {"median": statistics.median(times[1:])}}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tpc", required=True)
    ap.add_argument("--model", default="qwen2.5-0.5b")
    ap.add_argument("--capacities", default="256,8192,32768")
    ap.add_argument("--dtypes", default="fp32,bf16")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--tp", type=int, default=1)
    ap.add_argument("--prompt", type=int, default=8)
    ap.add_argument("--tokens", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--no-ort", action="store_true")
    a = ap.parse_args(argv)
    folder = hub_model(a.model)
    model = os.path.join(folder, "model.onnx")
    with open(os.path.join(folder, "hf", "config.json")) as f:
        cfg = json.load(f)
    nbytes = model_bytes(folder)
    info = machine.cpu_info()
    bw = machine.membw(1024, (a.threads,))[str(a.threads)]["best_gbs"]
    rng = np.random.default_rng(0)
    prompt = [int(t) for t in rng.integers(3, cfg["vocab_size"], a.prompt)]
    work = tempfile.mkdtemp(prefix="tpc-hub-", dir=os.path.join(HERE, ".cache"))
    caps = [int(c) for c in a.capacities.split(",")]
    layers, kvh = cfg["num_hidden_layers"], cfg["num_key_value_heads"]
    hd = cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]
    copy_s = timed(["cp", "-r", folder, os.path.join(work, "copy")])
    shutil.rmtree(os.path.join(work, "copy"))
    streamed = streamed_fraction(model)
    rows, tokens = [], {}
    try:
        # Every engine first; then each round runs every engine and
        # onnxruntime in turn, so a slow spell of this shared machine
        # touches them all alike.
        runs = []
        for dtype in a.dtypes.split(","):
            for cap in caps:
                engine = os.path.join(work, "e-%s-%d" % (dtype, cap))
                compile_s = timed([a.tpc, "compile", model, "--tp", str(a.tp), "--kv-cache", str(cap),
                                   "--dtype", dtype, "--input-shape",
                                   "input_ids=1x1..%d" % a.prompt, "-o", engine, "--quiet"])
                shard = sum(os.path.getsize(os.path.join(engine, f)) for f in os.listdir(engine)
                            if f.endswith(".safetensors"))
                runs.append(dict(dtype=dtype, cap=cap, engine=engine, compile_s=compile_s,
                                 shard=shard, meds=[], ttfts=[]))
        ort_ms, ort_tt = [], []
        for _ in range(a.rounds):
            for r in runs:
                toks, j = tpc_generate(a.tpc, r["engine"], prompt, a.tokens, a.threads, work)
                r["meds"].append(j["per_token_ms"]["median"])
                r["ttfts"].append(j["time_to_first_token_ms"])
                tokens[(r["dtype"], r["cap"])] = toks
            if not a.no_ort:
                toks, j = ort_generate(model, prompt, a.tokens, a.threads)
                ort_ms.append(j["per_token_ms"]["median"])
                ort_tt.append(j["time_to_first_token_ms"])
                tokens[("onnxruntime", 0)] = toks
        for r in runs:
            elem = 2 if r["dtype"] != "fp32" else 4
            # Per step: every weight once but the tables only gathered from
            # (an embedding reads one row), and the keys and values held.
            held = a.prompt + a.tokens // 2
            kv_bytes = 2 * layers * kvh * hd * elem * held
            med = statistics.median(r["meds"])
            rows.append({"runner": "tpc %s --kv-cache %d" % (r["dtype"], r["cap"]),
                         "dtype": r["dtype"], "capacity": r["cap"], "ms_per_token": med,
                         "rounds_ms_per_token": r["meds"],
                         "ttft_ms": statistics.median(r["ttfts"]), "compile_s": r["compile_s"],
                         "compile_vs_cp": r["compile_s"] / copy_s, "shard_bytes": r["shard"],
                         "read_fraction_of_membw":
                             (r["shard"] * streamed / a.tp + kv_bytes) / (med / 1000) / 1e9 / bw})
        if ort_ms:
            med = statistics.median(ort_ms)
            rows.append({"runner": "onnxruntime fp32", "dtype": "fp32", "capacity": None,
                         "ms_per_token": med, "rounds_ms_per_token": ort_ms,
                         "ttft_ms": statistics.median(ort_tt),
                         "read_fraction_of_membw": nbytes * streamed / (med / 1000) / 1e9 / bw})
    finally:
        shutil.rmtree(work, ignore_errors=True)
    ort_ms = next((r["ms_per_token"] for r in rows if r["runner"].startswith("onnxruntime")), None)
    ok = True
    for r in rows:
        base = next(x for x in rows if x["dtype"] == r["dtype"])
        r["vs_smallest_capacity"] = r["ms_per_token"] / base["ms_per_token"]
        if ort_ms:
            r["onnxruntime_over_this"] = ort_ms / r["ms_per_token"]
        key = (r["dtype"], r["capacity"]) if r["capacity"] else ("onnxruntime", 0)
        ref = tokens[(r["dtype"], caps[0])] if r["capacity"] else tokens[("fp32", caps[0])]
        r["tokens_agree"] = tokens[key] == ref
        ok &= r["tokens_agree"] or r["dtype"] != "fp32"
    print(f"CPU: {info.get('model_name')} ({', '.join(info.get('simd', []))}); "
          f"DRAM read {bw:.1f} GB/s ({a.threads} threads)")
    print(f"{a.model} ({nbytes / 1e9:.2f} GB of fp32 weights), tp {a.tp}, {a.threads} threads, "
          f"prompt {a.prompt}, {a.tokens} tokens, median of {a.rounds} rounds; cp of the model "
          f"{copy_s:.1f} s")
    print("| runner | ms/token | vs smallest cache | onnxruntime / this | TTFT ms "
          "| compile / cp | of DRAM bw | same tokens |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['runner']} | {r['ms_per_token']:.1f} | {r['vs_smallest_capacity']:.2f}x "
              f"| {r.get('onnxruntime_over_this', float('nan')):.2f}x | {r['ttft_ms']:.0f} "
              f"| {r.get('compile_vs_cp', float('nan')):.1f}x "
              f"| {100 * r['read_fraction_of_membw']:.0f}% | {'yes' if r['tokens_agree'] else 'NO'} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"cpu": info, "membw_gbs": bw, "model": a.model, "rows": rows}, f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
