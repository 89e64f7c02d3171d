"""Writes the seed corpora of the libFuzzer harnesses (test/fuzz).

usage: make_seeds.py OUT_DIR --tpc PATH

OUT_DIR/<harness>/ gets real files of the kind each harness reads:
  npy          arrays of every dtype tpc reads, 0-d to 4-d, the
               committed test inputs and the .npy inputs fuzzing once
               crashed on (test/fuzz/regressions)
  safetensors  files written by the safetensors package and the weight
               shards of two small engines
  manifest     the engine.json of those engines
  engine_tp1,  the rank plans of a small transformer-style block compiled
  engine_tp2   at tp 1 and tp 2 (OUT_DIR/engines/tp1 and tp2 are the
               engines fuzz_engine loads them into)
  engine_decode  the rank plan of a decode engine (KV-cache state buffers,
               CacheWrite steps) of optimum's with-past GPT-2 at tp 1
               (OUT_DIR/engines/decode)
  onnx         ONNX's node-test models (every op, static shapes), the
               committed malformed models, the inputs fuzzing once crashed
               on (test/fuzz/regressions), and the small block
"""
import argparse
import glob
import os
import shutil
import subprocess
import warnings

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from safetensors.numpy import save_file

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def block_model():
    """LayerNorm, an MLP (column- then row-parallel at tp 2) and a residual."""
    r = np.random.default_rng(0)
    hidden, inner = 8, 16
    def init(name, shape):
        return numpy_helper.from_array(
            r.standard_normal(shape).astype(np.float32), name)
    nodes = [
        helper.make_node("LayerNormalization", ["x", "ln_s", "ln_b"], ["n"],
                         name="ln", epsilon=1e-5, axis=-1),
        helper.make_node("MatMul", ["n", "w1"], ["h"], name="fc1"),
        helper.make_node("Add", ["h", "b1"], ["hb"], name="fc1_bias"),
        helper.make_node("Gelu", ["hb"], ["g"], name="gelu"),
        helper.make_node("MatMul", ["g", "w2"], ["o"], name="fc2"),
        helper.make_node("Add", ["o", "x"], ["y"], name="residual"),
        helper.make_node("Softmax", ["y"], ["p"], name="softmax", axis=-1),
    ]
    graph = helper.make_graph(
        nodes, "block",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, hidden])],
        [helper.make_tensor_value_info("p", TensorProto.FLOAT, [1, 4, hidden])],
        [init("ln_s", [hidden]), init("ln_b", [hidden]),
         init("w1", [hidden, inner]), init("b1", [inner]),
         init("w2", [inner, hidden])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def npy_seeds(out):
    d = os.path.join(out, "npy")
    os.makedirs(d, exist_ok=True)
    dtypes = [np.float32, np.float64, np.float16, np.int64, np.int32, np.int8,
              np.uint8, np.bool_]
    shapes = [(), (3,), (2, 3), (1, 2, 2), (2, 1, 2, 1), (0, 4)]
    for dt in dtypes:
        for shape in shapes:
            name = "%s_%s.npy" % (np.dtype(dt).name, "x".join(map(str, shape)) or "scalar")
            np.save(os.path.join(d, name), np.ones(shape, dtype=dt))
    for i, f in enumerate(sorted(glob.glob(os.path.join(REPO, "test", "models", "*", "inputs", "*.npy")))):
        if os.path.getsize(f) <= 65536:
            shutil.copy(f, os.path.join(d, "model_input_%d.npy" % i))
    for f in glob.glob(os.path.join(REPO, "test", "fuzz", "regressions", "*.npy")):
        shutil.copy(f, os.path.join(d, "regression_" + os.path.basename(f)))


def engine_seeds(out, tpc):
    model = os.path.join(out, "block.onnx")
    onnx.save(block_model(), model)
    engines = os.path.join(out, "engines")
    for tp in (1, 2):
        e = os.path.join(engines, "tp%d" % tp)
        shutil.rmtree(e, ignore_errors=True)
        subprocess.run([tpc, "compile", model, "--tp", str(tp), "-o", e, "--quiet"],
                       check=True)
        for f in os.listdir(e):
            src = os.path.join(e, f)
            if f.endswith(".plan"):
                plans = os.path.join(out, "engine_tp%d" % tp)
                os.makedirs(plans, exist_ok=True)
                shutil.copy(src, os.path.join(plans, f))
            elif f.endswith(".safetensors"):
                os.makedirs(os.path.join(out, "safetensors"), exist_ok=True)
                shutil.copy(src, os.path.join(out, "safetensors", "tp%d_%s" % (tp, f)))
            elif f == "engine.json":
                os.makedirs(os.path.join(out, "manifest"), exist_ok=True)
                shutil.copy(src, os.path.join(out, "manifest", "tp%d.json" % tp))
    d = os.path.join(out, "safetensors")
    save_file({"a": np.ones((2, 3), np.float32), "b": np.arange(4, dtype=np.int64)},
              os.path.join(d, "two.safetensors"), metadata={"format": "pt"})
    save_file({"h": np.ones((3,), np.float16), "u": np.zeros((1, 1), np.uint8),
               "e": np.zeros((0,), np.float32)}, os.path.join(d, "mixed.safetensors"))
    return model


def decode_seeds(out, tpc):
    """The rank plan of a decode engine (KV-cache state, CacheWrite steps):
    optimum's with-past GPT-2 at tp 1 with --kv-cache 8."""
    e = os.path.join(out, "engines", "decode")
    shutil.rmtree(e, ignore_errors=True)
    model = os.path.join(REPO, "test", "models", "hf_gpt2_optimum_past", "model.onnx")
    subprocess.run([tpc, "compile", model, "--kv-cache", "8", "-o", e, "--quiet"],
                   check=True)
    plans = os.path.join(out, "engine_decode")
    os.makedirs(plans, exist_ok=True)
    shutil.copy(os.path.join(e, "rank0.plan"), os.path.join(plans, "rank0.plan"))


def onnx_seeds(out, block):
    d = os.path.join(out, "onnx")
    os.makedirs(d, exist_ok=True)
    shutil.copy(block, os.path.join(d, "block.onnx"))
    for f in glob.glob(os.path.join(REPO, "test", "models", "bad", "*.onnx")):
        shutil.copy(f, os.path.join(d, "bad_" + os.path.basename(f)))
    for f in glob.glob(os.path.join(REPO, "test", "fuzz", "regressions", "*.onnx")):
        shutil.copy(f, os.path.join(d, "regression_" + os.path.basename(f)))
    from onnx.backend.test.case import node as node_cases
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            cases = node_cases.collect_testcases()
    for case in cases:
        data = case.model.SerializeToString()
        if case.kind == "node" and len(data) <= 16384:
            write(os.path.join(d, case.name + ".onnx"), data)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--tpc", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    npy_seeds(args.out)
    block = engine_seeds(args.out, args.tpc)
    decode_seeds(args.out, args.tpc)
    onnx_seeds(args.out, block)
    for name in sorted(os.listdir(args.out)):
        p = os.path.join(args.out, name)
        if os.path.isdir(p) and name != "engines":
            print("%-12s %d seeds" % (name, len(os.listdir(p))))


if __name__ == "__main__":
    main()
