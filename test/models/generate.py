#!/usr/bin/env python3
"""Export the committed test models under test/models/.

Builds small GPT-2, Llama and BERT models from transformers' own model classes
(tiny configs, seeded random weights, eager attention), exports each with the
TorchScript exporter at opsets 14 and 17 and with the torch.export-based
exporter at opset 18, and writes for each export:

    <name>/model.onnx            weights inline, no external data
    <name>/inputs/<input>.npy    fixed seeded inputs, shape [1, 16]
    <name>/expected/<out>.npy    onnxruntime (CPU) outputs on those inputs
    <name>/meta.json             config and version summary

plus a slightly larger, briefly trained GPT-2 demo model in demo_gpt2/.

Run with the generator venv:  /opt/tpc-gen/bin/python test/models/generate.py
Options: --only gpt2,llama,...  --out DIR  --no-dynamo  --no-demo
"""
import argparse
import collections
import contextlib
import json
import os
import shutil
import sys
import time
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import torch
import transformers

from onnx_clean import check_no_local_paths, strip_metadata

HERE = os.path.dirname(os.path.abspath(__file__))
SEQ = 16
TOL = 1e-4
TRACE_SHAPE = (2, 12)
CHECK_SHAPE = (2, 7)

torch.set_num_threads(1)
warnings.filterwarnings("ignore")
transformers.logging.set_verbosity_error()


class CausalLMLogits(torch.nn.Module):
    """input_ids -> logits, without cache or dict outputs."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids):
        return self.model(input_ids=input_ids, use_cache=False, return_dict=False)[0]


class EncoderHidden(torch.nn.Module):
    """(input_ids, attention_mask) -> last_hidden_state."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids=input_ids, attention_mask=attention_mask, return_dict=False)[0]


@contextlib.contextmanager
def no_packed_sequence_detection():
    """Disable transformers' packed-sequence detection while exporting.

    When a causal LM is called without an attention mask, transformers inspects
    position_ids (torch.diff + cumsum) to detect several sequences packed into
    one row. In eager mode this returns None for ordinary inputs, but under
    tracing it is always kept, which both fails in the TorchScript exporter
    (aten::diff has no symbolic) and adds a data-dependent mask to the graph.
    Exported graphs should match the eager single-sequence computation.
    """
    import transformers.masking_utils as mu

    saved = mu.find_packed_sequence_indices
    mu.find_packed_sequence_indices = lambda position_ids: None
    try:
        yield
    finally:
        mu.find_packed_sequence_indices = saved


def build_gpt2(n_embd=64, n_head=4, n_layer=2, n_positions=64, vocab=512, n_inner=None, pdrop=0.1):
    cfg = transformers.GPT2Config(
        n_embd=n_embd, n_head=n_head, n_layer=n_layer, n_positions=n_positions, vocab_size=vocab,
        n_inner=n_inner, activation_function="gelu_new", tie_word_embeddings=True,
        resid_pdrop=pdrop, embd_pdrop=pdrop, attn_pdrop=pdrop,
        bos_token_id=0, eos_token_id=0, use_cache=False, attn_implementation="eager",
    )
    model = transformers.GPT2LMHeadModel(cfg)
    assert model.lm_head.weight is model.transformer.wte.weight, "GPT-2 LM head is not tied"
    meta = {"family": "gpt2", "layers": n_layer, "heads": n_head, "kv_heads": n_head, "hidden": n_embd,
            "intermediate": n_inner or 4 * n_embd, "vocab": vocab, "max_positions": n_positions,
            "tied_lm_head": True, "activation": "gelu_new (tanh)", "norm": "LayerNorm (pre)"}
    return model, meta


def build_llama():
    cfg = transformers.LlamaConfig(
        hidden_size=64, num_attention_heads=8, num_key_value_heads=2, intermediate_size=172,
        num_hidden_layers=2, vocab_size=512, max_position_embeddings=128, rms_norm_eps=1e-6,
        tie_word_embeddings=False, bos_token_id=1, eos_token_id=2, pad_token_id=None,
        use_cache=False, attn_implementation="eager",
    )
    model = transformers.LlamaForCausalLM(cfg)
    meta = {"family": "llama", "layers": 2, "heads": 8, "kv_heads": 2, "hidden": 64, "intermediate": 172,
            "vocab": 512, "max_positions": 128, "tied_lm_head": False, "activation": "silu (SwiGLU)",
            "norm": "RMSNorm (pre)", "rope_theta": float(getattr(cfg, "rope_theta", None)
                                                         or cfg.rope_parameters["rope_theta"])}
    return model, meta


