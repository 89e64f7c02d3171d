"""ONNX Runtime's com.microsoft transformer ops, one node a model, through tpc
against onnxruntime.

usage: check_contrib.py WORK_DIR [--tpc PATH] [--only SUBSTRING]

Each case builds a small model around one op (Attention with each mask
format, unidirectional, unequal V width and an attention bias;
SkipLayerNormalization with its optional outputs; EmbedLayerNormalization;
SkipSimplifiedLayerNormalization; SimplifiedLayerNormalization; BiasGelu,
FastGelu, Gelu, QuickGelu), with seeded random weights as initializers and inputs,
runs it in onnxruntime (CPU, graph optimizations off: the op's own kernel),
compiles it with tpc at each tp of the case (Attention shards its heads at
tp 2), runs it, and compares every output within atol 1e-4 (rtol 1e-4).
A case that asks for an input tpc refuses (past) must fail to compile with
an error naming it. Prints one line per case and "N passed, N failed".
"""
import argparse
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import compare as compare_outputs, load_outputs  # noqa: E402

MS = "com.microsoft"
RNG = np.random.default_rng(7)


def f32(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def model(nodes, inputs, outputs, inits, opset=17):
    """inputs: {name: array}; outputs: [(name, elem_type, shape)]."""
    g = helper.make_graph(
        nodes, "contrib",
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
         for n, a in inputs.items()],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs],
        [numpy_helper.from_array(a, n) for n, a in inits.items()])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset),
                                               helper.make_opsetid(MS, 1)],
                             ir_version=8)


def attention_case(mask=None, unidirectional=0, v_width=None, bias_input=False,
                   tps=(1, 2)):
    b, s, h, heads = 2, 5, 16, 4
    vw = v_width or h
    attrs = {"num_heads": heads}
    if unidirectional:
        attrs["unidirectional"] = 1
    if v_width:
        attrs["qkv_hidden_sizes"] = [h, h, vw]
    inits = {"w": f32(h, 2 * h + vw, scale=0.3), "bias": f32(2 * h + vw, scale=0.1)}
    inputs = {"x": f32(b, s, h)}
    names = ["x", "w", "bias"]
    if mask is not None:
        inputs["mask"] = mask
        names.append("mask")
    if bias_input:
        names += [""] * (4 - len(names)) + ["", "ab"]
        inputs["ab"] = f32(1, heads, s, s, scale=0.5)
    node = helper.make_node("Attention", names, ["y"], domain=MS, **attrs)
    return model([node], inputs, [("y", TensorProto.FLOAT, [b, s, vw])], inits), inputs, tps


def cases():
    b, s, h = 2, 5, 16
    ends = np.array([5, 3], np.int32)
    raw = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], np.int32)
    raw3 = np.tril(np.ones((s, s), np.int32))[None].repeat(b, 0)
    yield "attention_no_mask", attention_case()
    yield "attention_mask_end_positions", attention_case(ends)
    yield "attention_mask_2d", attention_case(raw)
    yield "attention_mask_3d", attention_case(raw3)
    yield "attention_unidirectional", attention_case(raw, unidirectional=1)
    yield "attention_v_width", attention_case(ends, v_width=8)
    yield "attention_bias_input", attention_case(None, bias_input=True, tps=(1,))

    x, skip = f32(b, s, h), f32(b, s, h)
    inits = {"g": f32(h), "be": f32(h), "bi": f32(h)}
    node = helper.make_node("SkipLayerNormalization", ["x", "skip", "g", "be", "bi"],
                            ["y", "mean", "inv", "sum"], domain=MS, epsilon=1e-5)
    yield "skip_layer_norm", (model(
        [node], {"x": x, "skip": skip},
        [("y", TensorProto.FLOAT, [b, s, h]), ("mean", TensorProto.FLOAT, None),
         ("inv", TensorProto.FLOAT, None), ("sum", TensorProto.FLOAT, [b, s, h])],
        inits), {"x": x, "skip": skip}, (1,))
    node = helper.make_node("SkipLayerNormalization", ["x", "skip", "g"], ["y"], domain=MS)
    yield "skip_layer_norm_no_beta", (model(
        [node], {"x": x, "skip": skip}, [("y", TensorProto.FLOAT, [b, s, h])],
        {"g": inits["g"]}), {"x": x, "skip": skip}, (1,))
    node = helper.make_node("SkipSimplifiedLayerNormalization", ["x", "skip", "g", "bi"],
                            ["y", "", "", "sum"], domain=MS, epsilon=1e-6)
    yield "skip_simplified_layer_norm", (model(
        [node], {"x": x, "skip": skip},
        [("y", TensorProto.FLOAT, [b, s, h]), ("sum", TensorProto.FLOAT, [b, s, h])],
        {"g": inits["g"], "bi": inits["bi"]}), {"x": x, "skip": skip}, (1,))
    node = helper.make_node("SimplifiedLayerNormalization", ["x", "g"], ["y"],
                            axis=-1, epsilon=1e-6)
    yield "simplified_layer_norm", (model(
        [node], {"x": x}, [("y", TensorProto.FLOAT, [b, s, h])], {"g": inits["g"]}),
        {"x": x}, (1,))

    ids = RNG.integers(0, 30, (b, s)).astype(np.int32)
    seg = RNG.integers(0, 2, (b, s)).astype(np.int32)
    inits = {"we": f32(30, h), "pe": f32(8, h), "se": f32(2, h), "g": f32(h), "be": f32(h)}
    node = helper.make_node("EmbedLayerNormalization",
                            ["ids", "seg", "we", "pe", "se", "g", "be", "mask"],
                            ["y", "mask_index", "emb"], domain=MS, epsilon=1e-12)
    feeds = {"ids": ids, "seg": seg, "mask": raw}
    yield "embed_layer_norm", (model(
        [node], feeds,
        [("y", TensorProto.FLOAT, [b, s, h]), ("mask_index", TensorProto.INT32, [b]),
         ("emb", TensorProto.FLOAT, [b, s, h])], inits), feeds, (1,))
    node = helper.make_node("EmbedLayerNormalization",
                            ["ids", "", "we", "pe", "", "g", "be"], ["y", "mi"],
                            domain=MS)
    yield "embed_layer_norm_no_segment", (model(
        [node], {"ids": ids}, [("y", TensorProto.FLOAT, [b, s, h]),
                               ("mi", TensorProto.INT32, [b])],
        {k: inits[k] for k in ("we", "pe", "g", "be")}), {"ids": ids}, (1,))

    for op, names, extra in (("BiasGelu", ["x", "bi"], {"bi": f32(h)}),
                             ("FastGelu", ["x", "bi"], {"bi": f32(h)}),
                             ("FastGelu", ["x"], {}),
                             ("Gelu", ["x"], {}),
                             ("QuickGelu", ["x"], {}),
                             ("QuickGelu", ["x"], {"alpha": 1.0})):
        attrs = {k: v for k, v in extra.items() if k == "alpha"}
        extra = {k: v for k, v in extra.items() if k != "alpha"}
        node = helper.make_node(op, names, ["y"], domain=MS, **attrs)
        yield "%s_%d%s" % (op.lower(), len(names), "_alpha" if attrs else ""), (model(
            [node], {"x": x}, [("y", TensorProto.FLOAT, [b, s, h])], extra), {"x": x}, (1,))


