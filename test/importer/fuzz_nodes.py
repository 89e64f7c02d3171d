"""Seeded random single-node models through `tpc import`: never a crash.

usage: fuzz_nodes.py WORK_DIR [--tpc PATH] [--cases N] [--seed S] [--compile]

For the ops whose importers build several onnx ops from one node (the
opset-23 Attention, RMSNormalization and RotaryEmbedding, ONNX Runtime's
com.microsoft ops) and for the shape ops, it writes models with random
ranks, dimensions (including 0 and mismatched ones), attributes (negative,
huge, absent) and optional inputs left out or present, then imports each.
Every run must end with exit 0, or exit 1 and an "error:" line naming the
node (with --compile, the same for `tpc compile` at tp 1 and 2 of every
model that imports); a signal, another exit code, or silence on failure is
a FAIL. Prints
the failures and "N cases, N imported, N refused, N failed".
"""
import argparse
import os
import random
import subprocess
import sys

import onnx
from onnx import TensorProto, helper

MS = "com.microsoft"
FLOATS = [TensorProto.FLOAT, TensorProto.FLOAT16]


def rand_shape(r, rank=None):
    rank = r.choice([0, 1, 2, 3, 4, 5]) if rank is None else rank
    return [r.choice([0, 1, 1, 2, 3, 4, 6, 8, 16]) for _ in range(rank)]


def rand_attr(r, name, kind):
    if kind == "int":
        return r.choice([-2**40, -7, -1, 0, 1, 2, 3, 4, 8, 2**40])
    if kind == "float":
        return r.choice([-1.0, 0.0, 1e-6, 0.5, 1.0, 1e30, float("nan")])
    if kind == "ints":
        return [r.choice([-3, -1, 0, 1, 2, 3, 9]) for _ in range(r.choice([0, 1, 2, 3, 4]))]
    return None


# op: (domain, number of inputs, input element types, attributes)
OPS = {
    "Attention": ("", 7, None, {"is_causal": "int", "q_num_heads": "int",
                                "kv_num_heads": "int", "scale": "float",
                                "softcap": "float", "qk_matmul_output_mode": "int",
                                "softmax_precision": "int", "left_window_size": "int",
                                "right_window_size": "int"}),
    "RMSNormalization": ("", 2, None, {"axis": "int", "epsilon": "float",
                                       "stash_type": "int"}),
    "RotaryEmbedding": ("", 4, None, {"interleaved": "int", "num_heads": "int",
                                      "rotary_embedding_dim": "int"}),
    "LayerNormalization": ("", 3, None, {"axis": "int", "epsilon": "float"}),
    "ms:Attention": (MS, 7, None, {"num_heads": "int", "unidirectional": "int",
                                   "qkv_hidden_sizes": "ints", "scale": "float",
                                   "mask_filter_value": "float", "do_rotary": "int"}),
    "ms:SkipLayerNormalization": (MS, 5, None, {"epsilon": "float"}),
    "ms:SkipSimplifiedLayerNormalization": (MS, 4, None, {"epsilon": "float"}),
    "SimplifiedLayerNormalization": ("", 2, None, {"axis": "int", "epsilon": "float"}),
    "ms:EmbedLayerNormalization": (MS, 9, None, {"epsilon": "float",
                                                 "mask_index_type": "int"}),
    "ms:FastGelu": (MS, 2, None, {}),
    "ms:BiasGelu": (MS, 2, None, {}),
    "Softmax": ("", 1, None, {"axis": "int"}),
    "Split": ("", 1, None, {"axis": "int", "split": "ints"}),
    "Squeeze": ("", 1, None, {"axes": "ints"}),
    "Unsqueeze": ("", 1, None, {"axes": "ints"}),
    "Slice": ("", 1, None, {"starts": "ints", "ends": "ints", "axes": "ints"}),
    "Pad": ("", 1, None, {"pads": "ints", "value": "float"}),
    "Dropout": ("", 3, None, {}),
}


