#!/usr/bin/env python3
"""Write test models as ONNX Runtime's transformer optimizer leaves them.

`onnxruntime.transformers.optimizer` rewrites an exported BERT, GPT-2 or Llama
into ONNX Runtime's com.microsoft ops (Attention, EmbedLayerNormalization,
SkipLayerNormalization, SkipSimplifiedLayerNormalization, BiasGelu, FastGelu,
QuickGelu): the files users get from that tool. Each case starts from a committed export (test/models/<source>/) and
writes test/models/<name>/ with

    model.onnx            the optimized model, weights inline, metadata removed
    inputs/<input>.npy    the source's inputs
    expected/<out>.npy    onnxruntime (CPU) outputs of the optimized model
    meta.json             the source's meta, with this exporter, op histogram,
                          max |optimized - source| outputs under onnxruntime

Run with the generator venv (scripts/gen-models creates it):

    /opt/tpc-gen/bin/python test/models/generate_ort_optimized.py
"""
import collections
import json
import os
import shutil
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnxruntime.transformers import optimizer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from onnx_clean import check_no_local_paths, strip_metadata  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# (name, source folder, optimizer model_type, opt_level): level 1 fuses
# with the optimizer's Python fusions only; level 2 also runs onnxruntime's
# own graph optimizations before saving (Llama's SiLU becomes QuickGelu).
CASES = [
    ("ortopt_bert", "bert_op17", "bert", None),
    ("ortopt_gpt2", "gpt2_op17", "gpt2", None),
    ("ortopt_llama", "llama_op17", "gpt2", 1),
    ("ortopt_llama_l2", "llama_op17", "gpt2", 2),
]


def run_ort(path, inputs):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, inputs)))


def main():
    for name, source, model_type, opt_level in CASES:
        src = os.path.join(HERE, source)
        meta = json.load(open(os.path.join(src, "meta.json")))
        out = os.path.join(HERE, name)
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(os.path.join(out, "expected"))
        shutil.copytree(os.path.join(src, "inputs"), os.path.join(out, "inputs"))
        opt = optimizer.optimize_model(
            os.path.join(src, "model.onnx"), model_type=model_type,
            num_heads=meta["heads"], hidden_size=meta["hidden"],
            opt_level=opt_level)
        model = opt.model
        strip_metadata(model)
        path = os.path.join(out, "model.onnx")
        onnx.save(model, path)
        check_no_local_paths(path)
        inputs = {f[:-4]: np.load(os.path.join(out, "inputs", f))
                  for f in sorted(os.listdir(os.path.join(out, "inputs")))}
        got = run_ort(path, inputs)
        ref = run_ort(os.path.join(src, "model.onnx"), inputs)
        diff = 0.0
        for k, v in got.items():
            np.save(os.path.join(out, "expected", k.replace("/", "_") + ".npy"), v)
            if k in ref:
                diff = max(diff, float(np.max(np.abs(v - ref[k]))))
        ops = collections.Counter(
            (n.domain + "." if n.domain else "") + n.op_type
            for n in model.graph.node)
        meta.update({
            "exporter": "onnxruntime.transformers.optimizer (%s, opt_level %s, "
                        "from %s)" % (model_type, opt_level, source),
            "source": source,
            "op_types": dict(sorted(ops.items())),
            "opset_imports": {(i.domain or "ai.onnx"): i.version
                              for i in model.opset_import},
            "max_abs_diff_optimized_vs_source": diff,
            "ort_version": ort.__version__,
        })
        meta.pop("max_abs_diff_ort_vs_torch", None)
        with open(os.path.join(out, "meta.json"), "w") as f:
            json.dump(meta, f, indent=2)
            f.write("\n")
        print("%-14s %s  |optimized - source| %.2e" % (
            name, ", ".join(k for k in ops if "microsoft" in k), diff))


if __name__ == "__main__":
    main()