def build_bert():
    cfg = transformers.BertConfig(
        hidden_size=64, num_attention_heads=4, num_hidden_layers=2, intermediate_size=128,
        vocab_size=512, max_position_embeddings=64, hidden_act="gelu", pad_token_id=0,
        use_cache=False, attn_implementation="eager",
    )
    model = transformers.BertModel(cfg, add_pooling_layer=False)
    meta = {"family": "bert", "layers": 2, "heads": 4, "kv_heads": 4, "hidden": 64, "intermediate": 128,
            "vocab": 512, "max_positions": 64, "activation": "gelu (erf)", "norm": "LayerNorm (post)"}
    return model, meta


FAMILIES = {
    "gpt2": dict(build=build_gpt2, seed=1, wrap=CausalLMLogits, inputs=["input_ids"], outputs=["logits"]),
    "llama": dict(build=build_llama, seed=2, wrap=CausalLMLogits, inputs=["input_ids"], outputs=["logits"]),
    "bert": dict(build=build_bert, seed=3, wrap=EncoderHidden, inputs=["input_ids", "attention_mask"],
                 outputs=["last_hidden_state"]),
}
EXPORTS = [("torchscript", 14), ("torchscript", 17), ("dynamo", 18)]


def make_inputs(names, shape, vocab, seed):
    rng = np.random.default_rng(seed)
    feeds = {"input_ids": rng.integers(0, vocab, size=shape, dtype=np.int64)}
    if "attention_mask" in names:
        mask = np.ones(shape, dtype=np.int64)
        mask[:, -3:] = 0
        feeds["attention_mask"] = mask
    return feeds


def torch_run(wrapper, feeds):
    with torch.no_grad():
        out = wrapper(*[torch.from_numpy(v) for v in feeds.values()])
    return [out.numpy().astype(np.float32)]


def ort_session(path):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def export(wrapper, path, exporter, opset, in_names, out_names, trace_feeds, static=False):
    args = tuple(torch.from_numpy(v) for v in trace_feeds.values())
    with no_packed_sequence_detection():
        if exporter == "torchscript":
            axes = {} if static else {n: {0: "batch", 1: "sequence"} for n in in_names + out_names}
            torch.onnx.export(wrapper, args, path, dynamo=False, opset_version=opset,
                              input_names=in_names, output_names=out_names, dynamic_axes=axes,
                              do_constant_folding=True)
        else:
            batch = torch.export.Dim("batch", min=1, max=64)
            seq = torch.export.Dim("sequence", min=1, max=64)
            shapes = {n: {0: batch, 1: seq} for n in in_names}
            torch.onnx.export(wrapper, args, path, dynamo=True, opset_version=opset,
                              input_names=in_names, output_names=out_names, dynamic_shapes=shapes,
                              external_data=False, optimize=True, verbose=False)
    wrapper.eval()
    leftovers = [f for f in os.listdir(os.path.dirname(path)) if f != "model.onnx"]
    if leftovers:
        raise RuntimeError(f"exporter wrote extra files next to the model: {leftovers}")
    onnx.save(strip_metadata(onnx.load(path)), path)
    check_no_local_paths(path)


def op_histogram(model):
    hist = collections.Counter()
    domains = set()

    def walk(graph):
        for n in graph.node:
            key = n.op_type if n.domain in ("", "ai.onnx") else f"{n.domain}::{n.op_type}"
            hist[key] += 1
            if n.domain not in ("", "ai.onnx"):
                domains.add(n.domain)
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g)
                elif a.type == onnx.AttributeProto.GRAPHS:
                    for g in a.graphs:
                        walk(g)

    walk(model.graph)
    for f in model.functions:
        domains.add(f.domain)
    return dict(sorted(hist.items())), sorted(domains)


def dim_names(value_info):
    return [d.dim_param if d.dim_param else d.dim_value for d in value_info.type.tensor_type.shape.dim]


