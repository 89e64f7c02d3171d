#!/usr/bin/env python3
"""Write a large transformer-shaped MLP stack with all weights in one external file.

    make_big_model.py OUT_DIR [--gib 1.0] [--hidden 2048] [--seed 0]

Each block computes  x = x + Relu(x @ W_up[l]) @ W_down[l]  with W_up of shape
[hidden, 4*hidden] and W_down of shape [4*hidden, hidden]. The number of blocks
is chosen so the float32 weights total about --gib GiB; if even one block is
too big, hidden is reduced instead. Weights are generated and written to
OUT_DIR/weights.bin a chunk at a time, so memory stays at a few tens of MiB
regardless of model size. Also writes OUT_DIR/model.onnx, OUT_DIR/inputs/x.npy
and OUT_DIR/meta.json.
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper

from external_data import align, external_tensor

CHUNK_BYTES = 16 << 20
ALIGN = 4096


def plan(gib, hidden):
    target = gib * (1 << 30)
    per_block = 2 * hidden * 4 * hidden * 4
    if target < per_block:
        hidden = max(64, int(math.sqrt(target / 32)) // 64 * 64)
        per_block = 2 * hidden * 4 * hidden * 4
        return hidden, 1
    return hidden, max(1, int(round(target / per_block)))


def write_matrix(f, rng, rows, cols, scale):
    """Append a [rows, cols] float32 matrix to f, generated chunk by chunk."""
    rows_per_chunk = max(1, CHUNK_BYTES // (cols * 4))
    done = 0
    while done < rows:
        n = min(rows_per_chunk, rows - done)
        block = rng.standard_normal((n, cols), dtype=np.float32)
        block *= scale
        f.write(block.tobytes())
        done += n


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir")
    ap.add_argument("--gib", type=float, default=1.0, help="approximate total weight size in GiB")
    ap.add_argument("--hidden", type=int, default=2048)
    ap.add_argument("--seq", type=int, default=16)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--opset", type=int, default=17)
    args = ap.parse_args(argv)

    if args.gib <= 0:
        ap.error("--gib must be positive")
    hidden, layers = plan(args.gib, args.hidden)
    ffn = 4 * hidden
    out = args.out_dir
    os.makedirs(os.path.join(out, "inputs"), exist_ok=True)
    data_name = "weights.bin"
    data_path = os.path.join(out, data_name)

    t0 = time.time()
    rng = np.random.default_rng(args.seed)
    nodes, inits = [], []
    cur = "x"
    with open(data_path, "wb") as f:
        for l in range(layers):
            for wname, rows, cols in ((f"blocks.{l}.up.weight", hidden, ffn),
                                      (f"blocks.{l}.down.weight", ffn, hidden)):
                offset = align(f, ALIGN)
                write_matrix(f, rng, rows, cols, 1.0 / math.sqrt(rows))
                inits.append(external_tensor(wname, [rows, cols], data_name, offset, rows * cols * 4))
            up, act, down, res = (f"blocks.{l}.up", f"blocks.{l}.act", f"blocks.{l}.down", f"blocks.{l}.out")
            nodes.append(helper.make_node("MatMul", [cur, f"blocks.{l}.up.weight"], [up], name=f"/blocks.{l}/up/MatMul"))
            nodes.append(helper.make_node("Relu", [up], [act], name=f"/blocks.{l}/act/Relu"))
            nodes.append(helper.make_node("MatMul", [act, f"blocks.{l}.down.weight"], [down], name=f"/blocks.{l}/down/MatMul"))
            nodes.append(helper.make_node("Add", [cur, down], [res], name=f"/blocks.{l}/residual/Add"))
            cur = res
        total = f.tell()
    nodes.append(helper.make_node("Identity", [cur], ["y"], name="/output/Identity"))

    graph = helper.make_graph(
        nodes, "big_mlp_stack",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, args.seq, hidden])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, args.seq, hidden])],
        initializer=inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", args.opset)],
                              producer_name="tpc-make-big-model")
    model.ir_version = 8
    model_path = os.path.join(out, "model.onnx")
    with open(model_path, "wb") as f:
        f.write(model.SerializeToString())
    onnx.checker.check_model(model_path)

    x = np.random.default_rng(args.seed + 1).standard_normal((1, args.seq, hidden)).astype(np.float32)
    np.save(os.path.join(out, "inputs", "x.npy"), x)
    meta = {
        "kind": "mlp_stack", "layers": layers, "hidden": hidden, "intermediate": ffn,
        "seq": args.seq, "seed": args.seed, "opset": args.opset,
        "weights_file": data_name, "weights_bytes": total,
        "param_count": layers * 2 * hidden * ffn,
    }
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")
    print(f"wrote {model_path}: {layers} blocks, hidden {hidden}, "
          f"{total / (1 << 30):.3f} GiB weights in {time.time() - t0:.1f}s", file=sys.stderr)


if __name__ == "__main__":
    main()
