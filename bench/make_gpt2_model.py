#!/usr/bin/env python3
"""Write a GPT-2-shaped ONNX model with random weights in one external file.

    make_gpt2_model.py OUT_DIR [--seq 128 ...] [--hidden 768] [--heads 12]
                       [--layers 12] [--vocab 50257] [--positions 1024]
                       [--seed 0] [--linear gemm|matmul]

The graph follows what the TorchScript exporter writes for Hugging Face
GPT2LMHeadModel at opset 17, with static shapes: token and position Gather,
pre-LayerNormalization, a fused QKV projection (Reshape -> Gemm -> Reshape,
or MatMul + Add with --linear matmul) Split into q, k, v, heads formed by
Reshape + Transpose, QK^T scaled by Mul(1/sqrt(head_dim)), an additive
causal mask made by Where from constants, Softmax, MatMul with V, heads merged,
output projection, residual Add; the MLP uses tanh GELU written out as
Mul/Pow/Add/Tanh; a final LayerNorm and an LM head MatMul against the
transposed token embedding, stored as its own initializer.

Every float tensor lives in OUT_DIR/weights.bin (written a tensor and a chunk
at a time, 64-byte aligned). The weights do not depend on the sequence length,
so several --seq values give several graphs (model_s{S}.onnx) over one
weights file, with inputs/input_ids_s{S}.npy next to them. Random weights are
N(0, 0.02) (LayerNorm scales 1 + N(0, 0.02)), from --seed.
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from external_data import align, external_tensor

ALIGN = 64
CHUNK_ELEMS = 4 << 20  # 16 MiB of float32 per generated chunk
OPSET = 17


def weight_key(cfg):
    return (f"gpt2_h{cfg['hidden']}_a{cfg['heads']}_l{cfg['layers']}_v{cfg['vocab']}"
            f"_p{cfg['positions']}_s{cfg['seed']}_{cfg['linear']}")


def weight_plan(cfg):
    """(name, shape, kind) of every float initializer, in file order."""
    h, L, V, P = cfg["hidden"], cfg["layers"], cfg["vocab"], cfg["positions"]
    ffn = 4 * h
    plan = [("transformer.wte.weight", (V, h), "wte"),
            ("transformer.wpe.weight", (P, h), "normal")]
    for l in range(L):
        p = f"transformer.h.{l}."
        plan += [
            (p + "ln_1.weight", (h,), "ln_scale"), (p + "ln_1.bias", (h,), "normal"),
            (p + "attn.c_attn.weight", (h, 3 * h), "normal"), (p + "attn.c_attn.bias", (3 * h,), "normal"),
            (p + "attn.c_proj.weight", (h, h), "normal"), (p + "attn.c_proj.bias", (h,), "normal"),
            (p + "ln_2.weight", (h,), "ln_scale"), (p + "ln_2.bias", (h,), "normal"),
            (p + "mlp.c_fc.weight", (h, ffn), "normal"), (p + "mlp.c_fc.bias", (ffn,), "normal"),
            (p + "mlp.c_proj.weight", (ffn, h), "normal"), (p + "mlp.c_proj.bias", (h,), "normal"),
        ]
    plan += [("transformer.ln_f.weight", (h,), "ln_scale"), ("transformer.ln_f.bias", (h,), "normal"),
             # The TorchScript exporter writes the tied LM head as its own
             # initializer holding wte transposed.
             ("onnx::MatMul_lm_head", (h, V), "wte_t")]
    return plan


def write_weights(path, cfg, log=None):
    """Write weights.bin; return {name: (shape, offset, length)}."""
    rng = np.random.default_rng(cfg["seed"])
    layout = {}
    wte = None
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        for name, shape, kind in weight_plan(cfg):
            offset = align(f, ALIGN)
            count = int(np.prod(shape))
            if kind == "wte_t":
                # wte is [V, h]; write wte.T ([h, V]) a band of rows at a time.
                rows = max(1, CHUNK_ELEMS // shape[1])
                for r0 in range(0, shape[0], rows):
                    f.write(np.ascontiguousarray(wte[:, r0:r0 + rows].T).tobytes())
            elif kind == "wte":
                # Kept in memory (V*h floats) for the transposed copy above.
                wte = np.empty(shape, np.float32)
                rows = max(1, CHUNK_ELEMS // shape[1])
                for r0 in range(0, shape[0], rows):
                    blk = rng.standard_normal((min(rows, shape[0] - r0), shape[1]), dtype=np.float32)
                    blk *= 0.02
                    wte[r0:r0 + blk.shape[0]] = blk
                    f.write(blk.tobytes())
            else:
                done = 0
                while done < count:
                    n = min(CHUNK_ELEMS, count - done)
                    blk = rng.standard_normal(n, dtype=np.float32)
                    blk *= 0.02
                    if kind == "ln_scale":
                        blk += 1.0
                    f.write(blk.tobytes())
                    done += n
            layout[name] = (shape, offset, count * 4)
        total = f.tell()
    os.replace(tmp, path)
    if log:
        log(f"wrote {path}: {total / (1 << 20):.1f} MiB")
    return layout


class Graph:
    def __init__(self):
        self.nodes = []
        self.counter = {}

    def const(self, scope, value):
        idx = self.counter.get(scope, 0)
        self.counter[scope] = idx + 1
        out = f"{scope}/Constant_{idx}_output_0"
        self.nodes.append(helper.make_node("Constant", [], [out], name=f"{scope}/Constant_{idx}",
                                           value=numpy_helper.from_array(np.asarray(value))))
        return out

    def op(self, scope, op_type, inputs, n_out=1, **attrs):
        idx = self.counter.get((scope, op_type), 0)
        self.counter[(scope, op_type)] = idx + 1
        base = f"{scope}/{op_type}" + (f"_{idx}" if idx else "")
        outs = [f"{base}_output_{i}" for i in range(n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=base, **attrs))
        return outs[0] if n_out == 1 else outs


def mlp_block(g, s, x, p, linear, h):
    """Layer `s`'s pre-LayerNorm MLP, tanh GELU written out as Mul/Pow/Add/
    Tanh, and its residual Add; `linear` makes the projections."""
    m = f"{s}/mlp"
    ln2 = g.op(s + "/ln_2", "LayerNormalization", [x, p + "ln_2.weight", p + "ln_2.bias"],
               axis=-1, epsilon=1e-5)
    fc = linear(m + "/c_fc", ln2, p + "mlp.c_fc.weight", p + "mlp.c_fc.bias", 4 * h)
    act = m + "/act"
    half = g.op(act, "Mul", [fc, g.const(act, np.array(0.5, np.float32))])
    cube = g.op(act, "Pow", [fc, g.const(act, np.array(3.0, np.float32))])
    inner = g.op(act, "Add", [fc, g.op(act, "Mul", [cube, g.const(act, np.array(0.044715, np.float32))])])
    inner = g.op(act, "Mul", [inner, g.const(act, np.array(math.sqrt(2.0 / math.pi), np.float32))])
    gelu = g.op(act, "Mul", [half, g.op(act, "Add", [g.op(act, "Tanh", [inner]),
                                                     g.const(act, np.array(1.0, np.float32))])])
    mlp = linear(m + "/c_proj", gelu, p + "mlp.c_proj.weight", p + "mlp.c_proj.bias", h)
    return g.op(s, "Add", [x, mlp])


def build_graph(cfg, seq, layout, location="weights.bin"):
    """The forward at sequence length `seq`; with seq=None, one graph for
    every length up to cfg["positions"], its axis named "sequence" (positions
    and the causal mask computed from the input's shape, as exporters do)."""
    h, nh, L, V = cfg["hidden"], cfg["heads"], cfg["layers"], cfg["vocab"]
    hd = h // nh
    g = Graph()
    dynamic = seq is None
    if dynamic:
        seq = -1  # the sequence in Reshape targets
    inits = [external_tensor(n, shp, location, off, ln) for n, (shp, off, ln) in layout.items()]

    def linear(scope, x, w, b, n_out):
        if cfg["linear"] == "gemm":
            x2 = g.op(scope, "Reshape", [x, g.const(scope, np.array([-1, layout[w][0][0]], np.int64))])
            y2 = g.op(scope, "Gemm", [x2, w, b], alpha=1.0, beta=1.0)
            return g.op(scope, "Reshape", [y2, g.const(scope, np.array([1, seq, n_out], np.int64))])
        y = g.op(scope, "MatMul", [x, w])
        return g.op(scope, "Add", [y, b])

    def layer_norm(scope, x, w, b):
        return g.op(scope, "LayerNormalization", [x, w, b], axis=-1, epsilon=1e-5)

    top = "/transformer"
    tok = g.op(top + "/wte", "Gather", ["transformer.wte.weight", "input_ids"])
    if dynamic:
        n = g.op(top, "Gather", [g.op(top, "Shape", ["input_ids"]), g.const(top, np.array(1, np.int64))])
        pos_ids = g.op(top, "Unsqueeze", [g.op(top, "Range", [g.const(top, np.array(0, np.int64)), n,
                                                              g.const(top, np.array(1, np.int64))]),
                                          g.const(top, np.array([0], np.int64))])
        P = cfg["positions"]
        n1 = g.op(top, "Unsqueeze", [n, g.const(top, np.array([0], np.int64))])
        causal = g.op(top, "Slice", [g.const(top, np.tril(np.ones((P, P), dtype=bool)).reshape(1, 1, P, P)),
                                     g.const(top, np.array([0, 0], np.int64)),
                                     g.op(top, "Concat", [n1, n1], axis=0),
                                     g.const(top, np.array([2, 3], np.int64))])
    else:
        pos_ids = g.const(top, np.arange(seq, dtype=np.int64).reshape(1, seq))
        causal = g.const(top, np.tril(np.ones((seq, seq), dtype=bool)).reshape(1, 1, seq, seq))
    pos = g.op(top + "/wpe", "Gather", ["transformer.wpe.weight", pos_ids])
    x = g.op(top, "Add", [tok, pos])
    mask = g.op(top, "Where", [causal, g.const(top, np.array(0.0, np.float32)),
                               g.const(top, np.array(np.finfo(np.float32).min, np.float32))])

    for l in range(L):
        p, s = f"transformer.h.{l}.", f"{top}/h.{l}"
        a = f"{s}/attn"
        ln1 = layer_norm(s + "/ln_1", x, p + "ln_1.weight", p + "ln_1.bias")
        qkv = linear(a + "/c_attn", ln1, p + "attn.c_attn.weight", p + "attn.c_attn.bias", 3 * h)
        q, k, v = g.op(a, "Split", [qkv, g.const(a, np.array([h, h, h], np.int64))], n_out=3, axis=2)
        heads = g.const(a, np.array([1, seq, nh, hd], np.int64))
        k = g.op(a, "Transpose", [g.op(a, "Reshape", [k, heads])], perm=[0, 2, 3, 1])
        q = g.op(a, "Transpose", [g.op(a, "Reshape", [q, heads])], perm=[0, 2, 1, 3])
        v = g.op(a, "Transpose", [g.op(a, "Reshape", [v, heads])], perm=[0, 2, 1, 3])
        scores = g.op(a, "MatMul", [q, k])
        scores = g.op(a, "Mul", [scores, g.const(a, np.array(1.0 / math.sqrt(hd), np.float32))])
        scores = g.op(a, "Add", [scores, mask])
        probs = g.op(a, "Softmax", [scores], axis=-1)
        ctx = g.op(a, "MatMul", [probs, v])
        ctx = g.op(a, "Transpose", [ctx], perm=[0, 2, 1, 3])
        ctx = g.op(a, "Reshape", [ctx, g.const(a, np.array([1, seq, h], np.int64))])
        attn = linear(a + "/c_proj", ctx, p + "attn.c_proj.weight", p + "attn.c_proj.bias", h)
        x = g.op(s, "Add", [attn, x])

        x = mlp_block(g, s, x, p, linear, h)

    x = layer_norm(top + "/ln_f", x, "transformer.ln_f.weight", "transformer.ln_f.bias")
    g.nodes.append(helper.make_node("MatMul", [x, "onnx::MatMul_lm_head"], ["logits"], name="/lm_head/MatMul"))

    graph = helper.make_graph(
        g.nodes, "gpt2_bench",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, "sequence" if dynamic else seq])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, "sequence" if dynamic else seq, V])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="tpc-bench-gpt2")
    model.ir_version = 8
    return model


