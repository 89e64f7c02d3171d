#!/usr/bin/env python3
"""Export small test models of more Hugging Face `transformers` decoder classes.

Complements generate.py (GPT-2, Llama, BERT) with architectures whose layouts
stress tensor-parallel sharding differently: fused QKV and gate/up projections
(Phi-3), grouped and multi-query fused query_key_value (Falcon), ALiBi (Bloom),
post-sublayer norms and soft-capping (Gemma 2), parallel residual blocks
(GPT-NeoX, GPT-J, Falcon), optimum `text-generation-with-past` exports with
KV-cache inputs and outputs (GPT-2, Llama), and a Llama exported at opset 23,
where the dynamo exporter's optimizer fuses the standard `Attention`,
`RMSNormalization` and `RotaryEmbedding` ops.

Every model is built from a config object (hf_families.py; no hub download),
re-initialised with seeded "informative" weights (see reinit_weights),
float32, eval mode.
Each case folder test/models/<name>/ holds

    model.onnx            weights inline, all metadata_props/doc_strings removed
    inputs/<input>.npy    fixed seeded inputs (no-past: input_ids [1, 16])
    expected/<out>.npy    onnxruntime (CPU) outputs on those inputs
    meta.json             config summary, exporter, opset, op histogram,
                          max |onnxruntime - torch|, input_shapes, outputs,
                          allreduces_per_layer, present_outputs, tolerance

Run with the generator venv (scripts/gen-models creates it at /opt/tpc-gen, or
$TPC_GEN_VENV; this script also needs optimum and optimum-onnx installed there):

    /opt/tpc-gen/bin/python test/models/generate_hf.py
    /opt/tpc-gen/bin/python test/models/generate_hf.py --only hf_phi3_dynamo,hf_bloom_torchscript
    /opt/tpc-gen/bin/python test/models/generate_hf.py --list

The optimum cases need the optimum and optimum-onnx packages in the venv.
"""
import argparse
import contextlib
import json
import math
import os
import shutil
import sys
import tempfile
import time
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import torch
import transformers

from generate import CausalLMLogits, op_histogram
from hf_families import FAMILIES
from onnx_clean import check_no_local_paths, strip_metadata

HERE = os.path.dirname(os.path.abspath(__file__))
SEQ = 16                 # sequence length of the committed no-past inputs
TRACE_SHAPE = (2, 12)    # shape the no-past exports are traced at (not the committed one)
CHECK_SHAPE = (2, 7)     # second shape used to check the dynamic axes
PAST_LEN = 4             # past length of the KV-cache cases
PAST_SEQ = 4             # new tokens of the KV-cache cases
TOL = 1e-4               # max |onnxruntime - torch| accepted at export time

torch.set_num_threads(1)
warnings.filterwarnings("ignore")
transformers.logging.set_verbosity_error()


# ----------------------------------------------------------------------------
# Model building helpers
# ----------------------------------------------------------------------------

def reinit_weights(model, seed):
    """Re-initialise every parameter so that attention and MLPs are far from trivial.

    Hugging Face's default init (std 0.02) makes attention nearly uniform and the
    residual stream nearly the embedding, which hides sharding bugs. Instead:
    weight matrices ~ N(0, (0.8/sqrt(fan_in))^2), embeddings ~ N(0, 0.3^2), norm
    weights ~ 1 + N(0, 0.1^2) (N(0, 0.1^2) for Gemma-style norms that scale by
    1 + weight, recognised by their all-zero default), biases ~ N(0, 0.02^2).
    Tied parameters are initialised once (as the first module that owns them).
    """
    from transformers.pytorch_utils import Conv1D

    g = torch.Generator().manual_seed(seed)
    seen = set()

    def fill(p, std, mean=0.0):
        with torch.no_grad():
            p.copy_(torch.randn(p.shape, generator=g, dtype=torch.float32) * std + mean)

    for _, mod in model.named_modules():
        is_norm = "norm" in type(mod).__name__.lower()
        for pname, p in mod.named_parameters(recurse=False):
            if id(p) in seen:
                continue
            seen.add(id(p))
            if isinstance(mod, torch.nn.Embedding):
                fill(p, 0.3)
            elif is_norm and pname == "weight":
                zero_centred = bool(torch.all(p == 0))
                fill(p, 0.1, 0.0 if zero_centred else 1.0)
            elif pname == "bias" or p.dim() == 1:
                fill(p, 0.02)
            else:
                # Linear stores [out, in]; GPT-2's Conv1D stores [in, out].
                fan_in = p.shape[0] if isinstance(mod, Conv1D) else math.prod(p.shape[1:])
                fill(p, 0.8 / math.sqrt(fan_in))
    missing = [n for n, p in model.named_parameters() if id(p) not in seen]
    assert not missing, missing