def plausible_inputs(r, key):
    """Shapes that mostly agree, for the deep paths: (name, elem, shape) or
    None for an absent input; a dimension is perturbed now and then."""
    def p(shape):
        shape = list(shape)
        if shape and r.random() < 0.15:
            shape[r.randrange(len(shape))] = r.choice([0, 1, 3, 5])
        return shape
    b, s, kv = r.choice([1, 2]), r.choice([1, 3, 4]), r.choice([1, 2, 4])
    qh, kh, d = r.choice([2, 4]), r.choice([1, 2]), r.choice([2, 4, 8])
    f = r.choice(FLOATS)
    if key == "Attention":
        if r.random() < 0.5:
            ins = [("Q", f, p([b, qh, s, d])), ("K", f, p([b, kh, kv, d])),
                   ("V", f, p([b, kh, kv, d]))]
        else:
            ins = [("Q", f, p([b, s, qh * d])), ("K", f, p([b, kv, kh * d])),
                   ("V", f, p([b, kv, kh * d]))]
        mask = r.choice([None, ("M", TensorProto.BOOL, p([s, kv])),
                         ("M", f, p([b, 1, s, kv])), ("M", f, p([kv]))])
        past = r.choice([None, [("PK", f, p([b, kh, 2, d])), ("PV", f, p([b, kh, 2, d]))]])
        nonpad = r.choice([None, None, ("N", TensorProto.INT64, p([b]))])
        return ins + [mask] + (past or [None, None]) + [nonpad]
    if key == "RotaryEmbedding":
        x = r.choice([("X", f, p([b, qh, s, d])), ("X", f, p([b, s, qh * d]))])
        pos = r.choice([None, ("P", TensorProto.INT64, p([b, s]))])
        cache = [s, d // 2] if pos is None else [8, d // 2]
        if pos is None:
            cache = [b] + cache
        return [x, ("C", f, p(cache)), ("S", f, p(cache)), pos]
    if key == "ms:Attention":
        h = qh * d
        return [("X", f, p([b, s, h])), ("W", f, p([h, 3 * h])), ("B", f, p([3 * h])),
                r.choice([None, ("M", TensorProto.INT32, p([b])),
                          ("M", TensorProto.INT32, p([b, s])),
                          ("M", TensorProto.INT32, p([b, s, s]))]),
                None, r.choice([None, ("AB", f, p([1, qh, s, s]))])]
    return None


def make_case(r, key, opset):
    domain, n_inputs, _, attrs = OPS[key]
    op = key.split(":")[-1]
    inputs, names = [], []
    plausible = plausible_inputs(r, key) if r.random() < 0.7 else None
    for i, spec in enumerate(plausible or []):
        if spec is None:
            names.append("")
            continue
        name, elem, shape = spec
        inputs.append(helper.make_tensor_value_info(name, elem, shape))
        names.append(name)
    for i in range(n_inputs if plausible is None else 0):
        if i > 0 and r.random() < 0.3:
            names.append("")
            continue
        elem = r.choice(FLOATS + [TensorProto.INT64, TensorProto.INT32, TensorProto.BOOL]
                        if i > 0 else FLOATS)
        name = "in%d" % i
        inputs.append(helper.make_tensor_value_info(name, elem, rand_shape(r)))
        names.append(name)
    while names and names[-1] == "":
        names.pop()
    kwargs = {}
    for a, kind in attrs.items():
        if r.random() < 0.5:
            kwargs[a] = rand_attr(r, a, kind)
    attributes = [helper.make_attribute(k, v, attr_type=onnx.AttributeProto.INTS)
                  if isinstance(v, list) else helper.make_attribute(k, v)
                  for k, v in kwargs.items()]
    n_out = 1 if plausible and r.random() < 0.7 else r.choice([1, 2, 3, 4])
    outs = ["out%d" % i for i in range(n_out)]
    out_elem = plausible[0][1] if plausible else TensorProto.FLOAT
    node = helper.make_node(op, names, outs, name="n0", domain=domain)
    node.attribute.extend(attributes)
    g = helper.make_graph([node], "fuzz", inputs,
                          [helper.make_tensor_value_info(o, out_elem, None)
                           for o in outs])
    imports = [helper.make_opsetid("", opset), helper.make_opsetid(MS, 1)]
    return helper.make_model(g, opset_imports=imports, ir_version=10)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("work")
    ap.add_argument("--tpc", default="tpc")
    ap.add_argument("--cases", type=int, default=600)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--verbose", action="store_true", help="print each refusal")
    ap.add_argument("--compile", action="store_true",
                    help="also compile each imported model at tp 1 and 2")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    r = random.Random(a.seed)
    keys = sorted(OPS)
    imported = refused = 0
    failures = []
    for i in range(a.cases):
        key = keys[i % len(keys)]
        opset = r.choice([9, 13, 17, 23, 25, 25, 25])
        path = os.path.join(a.work, "case%d.onnx" % i)
        with open(path, "wb") as f:
            f.write(make_case(r, key, opset).SerializeToString())
        try:
            p = subprocess.run([a.tpc, "import", path, "-o", os.devnull],
                               capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            failures.append("%s (%s, opset %d): timed out" % (path, key, opset))
            continue
        if p.returncode == 0:
            imported += 1
            for tp in (1, 2) if a.compile else ():
                engine = os.path.join(a.work, "case%d.tp%d" % (i, tp))
                c = subprocess.run([a.tpc, "compile", path, "--tp", str(tp),
                                    "-o", engine, "--quiet"],
                                   capture_output=True, text=True, timeout=120)
                if c.returncode not in (0, 1) or (c.returncode == 1 and
                                                  "error:" not in c.stderr):
                    failures.append("%s (%s, opset %d): compile --tp %d exit %d: %s" % (
                        path, key, opset, tp, c.returncode, c.stderr.strip()[-300:]))
                subprocess.run(["rm", "-rf", engine])
            if not failures or not failures[-1].startswith(path):
                os.remove(path)
        elif p.returncode == 1 and "error:" in p.stderr:
            refused += 1
            os.remove(path)
            if a.verbose:
                print("refused", key, p.stderr.strip().splitlines()[-1][:160])
        else:
            failures.append("%s (%s, opset %d): exit %d: %s" % (
                path, key, opset, p.returncode, p.stderr.strip()[-300:]))
    for f in failures:
        print("FAIL", f)
    print("%d cases, %d imported, %d refused, %d failed" % (
        a.cases, imported, refused, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