def build_past_graph(cfg, layout, location="weights.bin"):
    """The decoder as optimum's `text-generation-with-past` export has it:
    inputs input_ids and position_ids [1, sequence_length], attention_mask
    [1, past_sequence_length + sequence_length] and per layer
    past_key_values.L.key/value [1, heads, past_sequence_length, head_dim];
    outputs logits and present.L.key/value (the past with the new keys or
    values concatenated). The mask is causal over the past and the new
    tokens (new token i, at position past + i, sees keys j <= past + i,
    from Range(past, past + sequence_length) as transformers builds it) and
    hides the keys attention_mask marks 0, so one forward may take a whole
    prompt."""
    h, nh, L, V = cfg["hidden"], cfg["heads"], cfg["layers"], cfg["vocab"]
    hd = h // nh
    g = Graph()
    inits = [external_tensor(n, shp, location, off, ln) for n, (shp, off, ln) in layout.items()]

    def linear(scope, x, w, b, n_out):
        x2 = g.op(scope, "Reshape", [x, g.const(scope, np.array([-1, layout[w][0][0]], np.int64))])
        y2 = g.op(scope, "Gemm", [x2, w, b], alpha=1.0, beta=1.0)
        return g.op(scope, "Reshape", [y2, g.const(scope, np.array([1, -1, n_out], np.int64))])

    top = "/transformer"
    tok = g.op(top + "/wte", "Gather", ["transformer.wte.weight", "input_ids"])
    pos = g.op(top + "/wpe", "Gather", ["transformer.wpe.weight", "position_ids"])
    x = g.op(top, "Add", [tok, pos])
    # Additive mask [1, 1, new, past + new]: 0 where the key is held
    # (attention_mask 1) and not after the query's position, min elsewhere.
    i64 = lambda v: g.const(top, np.array(v, np.int64))  # noqa: E731
    past_len = g.op(top, "Gather", [g.op(top, "Shape", ["past_key_values.0.key"]), i64(2)])
    new_len = g.op(top, "Gather", [g.op(top, "Shape", ["input_ids"]), i64(1)])
    end = g.op(top, "Add", [past_len, new_len])
    q_pos = g.op(top, "Unsqueeze", [g.op(top, "Range", [past_len, end, i64(1)]), i64([1])])
    k_pos = g.op(top, "Unsqueeze", [g.op(top, "Range", [i64(0), end, i64(1)]), i64([0])])
    causal = g.op(top, "LessOrEqual", [k_pos, q_pos])
    held = g.op(top, "Cast", ["attention_mask"], to=TensorProto.BOOL)
    keep = g.op(top, "And", [g.op(top, "Unsqueeze", [causal, i64([0, 1])]),
                             g.op(top, "Unsqueeze", [held, i64([1, 2])])])
    mask = g.op(top, "Where", [keep, g.const(top, np.array(0.0, np.float32)),
                               g.const(top, np.array(np.finfo(np.float32).min, np.float32))])
    past_inputs, present_outputs = [], []
    for l in range(L):
        p, s = f"transformer.h.{l}.", f"{top}/h.{l}"
        a = f"{s}/attn"
        ln1 = g.op(s + "/ln_1", "LayerNormalization", [x, p + "ln_1.weight", p + "ln_1.bias"],
                   axis=-1, epsilon=1e-5)
        qkv = linear(a + "/c_attn", ln1, p + "attn.c_attn.weight", p + "attn.c_attn.bias", 3 * h)
        q, k, v = g.op(a, "Split", [qkv, g.const(a, np.array([h, h, h], np.int64))], n_out=3, axis=2)
        heads = g.const(a, np.array([1, -1, nh, hd], np.int64))
        q = g.op(a, "Transpose", [g.op(a, "Reshape", [q, heads])], perm=[0, 2, 1, 3])
        k = g.op(a, "Transpose", [g.op(a, "Reshape", [k, heads])], perm=[0, 2, 1, 3])
        v = g.op(a, "Transpose", [g.op(a, "Reshape", [v, heads])], perm=[0, 2, 1, 3])
        for kind, new in (("key", k), ("value", v)):
            past, present = f"past_key_values.{l}.{kind}", f"present.{l}.{kind}"
            past_inputs.append(helper.make_tensor_value_info(
                past, TensorProto.FLOAT, [1, nh, "past_sequence_length", hd]))
            present_outputs.append(helper.make_tensor_value_info(
                present, TensorProto.FLOAT, [1, nh, "past_sequence_length + sequence_length", hd]))
            g.nodes.append(helper.make_node("Concat", [past, new], [present], name=f"{a}/Concat_{kind}", axis=2))
        kt = g.op(a, "Transpose", [f"present.{l}.key"], perm=[0, 1, 3, 2])
        scores = g.op(a, "MatMul", [q, kt])
        scores = g.op(a, "Mul", [scores, g.const(a, np.array(1.0 / math.sqrt(hd), np.float32))])
        scores = g.op(a, "Add", [scores, mask])
        probs = g.op(a, "Softmax", [scores], axis=-1)
        ctx = g.op(a, "MatMul", [probs, f"present.{l}.value"])
        ctx = g.op(a, "Transpose", [ctx], perm=[0, 2, 1, 3])
        ctx = g.op(a, "Reshape", [ctx, g.const(a, np.array([1, -1, h], np.int64))])
        attn = linear(a + "/c_proj", ctx, p + "attn.c_proj.weight", p + "attn.c_proj.bias", h)
        x = g.op(s, "Add", [attn, x])
        x = mlp_block(g, s, x, p, linear, h)
    x = g.op(top + "/ln_f", "LayerNormalization", [x, "transformer.ln_f.weight", "transformer.ln_f.bias"],
             axis=-1, epsilon=1e-5)
    g.nodes.append(helper.make_node("MatMul", [x, "onnx::MatMul_lm_head"], ["logits"], name="/lm_head/MatMul"))
    graph = helper.make_graph(
        g.nodes, "gpt2_bench_past",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, "sequence_length"]),
         helper.make_tensor_value_info("position_ids", TensorProto.INT64, [1, "sequence_length"]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64,
                                       [1, "past_sequence_length + sequence_length"])] + past_inputs,
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, "sequence_length", V])] + present_outputs,
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="tpc-bench-gpt2")
    model.ir_version = 8
    return model