def finish_model(model, seed):
    reinit_weights(model, seed)
    model = model.float().eval()
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.p = 0.0
    return model


def seeded(model_class, cfg, seed):
    """The model of `cfg`, its weights drawn from `seed` (finish_model)."""
    torch.manual_seed(seed)
    return finish_model(model_class(cfg), seed)


def base_meta(family, cfg, layers, heads, kv_heads, hidden, intermediate, vocab, max_pos, **extra):
    meta = {"family": family, "hf_class": None, "layers": layers, "heads": heads, "kv_heads": kv_heads,
            "hidden": hidden, "head_dim": hidden // heads, "intermediate": intermediate, "vocab": vocab,
            "max_positions": max_pos, "tied_lm_head": bool(getattr(cfg, "tie_word_embeddings", False))}
    meta.update(extra)
    return meta


def build_family(fam, seed):
    """(model, meta) of a family of hf_families.FAMILIES, its weights drawn
    from `seed` (seeded)."""
    cfg = getattr(transformers, fam["config_class"])(**fam["config"])
    model = seeded(getattr(transformers, fam["model_class"]), cfg, seed)
    meta = {k: v(cfg) if callable(v) else v for k, v in fam["meta"].items()}
    return model, base_meta(fam["name"], cfg, *fam["dims"], **meta)


def build_case(spec):
    """(model, meta) of a case of CASES (or one like it): its family and seed."""
    return build_family(FAMILIES[spec["family"]], spec["seed"])


class CausalLMLogitsBatchedPositions(torch.nn.Module):
    """input_ids -> logits with explicit position_ids of shape [batch, sequence].

    Without them Llama's rotary cos/sin are [1, sequence, head_dim] and the fused
    RotaryEmbedding gets [1, sequence, head_dim / 2] caches, which the opset-23
    spec (and onnxruntime) require to be [batch, sequence, head_dim / 2]: the
    exported model then fails in onnxruntime for batch > 1. Same values as the
    model's default positions.
    """

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids):
        batch, seq = input_ids.shape
        position_ids = torch.arange(seq, device=input_ids.device).unsqueeze(0).expand(batch, seq)
        return self.model(input_ids=input_ids, position_ids=position_ids, use_cache=False, return_dict=False)[0]


# name -> how to build and export it: family (of FAMILIES), seed, exporter
# (torchscript | dynamo | optimum) and opset.
# Optional: wrapper (module class around the model, default CausalLMLogits),
# require_ops (op types the export must contain), routed (a mixture of
# experts: see routed_inputs).
CASES = {
    "hf_phi3_torchscript": dict(family="phi3", seed=11, exporter="torchscript", opset=17),
    "hf_phi3_dynamo": dict(family="phi3", seed=11, exporter="dynamo", opset=18),
    "hf_falcon_gqa_torchscript": dict(family="falcon_gqa", seed=12, exporter="torchscript", opset=17),
    "hf_falcon_mqa_torchscript": dict(family="falcon_mqa", seed=13, exporter="torchscript", opset=17),
    "hf_falcon_gqa_dynamo": dict(family="falcon_gqa", seed=12, exporter="dynamo", opset=18),
    "hf_bloom_torchscript": dict(family="bloom", seed=14, exporter="torchscript", opset=17),
    "hf_gemma2_torchscript": dict(family="gemma2", seed=15, exporter="torchscript", opset=17),
    "hf_gemma_mqa_torchscript": dict(family="gemma", seed=33, exporter="torchscript", opset=17),
    "hf_gptneox_torchscript": dict(family="gptneox", seed=16, exporter="torchscript", opset=17),
    "hf_gptj_torchscript": dict(family="gptj", seed=17, exporter="torchscript", opset=17),
    "hf_gpt2_optimum_past": dict(family="gpt2_past", seed=18, exporter="optimum", opset=None),
    "hf_llama_optimum_past": dict(family="llama_past", seed=19, exporter="optimum", opset=None),
    "hf_qwen2_optimum_past": dict(family="qwen2_past", seed=21, exporter="optimum", opset=None),
    "hf_mixtral_torchscript": dict(family="mixtral", seed=22, exporter="torchscript", opset=17,
                                   routed=True),
    "hf_qwen3moe_optimum_past": dict(family="qwen3moe_past", seed=23, exporter="optimum", opset=None),
    "hf_gemma2_optimum_past": dict(family="gemma2_past", seed=24, exporter="optimum", opset=None),
    "hf_llama_dynamo_op23": dict(family="llama_op23", seed=20, exporter="dynamo", opset=23,
                                 wrapper=CausalLMLogitsBatchedPositions,
                                 require_ops=["Attention", "RMSNormalization", "RotaryEmbedding"]),
}