def save_case(out_dir, name, wrapper, fam, meta, exporter, opset, feeds, extra_meta=None,
              static=False):
    """Export `wrapper`, verify it, and write the full case folder. Returns a summary dict.

    A static export is traced at the stored inputs' shape and declares no
    dynamic axes (the TorchScript exporter below opset 13 bakes GPT-2's traced
    sequence length into its position ids), so it is checked at that shape only.
    """
    d = os.path.join(out_dir, name)
    if os.path.isdir(d):
        shutil.rmtree(d)
    os.makedirs(d)
    path = os.path.join(d, "model.onnx")
    in_names, out_names = fam["inputs"], fam["outputs"]
    trace_feeds = feeds if static else make_inputs(in_names, TRACE_SHAPE, meta["vocab"],
                                                   fam["seed"] + 100)

    t0 = time.time()
    export(wrapper, path, exporter, opset, in_names, out_names, trace_feeds, static)
    t_export = time.time() - t0
    onnx.checker.check_model(path, full_check=True)
    model = onnx.load(path)
    if any(t.data_location == onnx.TensorProto.EXTERNAL for t in model.graph.initializer):
        raise RuntimeError("model uses external data")

    sess = ort_session(path)
    got_names = [i.name for i in sess.get_inputs()]
    if got_names != in_names or [o.name for o in sess.get_outputs()] != out_names:
        raise RuntimeError(f"unexpected I/O names {got_names} {[o.name for o in sess.get_outputs()]}")
    ort_out = sess.run(out_names, feeds)
    ref = torch_run(wrapper, feeds)
    diff = max(float(np.max(np.abs(a - b))) for a, b in zip(ort_out, ref))
    if not diff <= TOL:
        raise RuntimeError(f"onnxruntime differs from torch by {diff}")

    diff_dyn = 0.0
    if not static:
        check_feeds = make_inputs(in_names, CHECK_SHAPE, meta["vocab"], fam["seed"] + 200)
        diff_dyn = max(float(np.max(np.abs(a - b)))
                       for a, b in zip(sess.run(out_names, check_feeds),
                                       torch_run(wrapper, check_feeds)))
    if not diff_dyn <= TOL:
        raise RuntimeError(f"dynamic-shape check failed at {CHECK_SHAPE}: diff {diff_dyn}")

    os.makedirs(os.path.join(d, "inputs"))
    os.makedirs(os.path.join(d, "expected"))
    for k, v in feeds.items():
        np.save(os.path.join(d, "inputs", k + ".npy"), v)
    for k, v in zip(out_names, ort_out):
        np.save(os.path.join(d, "expected", k + ".npy"), v.astype(np.float32))

    hist, domains = op_histogram(model)
    m = dict(meta)
    m.update({
        "opset": opset,
        "exporter": exporter,
        "static_shapes": static,
        "input_shapes": {k: list(v.shape) for k, v in feeds.items()},
        "inputs": {i.name: dim_names(i) for i in model.graph.input},
        "outputs": out_names,
        "output_dims": {o.name: dim_names(o) for o in model.graph.output},
        "opset_imports": {(o.domain or "ai.onnx"): o.version for o in model.opset_import},
        "max_abs_diff_ort_vs_torch": diff,
        "tolerance": TOL,
        "op_types": hist,
        "ort_version": ort.__version__,
        "torch_version": torch.__version__,
        "transformers_version": transformers.__version__,
        "onnx_version": onnx.__version__,
        "seed": fam["seed"],
    })
    if extra_meta:
        m.update(extra_meta)
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(m, f, indent=2)
        f.write("\n")
    return {"name": name, "exporter": exporter, "opset": opset, "diff": diff, "diff_dyn": diff_dyn,
            "size": os.path.getsize(path), "nodes": len(model.graph.node), "ops": hist, "domains": domains,
            "inputs": {i.name: dim_names(i) for i in model.graph.input},
            "outputs": {o.name: dim_names(o) for o in model.graph.output}, "time": t_export}