def ensure_past(out_dir, cfg, log=print):
    """OUT_DIR/model_past_causal.onnx over the weights of ensure() (made
    first)."""
    meta = ensure(out_dir, cfg, [], log)
    path = os.path.join(out_dir, "model_past_causal.onnx")
    if not os.path.exists(path):
        layout = {k: (tuple(s), o, n) for k, (s, o, n) in meta["layout"].items()}
        model = build_past_graph(cfg, layout)
        with open(path + ".tmp", "wb") as f:
            f.write(model.SerializeToString())
        os.replace(path + ".tmp", path)
        log(f"wrote {path} ({len(model.graph.node)} nodes)")
    return path


def param_counts(cfg):
    h, L, V, P = cfg["hidden"], cfg["layers"], cfg["vocab"], cfg["positions"]
    per_layer_mm = 3 * h * h + h * h + 4 * h * h + 4 * h * h
    matmul = L * per_layer_mm + h * V  # the LM head
    total = sum(int(np.prod(s)) for _, s, _ in weight_plan(cfg))
    gathered = V * h + P * h
    return {"matmul_params": matmul, "total_params": total,
            "streamed_params": total - gathered}


def flops(cfg, seq):
    """Multiply-adds counted as 2 FLOPs: weight MatMuls plus QK^T and PV."""
    c = param_counts(cfg)
    return 2 * c["matmul_params"] * seq + 2 * 2 * cfg["layers"] * seq * seq * cfg["hidden"]