# ----------------------------------------------------------------------------
# Export helpers
# ----------------------------------------------------------------------------

@contextlib.contextmanager
def traceable_masks():
    """Make transformers' mask creation traceable, the way optimum's ModelPatcher does.

    transformers >= 4.53 builds attention masks with torch.vmap, which the
    TorchScript exporter cannot trace (IndexError: unordered_map::at); optimum
    registers vectorised, vmap-free replacements for the "sdpa" and "eager" mask
    functions while it exports. We register the same functions. Packed-sequence
    detection (torch.diff on position_ids) is disabled too: it returns None in
    eager mode for ordinary inputs, so the exported graph should not carry it.
    """
    import transformers.masking_utils as mu
    from optimum.exporters.onnx.model_patcher import eager_mask_without_vmap, sdpa_mask_without_vmap

    saved = {k: mu.ALL_MASK_ATTENTION_FUNCTIONS[k] for k in ("sdpa", "eager")}
    saved_packed = mu.find_packed_sequence_indices
    mu.ALL_MASK_ATTENTION_FUNCTIONS.register("sdpa", sdpa_mask_without_vmap)
    mu.ALL_MASK_ATTENTION_FUNCTIONS.register("eager", eager_mask_without_vmap)
    mu.find_packed_sequence_indices = lambda position_ids: None
    try:
        yield
    finally:
        for k, f in saved.items():
            mu.ALL_MASK_ATTENTION_FUNCTIONS.register(k, f)
        mu.find_packed_sequence_indices = saved_packed


def export_torch(wrapper, path, exporter, opset, trace_ids):
    """torch.onnx.export of input_ids -> logits with dynamic batch and sequence axes."""
    args = (torch.from_numpy(trace_ids),)
    with traceable_masks():
        if exporter == "torchscript":
            axes = {"input_ids": {0: "batch", 1: "sequence"}, "logits": {0: "batch", 1: "sequence"}}
            torch.onnx.export(wrapper, args, path, dynamo=False, opset_version=opset,
                              input_names=["input_ids"], output_names=["logits"], dynamic_axes=axes,
                              do_constant_folding=True)
        else:
            batch = torch.export.Dim("batch", min=1, max=64)
            seq = torch.export.Dim("sequence", min=1, max=64)
            torch.onnx.export(wrapper, args, path, dynamo=True, opset_version=opset,
                              input_names=["input_ids"], output_names=["logits"],
                              dynamic_shapes={"input_ids": {0: batch, 1: seq}},
                              external_data=False, optimize=True, verbose=False)


def dim_names(value_info):
    return [d.dim_param if d.dim_param else d.dim_value for d in value_info.type.tensor_type.shape.dim]


def ort_session(path):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def max_diff(a, b):
    return max(float(np.max(np.abs(np.asarray(x, np.float64) - np.asarray(y, np.float64)))) for x, y in zip(a, b))


def finalize_onnx(src, dst):
    """Load an export, verify it has no external data, strip metadata and save it to dst."""
    model = onnx.load(src)
    if any(t.data_location == onnx.TensorProto.EXTERNAL for t in model.graph.initializer):
        raise RuntimeError("model uses external data")
    strip_metadata(model)
    onnx.save(model, dst)
    onnx.checker.check_model(dst, full_check=True)
    check_no_local_paths(dst)
    return onnx.load(dst)


