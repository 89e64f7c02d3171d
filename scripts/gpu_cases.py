#!/usr/bin/env python3
"""The CUDA backend's checks, prepared on a machine with the compiler and run
on a machine with a GPU that has neither MLIR nor the build (scripts/gpu-check).

    gpu_cases.py prepare --tpc build/bin/tpc --out BUNDLE [--bench]
    gpu_cases.py run --tpc BUNDLE/bin/tpc_runtime_cli --bundle BUNDLE --out OUT
    gpu_cases.py bench-torch --bundle BUNDLE --out OUT

prepare compiles the committed test models into engines (fp32 at tp 1 for
every model with expected outputs; tp 2 and 4 and bf16/fp16 for several
architectures; decode engines of the with-past exports for generate), runs
each on the CPU backend to keep its outputs as a second reference, and writes
BUNDLE/cases.json. To keep the bundle small, a weight shard whose tensors are
byte-for-byte initializers of the source model is replaced by a recipe: the
shard's safetensors header verbatim, and for each tensor the initializer it
copies or its bytes inline. `run` rebuilds each such shard from the model
(which travels with the repository, or for the benchmark model is rewritten
by bench/make_gpt2_model.py from its seed) and checks the sha256 that
engine.json records before anything runs.

run then executes every case on the GPU with `tpc run --backend cuda` (ranks
above one emulated on the one GPU) and `tpc generate --backend cuda`, and
compares with onnxruntime's outputs (test/models/*/expected), with the CPU
backend's outputs of the same engine, and with transformers' greedy tokens.
Bad token ids must fail the run naming the node and the value. Results go to
OUT/cases.json; the exit status is 0 only when every case passed.

bench-torch times the benchmark engine (GPT-2-medium shape) against PyTorch
eager on the same GPU, same weights, same inputs, and writes OUT/bench.json.
"""
import argparse
import concurrent.futures as cf
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = os.path.join(ROOT, "test", "models")

# Architectures checked at more than one rank, and in half precision.
TP2 = ["gpt2_op17", "llama_op17", "bert_op17", "hf_falcon_gqa_torchscript",
       "hf_gemma2_torchscript", "hf_mixtral_torchscript", "hf_phi3_dynamo",
       "hf_bloom_torchscript", "hf_gptneox_torchscript", "ortopt_llama"]
TP4 = ["gpt2_op17", "llama_op17", "hf_falcon_mqa_torchscript"]
HALF = [("gpt2_op17", "bf16", 1), ("llama_op17", "bf16", 1),
        ("bert_op17", "bf16", 1), ("gpt2_op17", "fp16", 1),
        ("llama_op17", "bf16", 2)]
BENCH = {"hidden": 1024, "heads": 16, "layers": 24, "seqs": [512, 1]}


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for blk in iter(lambda: f.read(1 << 22), b""):
            h.update(blk)
    return h.hexdigest()


# --- weight recipes ----------------------------------------------------------

def source_tensors(model):
    """{name: bytes} of the model's initializers. A model written by
    bench/make_gpt2_model.py is read through its layout (one weights.bin)."""
    d = os.path.dirname(model)
    meta = os.path.join(d, "meta.json")
    if os.path.exists(os.path.join(d, "weights.bin")) and os.path.exists(meta):
        layout = json.load(open(meta)).get("layout")
        if layout:
            raw = np.memmap(os.path.join(d, "weights.bin"), dtype=np.uint8, mode="r")
            return {k: raw[off:off + n] for k, (shape, off, n) in layout.items()}
    import onnx
    from onnx import numpy_helper
    m = onnx.load(model)
    return {t.name: np.ascontiguousarray(numpy_helper.to_array(t)).view(np.uint8).reshape(-1)
            for t in m.graph.initializer}