def refusals():
    b, s, h = 2, 5, 16
    past = f32(2, b, 4, 3, h // 4)
    node = helper.make_node("Attention", ["x", "w", "bias", "", "past"], ["y"],
                            domain=MS, num_heads=4)
    m = model([node], {"x": f32(b, s, h), "past": past},
              [("y", TensorProto.FLOAT, [b, s, h])],
              {"w": f32(h, 3 * h), "bias": f32(3 * h)})
    yield "attention_past", m, "input 4 (past) is not supported"


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def check(tpc, work, name, m, feeds, tps):
    d = os.path.join(work, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    path = os.path.join(d, "model.onnx")
    onnx.save(m, path)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    outs = [o.name for o in sess.get_outputs()]
    want = dict(zip(outs, sess.run(outs, feeds)))
    flags = []
    for k, v in feeds.items():
        np.save(os.path.join(d, k + ".npy"), v)
        flags += ["--input", "%s=%s" % (k, os.path.join(d, k + ".npy"))]
    for tp in tps:
        eng, out = os.path.join(d, "e%d" % tp), os.path.join(d, "o%d" % tp)
        r = run([tpc, "compile", path, "--tp", str(tp), "-o", eng, "--quiet"])
        if r.returncode != 0:
            return "tp=%d compile: %s" % (tp, r.stderr.strip().splitlines()[-1])
        r = run([tpc, "run", eng, "--output-dir", out] + flags)
        if r.returncode != 0:
            return "tp=%d run: %s" % (tp, r.stderr.strip().splitlines()[-1])
        problem = compare_run(load_outputs(out), want)
        if problem:
            return "tp=%d %s" % (tp, problem)
    return None


def compare_run(got, want):
    """None, or what is wrong with a run's outputs `got` against
    onnxruntime's `want` ({name: array}): the same outputs, each of the same
    dtype and shape, within 1e-4 + 1e-4 * |want| (compare.py: NaN and
    infinities where onnxruntime's values are finite fail too)."""
    for k in sorted(set(got) & set(want)):
        if got[k].dtype != want[k].dtype:
            return "%s: %s %s, onnxruntime %s %s" % (
                k, got[k].dtype, got[k].shape, want[k].dtype, want[k].shape)
    return compare_outputs(got, want, atol=1e-4, rtol=1e-4)[1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("work")
    ap.add_argument("--tpc", default="tpc")
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    passed = failed = 0
    for name, (m, feeds, tps) in cases():
        if a.only not in name:
            continue
        problem = check(a.tpc, a.work, name, m, feeds, tps)
        print("%s %s tp=%s%s" % ("FAIL" if problem else "PASS", name,
                                 ",".join(map(str, tps)),
                                 ": " + problem if problem else ""))
        passed += problem is None
        failed += problem is not None
    for name, m, message in refusals():
        if a.only not in name:
            continue
        path = os.path.join(a.work, name + ".onnx")
        onnx.save(m, path)
        r = run([a.tpc, "compile", path, "--tp", "1", "-o",
                 os.path.join(a.work, name + ".engine")])
        ok = r.returncode == 1 and message in r.stderr and \
            not os.path.exists(os.path.join(a.work, name + ".engine"))
        print("%s %s refused%s" % ("PASS" if ok else "FAIL", name,
                                   "" if ok else ": " + r.stderr.strip()))
        passed += ok
        failed += not ok
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