def write_case(d, model, feeds, out_names, ort_out, meta):
    os.makedirs(os.path.join(d, "inputs"))
    os.makedirs(os.path.join(d, "expected"))
    for k, v in feeds.items():
        np.save(os.path.join(d, "inputs", k + ".npy"), v)
    for k, v in zip(out_names, ort_out):
        np.save(os.path.join(d, "expected", k + ".npy"), np.asarray(v, np.float32))
    m = dict(meta)
    m.update({
        "input_shapes": {k: list(v.shape) for k, v in feeds.items()},
        "inputs": {i.name: dim_names(i) for i in model.graph.input},
        "outputs": out_names,
        "output_dims": {o.name: dim_names(o) for o in model.graph.output},
        "opset_imports": {(o.domain or "ai.onnx"): o.version for o in model.opset_import},
        "op_types": op_histogram(model)[0],
        "ort_version": ort.__version__,
        "torch_version": torch.__version__.split("+")[0],
        "transformers_version": transformers.__version__,
        "onnx_version": onnx.__version__,
    })
    path = os.path.join(d, "meta.json")
    with open(path, "w") as f:
        json.dump(m, f, indent=2)
        f.write("\n")
    check_no_local_paths(path)
    return m


def tolerance_for(outputs):
    """Absolute tolerance for compiled engines: 1e-4, loosened for outputs of large magnitude."""
    scale = max(float(np.max(np.abs(o))) for o in outputs)
    return float(max(1e-4, 2e-6 * scale))


# ----------------------------------------------------------------------------
# Cases
# ----------------------------------------------------------------------------

def routed_inputs(sess, vocab, seed, shape):
    """Token ids on which onnxruntime runs a traced mixture-of-experts export.

    transformers' sparse MoE blocks loop over the experts that NonZero finds
    hit; TorchScript unrolls that loop with the count seen while tracing, so
    the file only runs where every expert is hit in every layer (elsewhere
    onnxruntime fails in the Split of NonZero's result). tpc computes the
    routing densely and matches torch on every input; the oracle needs such
    inputs, so draw them until onnxruntime runs.
    """
    for attempt in range(200):
        ids = np.random.default_rng(seed + 1000 * attempt).integers(0, vocab, size=shape, dtype=np.int64)
        try:
            sess.run(None, {"input_ids": ids})
            return ids
        except Exception:
            continue
    raise RuntimeError(f"no input of shape {shape} hits every expert")


def write_unrouted_check(d, sess, model, wrapper, vocab, seed):
    """torch_check/: token ids on which some expert gets no token (so the
    traced file fails in onnxruntime) and the logits of the torch module in
    float64 on them, the oracle there."""
    for attempt in range(200):
        ids = np.random.default_rng(seed + 7000 + attempt).integers(0, vocab, size=(1, 4), dtype=np.int64)
        try:
            sess.run(None, {"input_ids": ids})
        except Exception:
            break
    else:
        raise RuntimeError("every drawn input hits every expert")
    import copy
    wrapper64 = copy.deepcopy(wrapper).double()
    with torch.no_grad():
        logits = wrapper64(torch.from_numpy(ids)).numpy()
    os.makedirs(os.path.join(d, "torch_check", "inputs"))
    os.makedirs(os.path.join(d, "torch_check", "expected"))
    np.save(os.path.join(d, "torch_check", "inputs", "input_ids.npy"), ids)
    np.save(os.path.join(d, "torch_check", "expected", "logits.npy"), logits)
    return list(ids.shape)


