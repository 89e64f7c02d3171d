#!/usr/bin/env python3
"""Export a test model with onnxruntime-genai's model builder.

The model builder (`python -m onnxruntime_genai.models.builder`) writes the
ready-made LLM ONNX files of the onnxruntime-genai ecosystem: ONNX Runtime's
com.microsoft `GroupQueryAttention` (packed QKV, rotary inside, past/present
KV cache, seqlens_k from the attention mask), `SkipSimplifiedLayerNormalization`
and the default-domain `SimplifiedLayerNormalization`. This script builds
generate_hf.py's seeded Llama (GQA 4/2), runs the builder on it (fp32, CPU),
inlines the weights and writes test/models/genai_llama_past/ in
generate_hf.py's layout: a KV-cache step with 4 past and 4 new tokens,
onnxruntime's outputs as expected/, and the torch module's logits checked
against them.

    /opt/tpc-gen/bin/python test/models/generate_genai.py

Needs onnxruntime-genai in the generator venv (scripts/gen-models installs
it).
"""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import generate_hf as g  # noqa: E402

NAME = "genai_llama_past"
SEED = 24


def main():
    import onnxruntime_genai

    model, meta = g.build_family(g.FAMILIES["llama_past"], SEED)
    meta["hf_class"] = type(model).__name__
    d = os.path.join(HERE, NAME)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = os.path.join(tmp, "hf"), os.path.join(tmp, "out")
        model.save_pretrained(src, safe_serialization=True)
        # The builder writes the model, then the tokenizer (there is none:
        # the test model has no vocabulary files, and that last step fails).
        subprocess.run([sys.executable, "-m", "onnxruntime_genai.models.builder", "-i", src, "-o", dst,
                        "-p", "fp32", "-e", "cpu", "-c", os.path.join(tmp, "cache")],
                       capture_output=True, text=True)
        raw = os.path.join(dst, "model.onnx")
        if not os.path.exists(raw):
            raise RuntimeError("the model builder wrote no model.onnx")
        m = onnx.load(raw)  # external data read from beside it
        g.strip_metadata(m)
        path = os.path.join(d, "model.onnx")
        onnx.save(m, path)
    # onnx's checker does not know ONNX Runtime's default-domain
    # SimplifiedLayerNormalization; onnxruntime below loads and runs the file.
    g.check_no_local_paths(path)
    onnx_model = onnx.load(path)
    ops = g.op_histogram(onnx_model)[0]
    if "com.microsoft::GroupQueryAttention" not in ops:
        raise RuntimeError(f"the export has no GroupQueryAttention: {ops}")

    sess = g.ort_session(path)
    in_names = [i.name for i in sess.get_inputs()]
    out_names = [o.name for o in sess.get_outputs()]
    feeds = g.past_feeds(meta, SEED, in_names)
    ort_out = sess.run(out_names, feeds)
    ref = g.torch_past_run(model, feeds, meta["layers"])
    diff = g.max_diff(ort_out, [ref[n] for n in out_names])
    if not diff <= g.TOL:
        raise RuntimeError(f"onnxruntime differs from torch by {diff}")
    present = [n for n in out_names if n.startswith("present.")]
    meta.update({"exporter": "onnxruntime-genai model builder (fp32, cpu)",
                 "onnxruntime_genai_version": onnxruntime_genai.__version__, "seed": SEED,
                 "past_length": g.PAST_LEN, "present_outputs": len(present),
                 "max_abs_diff_ort_vs_torch": diff, "tolerance": g.tolerance_for(ort_out),
                 "max_abs_output": float(np.max(np.abs(ort_out[0])))})
    g.write_case(d, onnx_model, feeds, out_names, ort_out, meta)
    print(f"{NAME}: {len(onnx_model.graph.node)} nodes, ops {ops}, max|ort-torch| {diff:.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