def ensure(out_dir, cfg, seqs, log=print):
    """Create (or reuse) OUT_DIR with weights.bin and one graph per seq. Returns meta."""
    os.makedirs(os.path.join(out_dir, "inputs"), exist_ok=True)
    meta_path = os.path.join(out_dir, "meta.json")
    meta = None
    if os.path.exists(meta_path):
        with open(meta_path) as f:
            meta = json.load(f)
        if meta.get("config") != cfg or not os.path.exists(os.path.join(out_dir, "weights.bin")) \
                or os.path.getsize(os.path.join(out_dir, "weights.bin")) != meta.get("weights_bytes"):
            meta = None
    t0 = time.time()
    if meta is None:
        layout = write_weights(os.path.join(out_dir, "weights.bin"), cfg, log)
        meta = {"config": cfg, "layout": {k: [list(s), o, n] for k, (s, o, n) in layout.items()},
                "weights_bytes": os.path.getsize(os.path.join(out_dir, "weights.bin")),
                "models": {}, **param_counts(cfg)}
    layout = {k: (tuple(s), o, n) for k, (s, o, n) in meta["layout"].items()}
    changed = False
    for seq in seqs:
        model_path = os.path.join(out_dir, f"model_s{seq}.onnx")
        ids_path = os.path.join(out_dir, "inputs", f"input_ids_s{seq}.npy")
        if str(seq) in meta["models"] and os.path.exists(model_path) and os.path.exists(ids_path):
            continue
        model = build_graph(cfg, seq, layout)
        with open(model_path, "wb") as f:
            f.write(model.SerializeToString())
        onnx.checker.check_model(model_path)
        ids = np.random.default_rng(cfg["seed"] + 1000 + seq).integers(
            0, cfg["vocab"], size=(1, seq), dtype=np.int64)
        np.save(ids_path, ids)
        meta["models"][str(seq)] = {"model": os.path.basename(model_path),
                                    "input": os.path.relpath(ids_path, out_dir),
                                    "flops": flops(cfg, seq)}
        changed = True
        log(f"wrote {model_path} ({len(model.graph.node)} nodes)")
    if changed or not os.path.exists(meta_path):
        with open(meta_path + ".tmp", "w") as f:
            json.dump(meta, f, indent=1)
            f.write("\n")
        os.replace(meta_path + ".tmp", meta_path)
    meta["generate_s"] = time.time() - t0
    return meta