def make_logits_case(out_dir, name, spec):
    """No-past case: input_ids [1, 16] -> logits, TorchScript or dynamo exporter."""
    model, meta = build_case(spec)
    meta["hf_class"] = type(model).__name__
    wrapper = spec.get("wrapper", CausalLMLogits)(model).eval()
    vocab = meta["vocab"]
    rng = np.random.default_rng(spec["seed"])
    feeds = {"input_ids": rng.integers(0, vocab, size=(1, SEQ), dtype=np.int64)}
    trace_ids = np.random.default_rng(spec["seed"] + 100).integers(0, vocab, size=TRACE_SHAPE, dtype=np.int64)
    check_ids = np.random.default_rng(spec["seed"] + 200).integers(0, vocab, size=CHECK_SHAPE, dtype=np.int64)

    d = os.path.join(out_dir, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, "model.onnx")
        t0 = time.time()
        export_torch(wrapper, raw, spec["exporter"], spec["opset"], trace_ids)
        t_export = time.time() - t0
        path = os.path.join(d, "model.onnx")
        onnx_model = finalize_onnx(raw, path)
    missing = [t for t in spec.get("require_ops", []) if t not in op_histogram(onnx_model)[0]]
    if missing:
        raise RuntimeError(f"export lacks {missing}")

    sess = ort_session(path)
    in_names = [i.name for i in sess.get_inputs()]
    out_names = [o.name for o in sess.get_outputs()]
    if in_names != ["input_ids"] or out_names != ["logits"]:
        raise RuntimeError(f"unexpected I/O names {in_names} -> {out_names}")
    if spec.get("routed"):
        feeds = {"input_ids": routed_inputs(sess, vocab, spec["seed"], (1, SEQ))}
        check_ids = routed_inputs(sess, vocab, spec["seed"] + 200, CHECK_SHAPE)

    def torch_logits(ids):
        with torch.no_grad():
            return [wrapper(torch.from_numpy(ids)).numpy()]

    ort_out = sess.run(out_names, feeds)
    diff = max_diff(ort_out, torch_logits(feeds["input_ids"]))
    diff_dyn = max_diff(sess.run(out_names, {"input_ids": check_ids}), torch_logits(check_ids))
    if not (diff <= TOL and diff_dyn <= TOL):
        raise RuntimeError(f"onnxruntime differs from torch: {diff} at [1, {SEQ}], {diff_dyn} at {CHECK_SHAPE}")

    meta.update({"exporter": spec["exporter"], "opset": spec["opset"], "seed": spec["seed"],
                 "attn_implementation": model.config._attn_implementation, "present_outputs": 0,
                 "max_abs_diff_ort_vs_torch": diff,
                 "max_abs_diff_ort_vs_torch_dynamic": diff_dyn, "dynamic_check_shape": list(CHECK_SHAPE),
                 "tolerance": tolerance_for(ort_out), "max_abs_output": float(np.max(np.abs(ort_out[0])))})
    if spec.get("routed"):
        meta["torch_check_shape"] = write_unrouted_check(d, sess, model, wrapper, vocab, spec["seed"])
    m = write_case(d, onnx_model, feeds, out_names, ort_out, meta)
    return {"name": name, "diff": diff, "time": t_export, "nodes": len(onnx_model.graph.node), "meta": m}


def past_feeds(meta, seed, in_names):
    rng = np.random.default_rng(seed)
    total = PAST_LEN + PAST_SEQ
    feeds = {}
    for n in in_names:
        if n == "input_ids":
            feeds[n] = rng.integers(0, meta["vocab"], size=(1, PAST_SEQ), dtype=np.int64)
        elif n == "attention_mask":
            feeds[n] = np.ones((1, total), dtype=np.int64)
        elif n == "position_ids":
            feeds[n] = np.arange(PAST_LEN, total, dtype=np.int64).reshape(1, PAST_SEQ)
        elif n.startswith("past_key_values."):
            shape = (1, meta["kv_heads"], PAST_LEN, meta["head_dim"])
            feeds[n] = rng.standard_normal(shape).astype(np.float32)
        else:
            raise RuntimeError(f"unexpected input {n}")
    return feeds


def torch_past_run(model, feeds, layers):
    from transformers.cache_utils import DynamicCache

    cache = DynamicCache()
    for i in range(layers):
        cache.update(torch.from_numpy(feeds[f"past_key_values.{i}.key"]),
                     torch.from_numpy(feeds[f"past_key_values.{i}.value"]), i)
    kwargs = {k: torch.from_numpy(feeds[k]) for k in ("input_ids", "attention_mask", "position_ids") if k in feeds}
    with torch.no_grad():
        out = model(**kwargs, past_key_values=cache, use_cache=True, return_dict=True)
    res = {"logits": out.logits.numpy()}
    pkv = out.past_key_values
    for i in range(layers):
        layer = pkv.layers[i] if hasattr(pkv, "layers") else None
        k, v = (layer.keys, layer.values) if layer is not None else (pkv[i][0], pkv[i][1])
        res[f"present.{i}.key"] = k.numpy()
        res[f"present.{i}.value"] = v.numpy()
    return res


