#!/usr/bin/env python3
"""Time PyTorch's own CPU forward of the bench's GPT-2-shaped model.

    torch_forward.py MODEL.onnx --ids IDS.npy [--dtype fp32|bf16] [--threads N]
                     [--warmup W] [--iterations N] [--logits OUT.npy]

The weights are the ONNX file's initializers (bench/make_gpt2_model.py names
them after Hugging Face's GPT2LMHeadModel); the forward is the same network
written with torch's eager ops: LayerNorm, addmm projections,
scaled_dot_product_attention with a causal mask, tanh GELU and the LM head.
With --dtype bf16 every weight and activation is bf16 (what `model.to
(torch.bfloat16)` gives a user: torch's CPU bf16 products run on oneDNN,
which uses AMX where the CPU has it). Prints one JSON object with the
latency and the torch build; --logits saves the last forward's output as
float32.
"""
import argparse
import json
import statistics
import sys
import time

import numpy as np
import onnx
from onnx import numpy_helper


def load_weights(path):
    model = onnx.load(path)  # external data is read from the model's folder
    return {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}, model


def config(weights):
    h = weights["transformer.wte.weight"].shape[1]
    layers = 0
    while f"transformer.h.{layers}.ln_1.weight" in weights:
        layers += 1
    return h, layers


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("--ids", required=True)
    ap.add_argument("--dtype", choices=("fp32", "bf16"), default="fp32")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--iterations", type=int, default=5)
    ap.add_argument("--logits")
    args = ap.parse_args(argv)

    import torch
    import torch.nn.functional as F

    torch.set_num_threads(args.threads)
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float32
    np_w, _ = load_weights(args.model)
    h, layers = config(np_w)
    nh = args.heads
    hd = h // nh
    w = {k: torch.from_numpy(np.array(v)).to(dtype) for k, v in np_w.items()}
    del np_w
    ids = torch.from_numpy(np.load(args.ids).astype(np.int64))
    seq = ids.shape[1]

    def linear(x, name):
        # GPT-2's Conv1D: x @ W + b with W stored [in, out].
        return torch.addmm(w[name + ".bias"], x, w[name + ".weight"])

    def norm(x, name):
        return F.layer_norm(x, (h,), w[name + ".weight"], w[name + ".bias"], 1e-5)

    def forward():
        x = w["transformer.wte.weight"][ids[0]] + w["transformer.wpe.weight"][:seq]
        for l in range(layers):
            p = f"transformer.h.{l}."
            qkv = linear(norm(x, p + "ln_1"), p + "attn.c_attn")
            q, k, v = (t.view(seq, nh, hd).transpose(0, 1) for t in qkv.split(h, dim=1))
            ctx = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + linear(ctx.transpose(0, 1).reshape(seq, h), p + "attn.c_proj")
            fc = F.gelu(linear(norm(x, p + "ln_2"), p + "mlp.c_fc"), approximate="tanh")
            x = x + linear(fc, p + "mlp.c_proj")
        return norm(x, "transformer.ln_f") @ w["onnx::MatMul_lm_head"]

    with torch.inference_mode():
        for _ in range(args.warmup):
            out = forward()
        times = []
        for _ in range(args.iterations):
            t0 = time.perf_counter()
            out = forward()
            times.append((time.perf_counter() - t0) * 1e3)
    if args.logits:
        np.save(args.logits, out.float().numpy()[None])
    json.dump({"median": statistics.median(times), "min": min(times), "max": max(times),
               "iterations": args.iterations, "samples_ms": times,
               "torch": torch.__version__,
               "cpu_capability": torch.backends.cpu.get_cpu_capability(),
               "onednn": torch.backends.mkldnn.is_available()}, sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