def read_safetensors_header(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        return n, f.read(n)


def pack_weights(engine, model):
    """Replace engine/rank*.safetensors by recipes where that saves bytes."""
    src = None
    by_digest = {}
    saved = 0
    for f in sorted(os.listdir(engine)):
        if not (f.startswith("rank") and f.endswith(".safetensors")):
            continue
        if src is None:
            src = source_tensors(model)
            for name, b in src.items():
                by_digest.setdefault(hashlib.sha1(b).hexdigest(), name)
        path = os.path.join(engine, f)
        n, header = read_safetensors_header(path)
        data = np.fromfile(path, dtype=np.uint8)[8 + n:]
        spans = sorted((v["data_offsets"][0], v["data_offsets"][1])
                       for k, v in json.loads(header).items() if k != "__metadata__")
        pieces, inline, pos = [], bytearray(), 0

        def add_inline(a, b):
            pieces.append({"inline": [len(inline), b - a]})
            inline.extend(data[a:b].tobytes())

        for a, b in spans:
            if a > pos:
                add_inline(pos, a)
            name = by_digest.get(hashlib.sha1(data[a:b]).hexdigest()) if b > a else None
            if name is not None and len(src[name]) == b - a:
                pieces.append({"source": name})
            else:
                add_inline(a, b)
            pos = max(pos, b)
        if pos < len(data):
            add_inline(pos, len(data))
        if len(inline) * 2 > len(data):
            continue  # mostly not initializers (shards, converted dtypes): keep
        recipe = {"header": header.decode("utf-8"), "pieces": pieces,
                  "inline": f + ".inline", "sha256": sha256(path)}
        with open(path + ".inline", "wb") as g:
            g.write(inline)
        with open(path + ".recipe.json", "w") as g:
            json.dump(recipe, g)
        saved += os.path.getsize(path) - len(inline)
        os.remove(path)
    return saved


def unpack_weights(engine, model):
    """Rebuild the shards packed by pack_weights; check their digests."""
    src = None
    for f in sorted(os.listdir(engine)):
        if not f.endswith(".safetensors.recipe.json"):
            continue
        if src is None:
            src = source_tensors(model)
        recipe = json.load(open(os.path.join(engine, f)))
        out = os.path.join(engine, f[:-len(".recipe.json")])
        inline = open(os.path.join(engine, recipe["inline"]), "rb").read()
        header = recipe["header"].encode("utf-8")
        with open(out + ".tmp", "wb") as g:
            g.write(struct.pack("<Q", len(header)))
            g.write(header)
            for p in recipe["pieces"]:
                if "source" in p:
                    g.write(src[p["source"]].tobytes())
                else:
                    a, n = p["inline"]
                    g.write(inline[a:a + n])
        got = sha256(out + ".tmp")
        if got != recipe["sha256"]:
            raise RuntimeError("%s: rebuilt from %s with sha256 %s, the engine "
                               "records %s" % (out, model, got, recipe["sha256"]))
        os.replace(out + ".tmp", out)


# --- prepare -----------------------------------------------------------------

def sh(cmd, timeout=600):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError("%s: exit %d\n%s" % (" ".join(cmd), r.returncode, r.stderr[-2000:]))
    return r


def rank_rule(meta, tp):
    heads, kv = meta["heads"], meta.get("kv_heads", meta["heads"])
    return heads % tp == 0 and (kv % tp == 0 or tp % kv == 0)


def bad_index_cases(tpc, out, key, mdir, tp):
    """Out-of-range token ids (above the table and below minus its size):
    the run must fail naming the Gather node and the value, as on the CPU."""
    bad_dir = os.path.join(out, "bad_inputs")
    os.makedirs(bad_dir, exist_ok=True)
    ids = np.load(os.path.join(mdir, "inputs", "input_ids.npy"))
    cases = []
    for value in (100000, -100000):
        bad = ids.copy()
        bad.flat[3] = value
        p = os.path.join(bad_dir, "ids_%d.npy" % value)
        np.save(p, bad)
        r = subprocess.run([tpc, "run", os.path.join(out, "engines", key), "--oversubscribe",
                            "--input", "input_ids=" + p], capture_output=True, text=True)
        err = r.stderr.strip()
        if r.returncode == 0 or str(value) not in err:
            raise RuntimeError("the CPU backend did not refuse token id %d: %s" % (value, err))
        cases.append({"id": "%s bad id %d" % (key, value), "kind": "bad-index",
                      "engine": "engines/" + key, "tp": tp,
                      "inputs": {"input_ids": os.path.relpath(p, out)},
                      "cpu_error": err.splitlines()[-1], "value": value})
    return cases


def prepare(args):
    out = os.path.abspath(args.out)
    eng_root = os.path.join(out, "engines")
    os.makedirs(eng_root, exist_ok=True)
    cases, saved = [], 0

    def compile_engine(key, model, tp, extra):
        eng = os.path.join(eng_root, key)
        shutil.rmtree(eng, ignore_errors=True)
        sh([args.tpc, "compile", model, "--tp", str(tp), "-o", eng, "--quiet"] + extra)
        return eng

    for name in sorted(os.listdir(MODELS)):
        mdir = os.path.join(MODELS, name)
        if not (os.path.exists(os.path.join(mdir, "meta.json")) and
                os.path.isdir(os.path.join(mdir, "expected"))):
            continue
        meta = json.load(open(os.path.join(mdir, "meta.json")))
        shapes = []
        for inp, shape in meta["input_shapes"].items():
            shapes += ["--input-shape", "%s=%s" % (inp, "x".join(map(str, shape)))]
        variants = [("fp32", 1)]
        variants += [("fp32", 2)] if name in TP2 else []
        variants += [("fp32", 4)] if name in TP4 else []
        variants += [(d, t) for m, d, t in HALF if m == name]
        for dtype, tp in variants:
            if not rank_rule(meta, tp):
                continue
            key = "%s_%s_tp%d" % (name, dtype, tp)
            extra = shapes + (["--dtype", dtype] if dtype != "fp32" else [])
            eng = compile_engine(key, os.path.join(mdir, "model.onnx"), tp, extra)
            inputs = {inp: os.path.relpath(os.path.join(mdir, "inputs", inp + ".npy"), ROOT)
                      for inp in meta["input_shapes"]}
            cpu_out = os.path.join(out, "cpu", key)
            shutil.rmtree(cpu_out, ignore_errors=True)
            sh([args.tpc, "run", eng, "--output-dir", cpu_out, "--oversubscribe"] +
               sum([["--input", "%s=%s" % (k, os.path.join(ROOT, v))] for k, v in inputs.items()], []))
            if key in ("gpt2_op17_fp32_tp1", "gpt2_op17_fp32_tp2"):
                cases += bad_index_cases(args.tpc, out, key, mdir, tp)
            saved += pack_weights(eng, os.path.join(mdir, "model.onnx"))
            case = {"id": key, "kind": "run", "model": os.path.relpath(mdir, ROOT),
                    "engine": os.path.relpath(eng, out), "tp": tp, "dtype": dtype,
                    "inputs": inputs, "cpu": os.path.relpath(cpu_out, out), "flags": []}
            cases.append(case)
            if key == "gpt2_op17_fp32_tp1":
                for flags in (["--cuda-graph", "off"], ["--sync-steps"]):
                    cases.append(dict(case, id=key + " " + " ".join(flags), flags=flags))
            print("prepared", key, flush=True)

    # Decode engines of the with-past exports, for tpc generate.
    for name in sorted(os.listdir(MODELS)):
        ref = os.path.join(MODELS, name, "greedy.json")
        if not os.path.exists(ref):
            continue
        for tp in (1, 2):
            key = "%s_decode_tp%d" % (name, tp)
            model = os.path.join(MODELS, name, "model.onnx")
            eng = compile_engine(key, model, tp, ["--kv-cache", "24"])
            saved += pack_weights(eng, model)
            cases.append({"id": key, "kind": "generate", "model": os.path.relpath(os.path.dirname(model), ROOT),
                          "engine": os.path.relpath(eng, out), "tp": tp})
            print("prepared", key, flush=True)

    if args.bench:
        bdir = os.path.join(out, "bench_model")
        gen = [sys.executable, os.path.join(ROOT, "bench", "make_gpt2_model.py"), bdir,
               "--hidden", str(BENCH["hidden"]), "--heads", str(BENCH["heads"]),
               "--layers", str(BENCH["layers"])] + sum([["--seq", str(s)] for s in BENCH["seqs"]], [])
        sh(gen, timeout=1200)
        for s in BENCH["seqs"]:
            key = "bench_s%d" % s
            model = os.path.join(bdir, "model_s%d.onnx" % s)
            eng = compile_engine(key, model, 1, [])
            saved += pack_weights(eng, model)
            print("prepared", key, flush=True)
        bench = dict(BENCH, weights_sha256=sha256(os.path.join(bdir, "weights.bin")),
                     generator=[os.path.relpath(a, ROOT) if a.startswith(ROOT) else a
                                for a in gen[1:]][:1] + gen[3:])
        # The weights are rewritten there from the seed; only the graphs,
        # inputs and meta.json travel.
        os.remove(os.path.join(bdir, "weights.bin"))
        json.dump(bench, open(os.path.join(out, "bench.json"), "w"), indent=1)

    json.dump(cases, open(os.path.join(out, "cases.json"), "w"), indent=1)
    print("%d cases; recipes saved %.1f MiB" % (len(cases), saved / (1 << 20)))


# --- run ---------------------------------------------------------------------

def compare(got_dir, ref_dir):
    """max |diff| and the largest |ref| over the .npy files of ref_dir."""
    worst, scale = 0.0, 0.0
    for f in sorted(os.listdir(ref_dir)):
        if not f.endswith(".npy"):
            continue
        want = np.load(os.path.join(ref_dir, f)).astype(np.float64)
        p = os.path.join(got_dir, f)
        if not os.path.exists(p):
            return float("inf"), 0.0, "no %s" % f
        got = np.load(p).astype(np.float64)
        if got.shape != want.shape:
            return float("inf"), 0.0, "%s: shape %s, want %s" % (f, got.shape, want.shape)
        if not np.all(np.isfinite(got)):
            return float("inf"), 0.0, "%s: not finite" % f
        worst = max(worst, float(np.max(np.abs(got - want))) if got.size else 0.0)
        scale = max(scale, float(np.max(np.abs(want))) if want.size else 0.0)
    return worst, scale, ""


def run_case(c, args, work):
    bundle = os.path.abspath(args.bundle)
    eng = os.path.join(bundle, c["engine"])
    row = {"id": c["id"], "kind": c["kind"], "tp": c["tp"]}
    t0 = time.time()
    emulate = ["--emulate-ranks"] if c["tp"] > 1 else []
    backend = ["--backend", args.backend]
    flags = c.get("flags", [])
    if args.backend == "cpu":  # a dry run of the script on a machine without a GPU
        emulate, flags = ["--oversubscribe"], []
    if c["kind"] in ("run", "bad-index"):
        res = os.path.join(work, c["id"].replace(" ", "_"))
        shutil.rmtree(res, ignore_errors=True)
        inputs = []
        for k, v in c["inputs"].items():
            base = bundle if c["kind"] == "bad-index" else ROOT
            inputs += ["--input", "%s=%s" % (k, os.path.join(base, v))]
        cmd = [args.tpc, "run", eng, "--output-dir", res] + backend + \
            emulate + inputs + flags
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        row["seconds"] = round(time.time() - t0, 2)
        if c["kind"] == "bad-index":
            err = r.stderr.strip()
            want = str(c["value"])
            ok = r.returncode != 0 and want in err and "Gather" in err
            row.update(result="pass" if ok else "FAIL", rc=r.returncode,
                       error=err.splitlines()[-1][:300] if err else "",
                       cpu_error=c["cpu_error"][:300])
            return row
        if r.returncode != 0:
            row["result"] = "FAIL: exit %d: %s" % (r.returncode, r.stderr.strip()[-600:])
            return row
        d_ort, s_ort, why = compare(res, os.path.join(ROOT, c["model"], "expected"))
        d_cpu, s_cpu, why2 = compare(res, os.path.join(bundle, c["cpu"]))
        # fp32: accumulation order only. Half types keep 8 (bf16) or 11
        # (fp16) bits: against onnxruntime's fp32, 5% of the largest logit;
        # against the CPU backend running the same half engine, 2%.
        if c["dtype"] == "fp32":
            tol_ort, tol_cpu = 1e-3 * max(1.0, s_ort), 1e-3 * max(1.0, s_cpu)
        else:
            tol_ort, tol_cpu = 0.05 * max(1.0, s_ort), 0.02 * max(1.0, s_cpu)
        ok = not why and not why2 and d_ort <= tol_ort and d_cpu <= tol_cpu
        row.update(result="pass" if ok else "FAIL" + (": " + (why or why2) if why or why2 else ""),
                   dtype=c["dtype"], diff_ort=d_ort, tol_ort=tol_ort, diff_cpu=d_cpu,
                   tol_cpu=tol_cpu, scale=s_ort)
        return row
    # generate
    ref = json.load(open(os.path.join(ROOT, c["model"], "greedy.json")))
    res = os.path.join(work, c["id"])
    shutil.rmtree(res, ignore_errors=True)
    os.makedirs(res)
    prompt = os.path.join(res, "prompt.npy")
    np.save(prompt, np.array([ref["prompt"]], np.int64))
    cmd = [args.tpc, "generate", eng, "--input-ids", prompt, "--max-new-tokens",
           str(ref["max_new_tokens"]), "--output-dir", res, "--save-logits", "--json"] + \
        backend + emulate
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    row["seconds"] = round(time.time() - t0, 2)
    if r.returncode != 0:
        row["result"] = "FAIL: exit %d: %s" % (r.returncode, r.stderr.strip()[-600:])
        return row
    tokens = np.load(os.path.join(res, "generated_ids.npy"))[0].tolist()
    logits = np.load(os.path.join(res, "logits.npy"))
    expected = np.array(ref["logits"])
    diff = float(np.abs(logits - expected).max()) if logits.shape == expected.shape else float("inf")
    ok = tokens == ref["tokens"] and diff <= 1e-3
    try:
        per_token = json.loads(r.stdout)["per_token_ms"]["median"]
    except (ValueError, KeyError):
        per_token = None
    row.update(result="pass" if ok else "FAIL: tokens %s, want %s" % (tokens, ref["tokens"]),
               diff_logits=diff, per_token_ms=per_token)
    return row


def run(args):
    bundle = os.path.abspath(args.bundle)
    out = os.path.abspath(args.out)
    work = os.path.join(out, "work")
    os.makedirs(work, exist_ok=True)
    cases = json.load(open(os.path.join(bundle, "cases.json")))
    rows = []
    for c in cases:
        if c["kind"] in ("run", "generate") and c.get("model"):
            try:
                unpack_weights(os.path.join(bundle, c["engine"]), os.path.join(ROOT, c["model"], "model.onnx"))
            except Exception as e:  # noqa: BLE001 - reported as the case's failure
                rows.append({"id": c["id"], "kind": c["kind"], "tp": c["tp"],
                             "result": "FAIL: weights: %s" % e})
                print("%-48s %s" % (c["id"], rows[-1]["result"]), flush=True)
    skip = {r["id"] for r in rows}
    todo = [c for c in cases if c["id"] not in skip]
    if args.only:
        todo = [c for c in todo if args.only in c["id"]]
    with cf.ThreadPoolExecutor(args.jobs) as pool:
        futs = {pool.submit(run_case, c, args, work): c for c in todo}
        for fut in cf.as_completed(futs):
            c = futs[fut]
            try:
                row = fut.result()
            except Exception as e:  # noqa: BLE001
                row = {"id": c["id"], "kind": c["kind"], "tp": c["tp"], "result": "FAIL: %s" % e}
            rows.append(row)
            print("%-48s %s" % (row["id"], row["result"] if row["result"] == "pass" else row["result"][:400]),
                  flush=True)
    rows.sort(key=lambda r: r["id"])
    json.dump(rows, open(os.path.join(out, "cases.json"), "w"), indent=1)
    bad = [r for r in rows if r["result"] != "pass"]
    print("%d of %d cases passed" % (len(rows) - len(bad), len(rows)))
    return 1 if bad or not rows else 0


# --- the benchmark -----------------------------------------------------------

def bench_torch(args):
    import torch
    import torch.nn.functional as F
    bundle = os.path.abspath(args.bundle)
    out = os.path.abspath(args.out)
    spec = json.load(open(os.path.join(bundle, "bench.json")))
    d = os.path.join(bundle, "bench_model")
    if not os.path.exists(os.path.join(d, "weights.bin")):
        sh([sys.executable, os.path.join(ROOT, spec["generator"][0]), d] + spec["generator"][1:], timeout=600)
    got = sha256(os.path.join(d, "weights.bin"))
    if got != spec["weights_sha256"]:
        raise SystemExit("bench weights differ from the compiled ones: sha256 %s, want %s"
                         % (got, spec["weights_sha256"]))
    for s in spec["seqs"]:
        unpack_weights(os.path.join(bundle, "engines", "bench_s%d" % s), os.path.join(d, "model_s%d.onnx" % s))
    meta = json.load(open(os.path.join(d, "meta.json")))
    cfg, layout = meta["config"], meta["layout"]
    dev = torch.device("cuda")
    raw = np.memmap(os.path.join(d, "weights.bin"), dtype=np.uint8, mode="r")

    def w(name):
        shape, off, n = layout[name]
        return torch.from_numpy(np.frombuffer(raw, np.float32, n // 4, off).reshape(shape).copy()).to(dev)

    h, H, L = cfg["hidden"], cfg["heads"], cfg["layers"]
    P = {k: w(k) for k in layout}

    def forward(ids):
        S = ids.shape[1]
        x = P["transformer.wte.weight"][ids] + P["transformer.wpe.weight"][:S]
        for i in range(L):
            p = "transformer.h.%d." % i
            a = F.layer_norm(x, (h,), P[p + "ln_1.weight"], P[p + "ln_1.bias"], 1e-5)
            qkv = a @ P[p + "attn.c_attn.weight"] + P[p + "attn.c_attn.bias"]
            q, k, v = (t.view(1, S, H, h // H).transpose(1, 2) for t in qkv.split(h, -1))
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            o = o.transpose(1, 2).reshape(1, S, h)
            x = x + o @ P[p + "attn.c_proj.weight"] + P[p + "attn.c_proj.bias"]
            m = F.layer_norm(x, (h,), P[p + "ln_2.weight"], P[p + "ln_2.bias"], 1e-5)
            m = F.gelu(m @ P[p + "mlp.c_fc.weight"] + P[p + "mlp.c_fc.bias"], approximate="tanh")
            x = x + m @ P[p + "mlp.c_proj.weight"] + P[p + "mlp.c_proj.bias"]
        x = F.layer_norm(x, (h,), P["transformer.ln_f.weight"], P["transformer.ln_f.bias"], 1e-5)
        return x @ P["onnx::MatMul_lm_head"]

    def timed(fn, warm=5, iters=30):
        for _ in range(warm):
            fn()
        torch.cuda.synchronize()
        ts = []
        for _ in range(iters):
            t0 = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            ts.append((time.perf_counter() - t0) * 1e3)
        return float(np.median(ts))

    src = torch.empty(1 << 28, dtype=torch.float32, device=dev)
    dst = torch.empty_like(src)
    ms = timed(lambda: dst.copy_(src), 3, 10)
    copy_gbps = 2 * src.numel() * 4 / (ms * 1e-3) / 1e9
    del src, dst
    wbytes = sum(n for k, (s, o, n) in layout.items()
                 if k not in ("transformer.wte.weight", "transformer.wpe.weight"))
    floor_ms = wbytes / (copy_gbps * 1e9) * 1e3
    rows = []
    for tf32 in (False, True):
        for seq in spec["seqs"]:
            torch.backends.cuda.matmul.allow_tf32 = tf32
            torch.backends.cudnn.allow_tf32 = tf32
            eng = os.path.join(bundle, "engines", "bench_s%d" % seq)
            ids_path = os.path.join(d, "inputs", "input_ids_s%d.npy" % seq)
            res = os.path.join(out, "bench_out_s%d_%s" % (seq, "tf32" if tf32 else "fp32"))
            shutil.rmtree(res, ignore_errors=True)
            cmd = [args.tpc, "run", eng, "--backend", "cuda", "--input", "input_ids=" + ids_path,
                   "--output-dir", res, "--warmup", "5", "--iterations", "30", "--json"]
            r = subprocess.run(cmd + (["--tf32"] if tf32 else []), capture_output=True, text=True, timeout=300)
            row = {"seq": seq, "math": "tf32" if tf32 else "fp32"}
            if r.returncode != 0:
                row["tpc_error"] = r.stderr.strip()[-600:]
            else:
                tj = json.loads(r.stdout)
                row.update(tpc_ms=round(tj["latency_ms"]["median"], 3),
                           tpc_device_ms=round(tj.get("device_ms", {}).get("median", float("nan")), 3))
            with torch.inference_mode():
                ids_host = torch.from_numpy(np.load(ids_path)).pin_memory()
                logits_host = torch.empty((1, seq, cfg["vocab"]), dtype=torch.float32).pin_memory()

                def step():
                    logits_host.copy_(forward(ids_host.to(dev, non_blocking=True)), non_blocking=True)

                row["torch_ms"] = round(timed(step), 3)
                ids = ids_host.to(dev)
                row["torch_no_copies_ms"] = round(timed(lambda: forward(ids)), 3)
                if "tpc_ms" in row:
                    row["tpc_over_torch"] = round(row["tpc_ms"] / row["torch_ms"], 3)
                    row["floor_share"] = round(floor_ms / row["tpc_ms"], 3)
                    torch.backends.cuda.matmul.allow_tf32 = False
                    ref = forward(ids).double().cpu().numpy()
                    got = np.load(os.path.join(res, "logits.npy")).astype(np.float64)
                    row["max_abs_diff_vs_torch_fp32"] = float(np.max(np.abs(got - ref)))
                    row["max_abs_logit"] = float(np.max(np.abs(ref)))
            rows.append(row)
            print(row, flush=True)
    res = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
           "copy_gbps": round(copy_gbps, 1), "weight_bytes": wbytes,
           "floor_ms": round(floor_ms, 3), "rows": rows}
    json.dump(res, open(os.path.join(out, "bench.json"), "w"), indent=1)
    bad = [r for r in rows if "tpc_ms" not in r or
           r["max_abs_diff_vs_torch_fp32"] > (1e-3 if r["math"] == "fp32" else 5e-2) * max(1.0, r["max_abs_logit"])]
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--tpc", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--bench", action="store_true")
    r = sub.add_parser("run")
    r.add_argument("--tpc", required=True)
    r.add_argument("--bundle", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--jobs", type=int, default=4)
    r.add_argument("--only", default="")
    r.add_argument("--backend", default="cuda", help="cpu: a dry run without a GPU")
    b = sub.add_parser("bench-torch")
    b.add_argument("--tpc", required=True)
    b.add_argument("--bundle", required=True)
    b.add_argument("--out", required=True)
    args = ap.parse_args()
    return {"prepare": prepare, "run": run, "bench-torch": bench_torch}[args.cmd](args) or 0


if __name__ == "__main__":
    sys.exit(main())