def make_optimum_case(out_dir, name, spec):
    """KV-cache case: optimum text-generation-with-past export from a saved random-weight model."""
    from optimum.exporters.onnx import main_export

    model, meta = build_case(spec)
    meta["hf_class"] = type(model).__name__
    d = os.path.join(out_dir, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "hf")
        dst = os.path.join(tmp, "onnx")
        model.save_pretrained(src, safe_serialization=True)
        t0 = time.time()
        main_export(src, dst, task="text-generation-with-past", library_name="transformers",
                    opset=spec["opset"], device="cpu", no_post_process=True, do_validation=False,
                    local_files_only=True)
        t_export = time.time() - t0
        path = os.path.join(d, "model.onnx")
        onnx_model = finalize_onnx(os.path.join(dst, "model.onnx"), path)
    opset = next(o.version for o in onnx_model.opset_import if o.domain in ("", "ai.onnx"))

    sess = ort_session(path)
    in_names = [i.name for i in sess.get_inputs()]
    out_names = [o.name for o in sess.get_outputs()]
    feeds = past_feeds(meta, spec["seed"], in_names)
    ort_out = sess.run(out_names, feeds)
    ref = torch_past_run(model, feeds, meta["layers"])
    diff = max_diff(ort_out, [ref[n] for n in out_names])
    if not diff <= TOL:
        raise RuntimeError(f"onnxruntime differs from torch by {diff}")
    present = [n for n in out_names if n.startswith("present.")]
    assert len(present) == 2 * meta["layers"], present

    import optimum.version

    meta.update({"exporter": "optimum", "optimum_task": "text-generation-with-past", "opset": opset,
                 "optimum_version": optimum.version.__version__, "seed": spec["seed"],
                 "attn_implementation": "sdpa (optimum loads the saved folder with the transformers default; "
                                        "the torch reference runs eager)",
                 "past_length": PAST_LEN, "present_outputs": len(present), "max_abs_diff_ort_vs_torch": diff,
                 "tolerance": tolerance_for(ort_out), "max_abs_output": float(np.max(np.abs(ort_out[0])))})
    m = write_case(d, onnx_model, feeds, out_names, ort_out, meta)
    return {"name": name, "diff": diff, "time": t_export, "nodes": len(onnx_model.graph.node), "meta": m}


def main():
    ap = argparse.ArgumentParser(description="Export the hf_* test models of more transformers classes.")
    ap.add_argument("--out", default=HERE, help="folder to write the case folders into")
    ap.add_argument("--only", default="", help="comma-separated case names (default: all); see --list")
    ap.add_argument("--list", action="store_true", help="list the case names and exit")
    args = ap.parse_args()
    if args.list:
        for name, spec in CASES.items():
            print(f"{name:28s} {spec['exporter']}")
        return 0
    names = [n for n in args.only.split(",") if n] or list(CASES)
    unknown = [n for n in names if n not in CASES]
    if unknown:
        ap.error(f"unknown case(s) {unknown}; known: {', '.join(CASES)}")

    print(f"torch {torch.__version__}, transformers {transformers.__version__}, onnx {onnx.__version__}, "
          f"onnxruntime {ort.__version__}")
    results, failed = [], []
    for name in names:
        spec = CASES[name]
        print(f"== {name} ({spec['exporter']})", flush=True)
        make = make_optimum_case if spec["exporter"] == "optimum" else make_logits_case
        try:
            r = make(args.out, name, spec)
        except Exception as e:
            shutil.rmtree(os.path.join(args.out, name), ignore_errors=True)
            msg = f"{type(e).__name__}: {str(e).strip().splitlines()[0][:300] if str(e).strip() else ''}"
            print(f"  FAILED: {msg}", flush=True)
            failed.append((name, msg))
            continue
        size = sum(os.path.getsize(os.path.join(dp, f))
                   for dp, _, fs in os.walk(os.path.join(args.out, name)) for f in fs)
        print(f"  ok: {r['nodes']} nodes, {size} bytes, max|ort-torch| {r['diff']:.2e}, "
              f"export {r['time']:.1f}s, inputs {r['meta']['input_shapes']}", flush=True)
        results.append(r)
    print()
    for r in results:
        print(f"{r['name']:28s} opset {r['meta']['opset']:>2} {r['nodes']:5d} nodes  max|ort-torch| {r['diff']:.2e}")
    for name, msg in failed:
        print(f"{name:28s} FAILED {msg}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