def train_demo(model, vocab, steps, seq=32, batch=32, lr=3e-3):
    """Teach next_token = (token + 1) % vocab on consecutive-integer sequences."""
    g = torch.Generator().manual_seed(1234)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps, pct_start=0.1)
    model.train()
    t0 = time.time()
    done = 0
    for step in range(steps):
        start = torch.randint(0, vocab, (batch, 1), generator=g)
        ids = (start + torch.arange(seq + 1)) % vocab
        logits = model(input_ids=ids[:, :-1], use_cache=False).logits
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, vocab), ids[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        done = step + 1
    model.eval()
    with torch.no_grad():
        ids = (torch.arange(vocab).unsqueeze(1) + torch.arange(seq)) % vocab
        pred = model(input_ids=ids, use_cache=False).logits.argmax(-1)
        acc = float((pred == (ids + 1) % vocab).float().mean())
    return {"steps": done, "final_loss": float(loss), "accuracy": acc, "seconds": time.time() - t0}


def make_demo(out_dir, steps):
    torch.manual_seed(7)
    vocab = 640
    model, meta = build_gpt2(n_embd=128, n_head=4, n_layer=2, n_positions=64, vocab=vocab, n_inner=256, pdrop=0.0)
    info = {"steps": 0, "accuracy": None}
    if steps > 0:
        info = train_demo(model, vocab, steps)
        print(f"  demo training: {info['steps']} steps in {info['seconds']:.1f}s, loss {info['final_loss']:.3f}, "
              f"next-token accuracy {info['accuracy']:.3f}")
    model.eval()
    wrapper = CausalLMLogits(model).eval()
    fam = dict(FAMILIES["gpt2"], seed=7)
    start = 500
    ids = ((start + np.arange(SEQ)) % vocab).astype(np.int64).reshape(1, SEQ)
    feeds = {"input_ids": ids}
    with torch.no_grad():
        pred = wrapper(torch.from_numpy(ids))[0].argmax(-1).numpy()
    expected_next = (ids[0] + 1) % vocab
    extra = {
        "family": "gpt2",
        "demo": True,
        "training": {
            "trained": steps > 0,
            "rule": "next_token = (token + 1) % vocab",
            "data": "sequences of consecutive integers (s, s+1, s+2, ...) mod vocab, s uniform in [0, vocab)",
            "train_seq_len": 32,
            **{k: v for k, v in info.items() if k != "seconds"},
        },
        "prompt": ids[0].tolist(),
        "predicted_next_token": int(pred[-1]),
        "expected_next_token": int(expected_next[-1]),
        "predicted_next_tokens": pred.tolist(),
        "expected_next_tokens": expected_next.tolist(),
    }
    res = save_case(out_dir, "demo_gpt2", wrapper, fam, meta, "torchscript", 17, feeds, extra)
    ort_pred = np.load(os.path.join(out_dir, "demo_gpt2", "expected", "logits.npy"))[0].argmax(-1)
    if not np.array_equal(ort_pred, pred):
        raise RuntimeError("onnxruntime and torch disagree on demo argmax")
    print(f"  demo: prompt ends {ids[0, -1]}, predicted next {pred[-1]}, expected {expected_next[-1]}, "
          f"{int((pred == expected_next).sum())}/{SEQ} positions right")
    if res["size"] >= 2 << 20:
        raise RuntimeError(f"demo model too big: {res['size']} bytes")
    return res


def main():
    ap = argparse.ArgumentParser(description="Export the tpc test models.")
    ap.add_argument("--out", default=HERE)
    ap.add_argument("--only", default=",".join(FAMILIES), help="comma-separated families")
    ap.add_argument("--no-dynamo", action="store_true")
    ap.add_argument("--no-demo", action="store_true")
    ap.add_argument("--demo-steps", type=int, default=300)
    ap.add_argument("--exports", default="",
                    help="comma-separated EXPORTER:OPSET[:static] instead of the default list")
    args = ap.parse_args()
    exports = [(e.split(":")[0], int(e.split(":")[1]), e.endswith(":static"))
               for e in args.exports.split(",") if e] or [(e, o, False) for e, o in EXPORTS]

    print(f"torch {torch.__version__}, transformers {transformers.__version__}, onnx {onnx.__version__}, "
          f"onnxruntime {ort.__version__}")
    results, skipped = [], []
    for fam_name in [f for f in args.only.split(",") if f]:
        fam = FAMILIES[fam_name]
        torch.manual_seed(fam["seed"])
        model, meta = fam["build"]()
        model.eval()
        assert model.config._attn_implementation == "eager"
        wrapper = fam["wrap"](model).eval()
        feeds = make_inputs(fam["inputs"], (1, SEQ), meta["vocab"], fam["seed"])
        for exporter, opset, static in exports:
            if exporter == "dynamo" and args.no_dynamo:
                continue
            name = f"{fam_name}_op{opset}"
            print(f"== {name} ({exporter})", flush=True)
            try:
                res = save_case(args.out, name, wrapper, fam, meta, exporter, opset, feeds,
                                static=static)
            except Exception as e:
                if exporter != "dynamo":
                    raise
                shutil.rmtree(os.path.join(args.out, name), ignore_errors=True)
                msg = f"{type(e).__name__}: {str(e).strip().splitlines()[0][:300] if str(e).strip() else ''}"
                print(f"  skipped: dynamo export of {fam_name} failed: {msg}")
                skipped.append((name, msg))
                continue
            print(f"  ok: {res['nodes']} nodes, {res['size']} bytes, max|ort-torch| {res['diff']:.2e} "
                  f"(dynamic check {res['diff_dyn']:.2e}), export {res['time']:.1f}s")
            results.append(res)

    if not args.no_demo:
        print("== demo_gpt2 (torchscript)", flush=True)
        results.append(make_demo(args.out, args.demo_steps))

    print()
    print(f"{'model':14s} {'exporter':12s} {'opset':>5s} {'nodes':>6s} {'bytes':>9s} {'max|ort-torch|':>15s}  domains")
    for r in results:
        print(f"{r['name']:14s} {r['exporter']:12s} {r['opset']:5d} {r['nodes']:6d} {r['size']:9d} "
              f"{r['diff']:15.2e}  {','.join(r['domains']) or '-'}")
    for name, msg in skipped:
        print(f"{name:14s} {'dynamo':12s} skipped: {msg}")
    print()
    for r in results:
        print(f"{r['name']}: inputs {r['inputs']} outputs {r['outputs']}")
        print("  " + ", ".join(f"{k}:{v}" for k, v in r["ops"].items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