def ensure_dynamic(out_dir, cfg, log=print):
    """OUT_DIR/model_dyn.onnx: the forward for every sequence length up to
    cfg["positions"] (build_graph with seq=None), on ensure()'s weights."""
    meta = ensure(out_dir, cfg, [], log)
    path = os.path.join(out_dir, "model_dyn.onnx")
    if not os.path.exists(path):
        layout = {k: (tuple(s), o, n) for k, (s, o, n) in meta["layout"].items()}
        model = build_graph(cfg, None, layout)
        with open(path + ".tmp", "wb") as f:
            f.write(model.SerializeToString())
        os.replace(path + ".tmp", path)
        log(f"wrote {path} ({len(model.graph.node)} nodes)")
    return path


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir")
    ap.add_argument("--seq", type=int, action="append", help="sequence length (repeatable; default 128)")
    ap.add_argument("--hidden", type=int, default=768)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--vocab", type=int, default=50257)
    ap.add_argument("--positions", type=int, default=1024)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--linear", choices=("gemm", "matmul"), default="gemm")
    args = ap.parse_args(argv)
    if args.hidden % args.heads:
        ap.error("--hidden must be a multiple of --heads")
    seqs = args.seq or [128]
    if max(seqs) > args.positions:
        ap.error("--seq exceeds --positions")
    cfg = {k: getattr(args, k) for k in ("hidden", "heads", "layers", "vocab", "positions", "seed", "linear")}
    ensure(args.out_dir, cfg, seqs, log=lambda s: print(s, file=sys.stderr))


if __name__ == "__main__":
    main()
