#!/usr/bin/env python3
"""Sweep tiny random-weight Hugging Face `transformers` models through tpc.

For every architecture below a tiny model is built from a config object
(hf_families.py; no hub download), re-initialised with generate_hf.reinit_weights and exported
with every exporter that works for it:

    torchscript    torch.onnx.export(dynamo=False), opset 17
    dynamo         torch.onnx.export(dynamo=True, optimize=True), opset 18
    optimum        optimum's main_export: text-generation (decoders),
                   fill-mask (encoders), text2text-generation (encoder and
                   decoder files of the encoder-decoders)
    optimum-past   text-generation-with-past (decoders; also compiled a
                   second time as a decode engine, --kv-cache, and run with
                   `tpc generate`), text2text-generation-with-past
                   (decoder_with_past_model of the encoder-decoders)
    optimum-fe     feature-extraction (encoders)

Each export is then compiled at every --tp (`tpc compile --tp N
--input-shape ...`), run on the CPU (`tpc run`, ranks as threads) on seeded
inputs and every output compared with onnxruntime's on the same inputs. A
failing export is recorded as export-failed, not as a sweep failure.

    python sweep_hf.py --tpc build/bin/tpc --work /tmp/sweep [--only gpt2,t5] [--tp 2,4]
    python sweep_hf.py --tpc build/bin/tpc --work /tmp/sweep --from-models test/models --only hf_

Exports need the generator virtualenv (torch, transformers 4.57, optimum and
optimum-onnx, onnx, onnxruntime; scripts/gen-models creates it). The tpc half
(--from-models, or --skip-existing over a work folder already exported)
needs only numpy and onnxruntime.

Layout of the work folder:

    DIR/<case>/<exporter>/model.onnx     the export (metadata stripped)
                         /feeds.npz      the seeded inputs
                         /ref/*.npy      onnxruntime's outputs on them
                         /export.json    exporter, status, message, I/O, layers
                         /greedy.npz     decode reference (optimum-past only)
                         /tp<N>/         engine/, out/, compile.log, run.log
    DIR/results.json, DIR/results.md     every row; the table is printed too

Statuses: ok, compile-error, run-error, mismatch (an output off by more than
--rtol x the largest |reference| + 1e-5, or a generated token that differs),
export-failed, and sweep-error (this script could not build inputs or a
reference: a harness problem, not a tpc one). A compile or run that exceeds
--timeout is recorded as compile-error / run-error "timed out".
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

SEQ = 16            # tokens of the no-past inputs (encoder tokens of the encoder-decoders)
DEC_SEQ = 8         # decoder tokens of the encoder-decoders
TRACE_SHAPE = (2, 12)
TRACE_DEC_SHAPE = (2, 6)
PAST_LEN = 4        # past positions of the with-past inputs
PAST_SEQ = 4        # new tokens of the with-past inputs
PROMPT_LEN = 4      # decode engines: prompt tokens
NEW_TOKENS = 6      # decode engines: generated tokens
KV_CACHE = 16       # decode engines: --kv-cache length
MASKED = 3          # encoders: trailing positions masked out by attention_mask
TORCHSCRIPT_OPSET = 17
DYNAMO_OPSET = 18
EXPORTERS = ("torchscript", "dynamo", "optimum", "optimum-past", "optimum-fe")


# ----------------------------------------------------------------------------
# Architectures
# ----------------------------------------------------------------------------
# generate_hf and transformers import torch: loaded only when exporting.

def _gen_hf():
    import generate_hf
    return generate_hf


# family: of hf_families.FAMILIES. kind: causal (input_ids -> logits),
# encoder (input_ids, attention_mask -> MLM logits) or seq2seq (input_ids,
# attention_mask, decoder_input_ids -> logits). routed: a traced mixture of experts that onnxruntime only runs
# where every expert gets a token (generate_hf.routed_inputs).
CASES = {
    "gpt2": dict(kind="causal", family="gpt2_past", seed=18),
    "llama_gqa": dict(kind="causal", family="llama_past", seed=19,
                      note="GQA 4/2: at tp 4 the kv heads are fewer than the ranks"),
    "mistral": dict(kind="causal", family="mistral", seed=31),
    "qwen2": dict(kind="causal", family="qwen2_past", seed=21),
    "qwen3": dict(kind="causal", family="qwen3", seed=32),
    "phi3": dict(kind="causal", family="phi3", seed=11),
    "gemma": dict(kind="causal", family="gemma", seed=33,
                  note="multi-query attention (one kv head), as Gemma-2B"),
    "gemma2": dict(kind="causal", family="gemma2", seed=15),
    "gemma3": dict(kind="causal", family="gemma3", seed=34),
    "gpt_neox": dict(kind="causal", family="gptneox", seed=16),
    "gptj": dict(kind="causal", family="gptj", seed=17),
    "falcon_gqa": dict(kind="causal", family="falcon_gqa", seed=12),
    "falcon_mqa": dict(kind="causal", family="falcon_mqa", seed=13),
    "bloom": dict(kind="causal", family="bloom", seed=14),
    "opt": dict(kind="causal", family="opt", seed=35),
    "stablelm": dict(kind="causal", family="stablelm", seed=36),
    "starcoder2": dict(kind="causal", family="starcoder2", seed=37),
    "mixtral": dict(kind="causal", family="mixtral", seed=22, routed=True),
    "bert": dict(kind="encoder", family="bert", seed=38),
    "roberta": dict(kind="encoder", family="roberta", seed=39),
    "distilbert": dict(kind="encoder", family="distilbert", seed=40),
    "t5": dict(kind="seq2seq", family="t5", seed=41),
    "bart": dict(kind="seq2seq", family="bart", seed=42),
}

# exporter -> optimum task, per kind (None: that exporter does not apply).
OPTIMUM_TASKS = {
    "causal": {"optimum": "text-generation", "optimum-past": "text-generation-with-past"},
    "encoder": {"optimum": "fill-mask", "optimum-fe": "feature-extraction"},
    "seq2seq": {"optimum": "text2text-generation", "optimum-past": "text2text-generation-with-past"},
}


def exporters_for(kind):
    return ["torchscript", "dynamo"] + list(OPTIMUM_TASKS[kind])


# ----------------------------------------------------------------------------
# Inputs and references (numpy and onnxruntime only)
# ----------------------------------------------------------------------------

NP_TYPES = {"tensor(int64)": np.int64, "tensor(int32)": np.int32, "tensor(float)": np.float32,
            "tensor(float16)": np.float16, "tensor(double)": np.float64, "tensor(bool)": np.bool_}


def first_line(text, limit=300):
    for line in str(text).strip().splitlines():
        if line.strip():
            return line.strip()[:limit]
    return ""


def exc_line(e):
    return f"{type(e).__name__}: {first_line(e)}"


def ort_session(path):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def resolve_dim(dim, sizes):
    """A dimension of an ONNX input: its value, or its symbol (or sum of
    symbols, as optimum writes 'past_sequence_length + sequence_length')
    evaluated with the sizes of this sweep."""
    if isinstance(dim, int):
        return dim
    if dim is None:
        raise ValueError("unnamed dynamic dimension")

    def value(m):
        s = m.group(0).lower()
        for key, v in (("batch", 1), ("past", sizes["past"]), ("encoder", sizes["enc"]),
                       ("decoder", sizes["dec"]), ("seq", sizes["seq"]), ("length", sizes["seq"])):
            if key in s:
                return str(v)
        raise ValueError(f"unknown dimension symbol '{m.group(0)}'")

    expr = re.sub(r"[A-Za-z_][A-Za-z0-9_]*", value, str(dim))
    if not re.fullmatch(r"[0-9+\-* ()]+", expr):
        raise ValueError(f"cannot evaluate dimension '{dim}'")
    return int(eval(expr, {"__builtins__": {}}))


def make_feeds(sess, vocab, seed, sizes, masked=0):
    """Seeded inputs for every graph input of an onnxruntime session: token
    ids in [4, vocab), masks of ones (the last `masked` positions of an
    encoder mask zero), positions counting from the past length, token types
    zero, floats (past keys/values, encoder states) standard normal."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for i in sess.get_inputs():
        shape = [resolve_dim(d, sizes) for d in i.shape]
        dtype = NP_TYPES.get(i.type)
        if dtype is None:
            raise ValueError(f"input '{i.name}' has type {i.type}")
        n = i.name.lower()
        if np.issubdtype(dtype, np.floating):
            feeds[i.name] = rng.standard_normal(shape).astype(dtype)
        elif dtype == np.bool_:
            feeds[i.name] = np.ones(shape, np.bool_)
        elif "mask" in n:
            a = np.ones(shape, dtype)
            if masked and "decoder" not in n and len(shape) == 2:
                a[:, -masked:] = 0
            feeds[i.name] = a
        elif "position" in n:
            start = sizes["past"] if "past" in sizes and sizes.get("with_past") else 0
            feeds[i.name] = np.broadcast_to(np.arange(start, start + shape[-1], dtype=dtype), shape).copy()
        elif "token_type" in n:
            feeds[i.name] = np.zeros(shape, dtype)
        elif "ids" in n:
            feeds[i.name] = rng.integers(4, vocab, size=shape).astype(dtype)
        else:
            raise ValueError(f"no rule for input '{i.name}' ({i.type})")
    return feeds


def past_inputs(sess):
    return [i for i in sess.get_inputs() if i.name.startswith("past_key_values")]


def ort_greedy(path, vocab, seed, prompt=None, new_tokens=NEW_TOKENS):
    """onnxruntime's greedy generation with a with-past decoder export, fed
    one token at a time from an empty past, as tpc generate feeds a decode
    engine: (prompt [1, PROMPT_LEN], tokens [NEW_TOKENS], logits [NEW_TOKENS, vocab])."""
    sess = ort_session(path)
    names = [o.name for o in sess.get_outputs()]
    if prompt is None:
        prompt = np.random.default_rng(seed + 500).integers(4, vocab, size=(1, PROMPT_LEN), dtype=np.int64)
    prompt = np.asarray(prompt, np.int64).reshape(1, -1)
    sizes = {"batch": 1, "past": 0, "seq": 1, "enc": 1, "dec": 1}
    state = {}
    for i in past_inputs(sess):
        state[i.name] = np.zeros([resolve_dim(d, sizes) for d in i.shape], NP_TYPES[i.type])
    seqtoks = list(prompt[0])
    tokens, logits = [], []
    length = 0
    while len(tokens) < new_tokens:
        feeds = {}
        for i in sess.get_inputs():
            dtype = NP_TYPES[i.type]
            if i.name in state:
                feeds[i.name] = state[i.name]
            elif i.name == "input_ids":
                feeds[i.name] = np.array([[seqtoks[length]]], dtype)
            elif "mask" in i.name:
                feeds[i.name] = np.ones((1, length + 1), dtype)
            elif "position" in i.name:
                feeds[i.name] = np.array([[length]], dtype)
            else:
                raise ValueError(f"no rule for decode input '{i.name}'")
        outs = dict(zip(names, sess.run(names, feeds)))
        for n, v in outs.items():
            if n.startswith("present"):
                state["past_key_values" + n[len("present"):]] = v
        length += 1
        if length >= prompt.shape[1]:
            last = np.asarray(outs["logits"])[0, -1].astype(np.float32)
            logits.append(last)
            tokens.append(int(np.argmax(last)))
            seqtoks.append(tokens[-1])
    return prompt, np.array(tokens, np.int64), np.stack(logits)


# ----------------------------------------------------------------------------
# Export (torch, transformers, optimum)
# ----------------------------------------------------------------------------

def seq2seq_logits(model):
    """(input_ids, attention_mask, decoder_input_ids) -> logits, as a torch module."""
    import torch

    class Seq2SeqLogits(torch.nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, decoder_input_ids):
            return self.model(input_ids=input_ids, attention_mask=attention_mask,
                              decoder_input_ids=decoder_input_ids, use_cache=False, return_dict=False)[0]

    return Seq2SeqLogits(model)


def export_seq2seq(wrapper, path, exporter, opset, trace_feeds):
    """torch.onnx.export of the full encoder-decoder: the decoder tokens get an
    axis of their own, so generate.export (one 'sequence' for every input)
    does not fit."""
    import torch
    g = _gen_hf()
    args = tuple(torch.from_numpy(v) for v in trace_feeds.values())
    with g.traceable_masks():
        if exporter == "torchscript":
            axes = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"},
                    "decoder_input_ids": {0: "batch", 1: "decoder_sequence"},
                    "logits": {0: "batch", 1: "decoder_sequence"}}
            torch.onnx.export(wrapper, args, path, dynamo=False, opset_version=opset,
                              input_names=list(trace_feeds), output_names=["logits"], dynamic_axes=axes,
                              do_constant_folding=True)
        else:
            batch = torch.export.Dim("batch", min=1, max=64)
            seq = torch.export.Dim("sequence", min=2, max=64)
            dseq = torch.export.Dim("decoder_sequence", min=2, max=64)
            shapes = {"input_ids": {0: batch, 1: seq}, "attention_mask": {0: batch, 1: seq},
                      "decoder_input_ids": {0: batch, 1: dseq}}
            torch.onnx.export(wrapper, args, path, dynamo=True, opset_version=opset,
                              input_names=list(trace_feeds), output_names=["logits"], dynamic_shapes=shapes,
                              external_data=False, optimize=True, verbose=False)


def finalize(src, dst):
    """generate_hf.finalize_onnx (no external data, metadata stripped, saved,
    checked); a checker complaint is noted, not fatal (tpc and onnxruntime
    still get the file)."""
    import onnx
    g = _gen_hf()
    try:
        g.finalize_onnx(src, dst)
        return ""
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as e:
        if not os.path.exists(dst):
            raise
        return "onnx checker: " + first_line(e, 200)


def write_export(d, info, feeds=None, ref=None):
    os.makedirs(d, exist_ok=True)
    if feeds is not None:
        np.savez(os.path.join(d, "feeds.npz"), **feeds)
    if ref is not None:
        os.makedirs(os.path.join(d, "ref"), exist_ok=True)
        for k, v in ref.items():
            np.save(os.path.join(d, "ref", k + ".npy"), v)
    with open(os.path.join(d, "export.json"), "w") as f:
        json.dump(info, f, indent=2)
        f.write("\n")


def reference(path, feeds, names=None):
    sess = ort_session(path)
    names = names or [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, feeds)))


def max_diff(a, b):
    return float(np.max(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64))))


def export_torch_case(name, spec, exporter, model, meta, d):
    """TorchScript or dynamo export of input_ids (+ mask, + decoder ids) ->
    logits; onnxruntime's outputs on seeded inputs are the reference, and
    their distance to torch's is recorded."""
    import torch
    import generate
    g = _gen_hf()
    kind, seed, vocab = spec["kind"], spec["seed"], meta["vocab"]
    opset = TORCHSCRIPT_OPSET if exporter == "torchscript" else DYNAMO_OPSET
    trng = np.random.default_rng(seed + 100)
    path = os.path.join(d, "model.onnx")
    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, "model.onnx")
        if kind == "causal":
            wrapper = generate.CausalLMLogits(model).eval()
            g.export_torch(wrapper, raw, exporter, opset, trng.integers(4, vocab, TRACE_SHAPE, dtype=np.int64))
        elif kind == "encoder":
            wrapper = generate.EncoderHidden(model).eval()   # [0] of a masked LM: its logits
            mask = np.ones(TRACE_SHAPE, np.int64)
            mask[:, -MASKED:] = 0
            trace = {"input_ids": trng.integers(4, vocab, TRACE_SHAPE, dtype=np.int64), "attention_mask": mask}
            with g.traceable_masks():
                generate.export(wrapper, raw, exporter, opset, list(trace), ["logits"], trace)
        else:
            wrapper = seq2seq_logits(model).eval()
            mask = np.ones(TRACE_SHAPE, np.int64)
            mask[:, -MASKED:] = 0
            trace = {"input_ids": trng.integers(4, vocab, TRACE_SHAPE, dtype=np.int64), "attention_mask": mask,
                     "decoder_input_ids": trng.integers(4, vocab, TRACE_DEC_SHAPE, dtype=np.int64)}
            export_seq2seq(wrapper, raw, exporter, opset, trace)
        note = finalize(raw, path)
    sess = ort_session(path)
    sizes = {"past": 0, "seq": SEQ, "enc": SEQ, "dec": DEC_SEQ}
    feeds = make_feeds(sess, vocab, seed, sizes, masked=MASKED if kind != "causal" else 0)
    try:
        ref = reference(path, feeds)
    except Exception as e:
        if not spec.get("routed"):
            raise RuntimeError(f"onnxruntime cannot run the export: {exc_line(e)}")
        feeds = {"input_ids": g.routed_inputs(sess, vocab, seed, (1, SEQ))}
        ref = reference(path, feeds)
        note = (note + "; " if note else "") + "routed inputs (every expert hit)"
    with torch.no_grad():
        want = wrapper(*[torch.from_numpy(feeds[k]) for k in feeds]).numpy()
    first = ref[next(iter(ref))]
    diff = max_diff(first, want)
    if diff > 1e-3 * float(np.max(np.abs(want))) + 1e-5:
        note = (note + "; " if note else "") + f"onnxruntime differs from torch by {diff:.2g}"
    return feeds, ref, {"ort_vs_torch": diff, "note": note, "opset": opset}


def optimum_export(model, task, tmp):
    from optimum.exporters.onnx import main_export
    src = os.path.join(tmp, "hf")
    dst = os.path.join(tmp, "onnx_" + task)
    if not os.path.isdir(src):
        model.config.use_cache = True
        model.save_pretrained(src, safe_serialization=True)
    main_export(src, dst, task=task, library_name="transformers", opset=None, device="cpu",
                no_post_process=True, do_validation=False, local_files_only=True)
    return dst


def layers_of(meta, file_stem):
    if "encoder_layers" in meta:
        if file_stem.startswith("encoder"):
            return meta["encoder_layers"]
        if file_stem.startswith("decoder"):
            return meta["decoder_layers"]
    return meta["layers"]


def export_case(name, work, exporters):
    """Exports one case with each exporter, writing DIR/<case>/<label>/ for
    each file (export.json with status ok or export-failed)."""
    spec = CASES[name]
    kind = spec["kind"]
    case_dir = os.path.join(work, name)

    def fail_all(message):
        for exporter in exporters:
            if exporter in exporters_for(kind):
                d = os.path.join(case_dir, exporter)
                shutil.rmtree(d, ignore_errors=True)
                write_export(d, {"case": name, "exporter": exporter, "status": "export-failed", "message": message})

    try:
        import torch
        import transformers
    except ImportError as e:
        fail_all(f"{exc_line(e)} (exports need the generator virtualenv: torch, transformers, optimum)")
        return
    import warnings
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    transformers.logging.set_verbosity_error()
    try:
        model, meta = _gen_hf().build_case(spec)
    except Exception as e:
        traceback.print_exc(limit=3)
        fail_all("building the model: " + exc_line(e))
        return
    meta["hf_class"] = type(model).__name__
    base = {"case": name, "kind": kind, "hf_class": meta["hf_class"], "vocab": meta["vocab"],
            "heads": meta["heads"], "kv_heads": meta["kv_heads"], "seed": spec["seed"],
            "torch": torch.__version__.split("+")[0], "transformers": transformers.__version__}
    with tempfile.TemporaryDirectory() as tmp:
        for exporter in exporters:
            if exporter not in exporters_for(kind):
                continue
            d = os.path.join(case_dir, exporter)
            shutil.rmtree(d, ignore_errors=True)
            write_export(d, dict(base, exporter=exporter, status="started"))
            t0 = time.time()
            print(f"  export {name} {exporter}", flush=True)
            try:
                if exporter in ("torchscript", "dynamo"):
                    feeds, ref, extra = export_torch_case(name, spec, exporter, model, meta, d)
                    write_export(d, dict(base, exporter=exporter, status="ok", file="model.onnx",
                                         layers=meta["layers"], inputs=list(feeds), outputs=list(ref),
                                         seconds=round(time.time() - t0, 1), **extra), feeds, ref)
                    continue
                task = OPTIMUM_TASKS[kind][exporter]
                dst = optimum_export(model, task, tmp)
                files = sorted(glob.glob(os.path.join(dst, "*.onnx")))
                if kind == "seq2seq" and exporter == "optimum-past":
                    files = [f for f in files if "with_past" in os.path.basename(f)]
                if not files:
                    raise RuntimeError(f"optimum wrote no .onnx file: {sorted(os.listdir(dst))}")
                # One label per file: optimum-past, or optimum.encoder_model ...
                labels = []
                for f in files:
                    stem = os.path.splitext(os.path.basename(f))[0]
                    label = exporter if len(files) == 1 and stem == "model" else f"{exporter}.{stem}"
                    fd = os.path.join(case_dir, label)
                    labels.append(label)
                    if fd != d:
                        shutil.rmtree(fd, ignore_errors=True)
                    info = dict(base, exporter=label, optimum_task=task, file="model.onnx",
                                layers=layers_of(meta, stem))
                    try:
                        os.makedirs(fd, exist_ok=True)
                        path = os.path.join(fd, "model.onnx")
                        note = finalize(f, path)
                        sess = ort_session(path)
                        with_past = bool(past_inputs(sess))
                        sizes = {"past": PAST_LEN, "seq": PAST_SEQ if with_past else SEQ, "enc": SEQ,
                                 "dec": DEC_SEQ, "with_past": with_past}
                        feeds = make_feeds(sess, meta["vocab"], spec["seed"], sizes,
                                           masked=MASKED if kind != "causal" else 0)
                        try:
                            ref = reference(path, feeds)
                        except Exception as e:
                            raise RuntimeError(f"onnxruntime cannot run the export: {exc_line(e)}")
                        info.update(status="ok", note=note, inputs=list(feeds), outputs=list(ref),
                                    with_past=with_past, seconds=round(time.time() - t0, 1))
                        if with_past and kind == "causal":
                            try:
                                prompt, tokens, logits = ort_greedy(path, meta["vocab"], spec["seed"])
                                np.savez(os.path.join(fd, "greedy.npz"), prompt=prompt, tokens=tokens,
                                         logits=logits)
                                info["greedy"] = "greedy.npz"
                            except Exception as e:
                                info["greedy_error"] = exc_line(e)
                        write_export(fd, info, feeds, ref)
                    except Exception as e:
                        write_export(fd, dict(info, status="export-failed", message=exc_line(e)))
                if exporter not in labels:
                    shutil.rmtree(d, ignore_errors=True)   # the files have labels of their own
            except Exception as e:
                traceback.print_exc(limit=3)
                write_export(d, dict(base, exporter=exporter, status="export-failed", message=exc_line(e),
                                     seconds=round(time.time() - t0, 1)))


# ----------------------------------------------------------------------------
# tpc
# ----------------------------------------------------------------------------

class Deadline:
    def __init__(self, seconds):
        self.end = time.time() + seconds

    def left(self):
        return max(1.0, self.end - time.time())


def run_cmd(cmd, deadline, log, log_stdout=True):
    """Runs cmd; (returncode or None on timeout, stdout, stderr). Logs both
    (stderr only, without log_stdout)."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=deadline.left())
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc = None
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
    with open(log, "a") as f:
        f.write("$ " + " ".join(cmd) + "\n" + (out if log_stdout else "") + err + f"[exit {rc}]\n")
    return rc, out, err


def tpc_messages(text):
    """tpc's warnings and errors, and the replicated-projection lines of the
    sharding summary."""
    warn, err, repl = [], [], []
    for line in text.splitlines():
        s = line.strip()
        if ": warning:" in s:
            warn.append(s)
        elif ": error:" in s or s.startswith("error:"):
            err.append(s)
        elif s.startswith("replicated ("):
            repl.append(s)
    return warn, err, repl


def collectives(tpc, engine, deadline, log):
    rc, out, _ = run_cmd([tpc, "inspect", engine, "--json", "--no-verify"], deadline, log, log_stdout=False)
    if rc != 0:
        return None
    try:
        info = json.loads(out)
    except ValueError:
        return None
    ranks = info.get("ranks", [])
    counts = [{c["kind"]: c["count"] for c in r.get("collectives", [])} for r in ranks]
    return counts[0] if counts else {}


def format_collectives(c, layers):
    if c is None:
        return ""
    ar = c.get("AllReduce", 0)
    s = str(ar)
    if layers:
        per = ar / layers
        s += f" ({per:g}/layer)"
    extra = ", ".join(f"{v} {k}" for k, v in sorted(c.items()) if k != "AllReduce")
    return s + (f" + {extra}" if extra else "")


def compare(ref_dir_or_dict, out_dir, rtol):
    """(status, worst abs diff, worst diff / scale, message) over every output."""
    refs = ref_dir_or_dict
    worst, worst_rel, bad = 0.0, 0.0, []
    for name, want in refs.items():
        p = os.path.join(out_dir, name + ".npy")
        if not os.path.exists(p):
            bad.append(f"{name}: not written")
            continue
        got = np.load(p)
        want = np.asarray(want)
        if got.shape != want.shape:
            bad.append(f"{name}: shape {list(got.shape)}, onnxruntime {list(want.shape)}")
            continue
        if want.dtype.kind in "iub":
            if not np.array_equal(got, want):
                bad.append(f"{name}: {int(np.sum(got != want))} elements differ")
            continue
        diff = max_diff(got, want) if want.size else 0.0
        scale = float(np.max(np.abs(want))) if want.size else 0.0
        if not np.isfinite(diff):
            bad.append(f"{name}: non-finite output")
            continue
        worst = max(worst, diff)
        worst_rel = max(worst_rel, diff / scale if scale else diff)
        if diff > rtol * scale + 1e-5:
            bad.append(f"{name}: max|diff| {diff:.3g} > {rtol:g} x {scale:.3g}")
    if bad:
        return "mismatch", worst, worst_rel, "; ".join(bad)
    return "ok", worst, worst_rel, ""


def load_refs(d):
    refs = {}
    for p in sorted(glob.glob(os.path.join(d, "*.npy"))):
        refs[os.path.basename(p)[:-4]] = np.load(p)
    return refs


def step_failed(row, status, rc, errors, out, err, timeout):
    """Whether a tpc command (run_cmd's rc, out and err; errors: its error
    lines) timed out or failed; if so, row gets status and the reason."""
    if rc is None:
        row.update(status=status, message=f"timed out after {timeout} s")
        return True
    if rc != 0:
        row.update(status=status, message=errors[0] if errors else first_line(err or out) or f"exit {rc}")
        return True
    return False


def tpc_row(args, case, label, model, feeds_path, shapes, refs, layers, tp, d, decode=None):
    """Compiles and runs one export at one tp; returns its result row."""
    row = {"case": case, "exporter": label + (" --kv-cache" if decode else ""), "tp": tp,
           "model": os.path.abspath(model), "status": "", "allreduces": "", "diff": "", "message": "",
           "warnings": [], "errors": [], "replicated": []}
    tdir = os.path.join(d, f"tp{tp}" + ("-kv" if decode else ""))
    shutil.rmtree(tdir, ignore_errors=True)
    os.makedirs(tdir)
    engine, out = os.path.join(tdir, "engine"), os.path.join(tdir, "out")
    deadline = Deadline(args.timeout)
    cmd = [args.tpc, "compile", model, "--tp", str(tp), "-o", engine]
    if decode:
        cmd += ["--kv-cache", str(KV_CACHE)]
    else:
        for k, shape in shapes.items():
            cmd += ["--input-shape", f"{k}={'x'.join(str(s) for s in shape) or '1'}"]
    log = os.path.join(tdir, "compile.log")
    t0 = time.time()
    rc, o, e = run_cmd(cmd, deadline, log)
    warn, err, repl = tpc_messages(o + "\n" + e)
    row.update(warnings=warn, errors=err, replicated=repl, compile_s=round(time.time() - t0, 1))
    if step_failed(row, "compile-error", rc, err, o, e, args.timeout):
        return row
    coll = collectives(args.tpc, engine, deadline, log)
    row["collectives"] = coll
    row["allreduces"] = format_collectives(coll, layers)
    log = os.path.join(tdir, "run.log")
    t0 = time.time()
    if decode:
        prompt = os.path.join(tdir, "prompt.npy")
        np.save(prompt, decode["prompt"])
        cmd = [args.tpc, "generate", engine, "--input-ids", prompt, "--max-new-tokens",
               str(len(decode["tokens"])), "--output-dir", out, "--save-logits", "--oversubscribe"]
    else:
        cmd = [args.tpc, "run", engine, "--inputs", feeds_path, "--output-dir", out, "--oversubscribe"]
    rc, o, e = run_cmd(cmd, deadline, log)
    w2, e2, _ = tpc_messages(o + "\n" + e)
    row["warnings"] += w2
    row["errors"] += e2
    row["run_s"] = round(time.time() - t0, 1)
    if step_failed(row, "run-error", rc, e2, o, e, args.timeout):
        return row
    if decode:
        status, worst, rel, msg = compare({"logits": decode["logits"]}, out, args.rtol)
        got = np.load(os.path.join(out, "generated_ids.npy")).reshape(-1).tolist()
        if got != decode["tokens"].tolist():
            status = "mismatch"
            msg = (msg + "; " if msg else "") + f"tokens {got} vs onnxruntime {decode['tokens'].tolist()}"
    else:
        status, worst, rel, msg = compare(refs, out, args.rtol)
    row.update(status=status, diff=f"{worst:.1e} (rel {rel:.0e})", max_abs_diff=worst, rel_diff=rel)
    if status != "ok":
        row["message"] = msg
    elif warn or w2:
        row["message"] = (warn + w2)[0]
    elif repl:
        row["message"] = repl[0]
    return row


def sweep_export(args, case, label, d, info, rows):
    """Every tp (and the decode engine of a with-past decoder) of one export."""
    if info.get("status") != "ok":
        msg = info.get("message") or ("export " + info.get("status", "missing"))
        rows.append({"case": case, "exporter": label, "tp": "-", "status": "export-failed", "allreduces": "",
                     "diff": "", "message": msg, "model": ""})
        return
    model = os.path.join(d, info.get("file", "model.onnx"))
    feeds_path = os.path.join(d, "feeds.npz")
    feeds = np.load(feeds_path)
    shapes = {k: list(feeds[k].shape) for k in feeds.files}
    refs = load_refs(os.path.join(d, "ref"))
    decode = None
    if info.get("greedy"):
        g = np.load(os.path.join(d, info["greedy"]))
        decode = {"prompt": g["prompt"], "tokens": g["tokens"], "logits": g["logits"]}
    for tp in args.tp:
        if info.get("heads") and info["heads"] % tp:
            rows.append({"case": case, "exporter": label, "tp": tp, "status": "skipped", "allreduces": "",
                         "diff": "", "message": f"{info['heads']} heads", "model": model})
            continue
        runs = [None] + ([decode] if decode else [])
        for dec in runs:
            print(f"  tpc {case} {label}{' --kv-cache' if dec else ''} tp={tp}", flush=True)
            row = tpc_row(args, case, label, model, feeds_path, shapes, refs, info.get("layers"), tp, d, dec)
            if info.get("note") and not row["message"] and row["status"] == "ok":
                row["message"] = "export: " + info["note"]
            rows.append(row)
            print(f"    {row['status']} {row['allreduces']} {row['diff']} {row['message'][:160]}", flush=True)
    if info.get("greedy_error"):
        rows.append({"case": case, "exporter": label + " --kv-cache", "tp": "-", "status": "sweep-error",
                     "allreduces": "", "diff": "", "model": model,
                     "message": "no onnxruntime greedy reference: " + info["greedy_error"]})


def from_models(args):
    """Cases from committed model folders (meta.json, model.onnx, inputs/,
    expected/, optionally greedy.json from transformers in float64)."""
    for folder in sorted(os.listdir(args.from_models)):
        src = os.path.join(args.from_models, folder)
        meta_path = os.path.join(src, "meta.json")
        if not os.path.exists(meta_path) or not os.path.exists(os.path.join(src, "model.onnx")):
            continue
        if args.only and not any(o in folder for o in args.only):
            continue
        with open(meta_path) as f:
            meta = json.load(f)
        label = re.sub(r"[^A-Za-z0-9_.+-]+", "_", str(meta.get("exporter", "model")).split()[0])
        d = os.path.join(args.work, folder, label)
        os.makedirs(d, exist_ok=True)
        feeds = {k: np.load(os.path.join(src, "inputs", k + ".npy")) for k in meta["input_shapes"]}
        np.savez(os.path.join(d, "feeds.npz"), **feeds)
        refs = {k: np.load(os.path.join(src, "expected", k + ".npy")) for k in meta["outputs"]}
        shutil.rmtree(os.path.join(d, "ref"), ignore_errors=True)
        os.makedirs(os.path.join(d, "ref"))
        for k, v in refs.items():
            np.save(os.path.join(d, "ref", k + ".npy"), v)
        info = {"case": folder, "exporter": label, "status": "ok",
                "file": os.path.abspath(os.path.join(src, "model.onnx")), "layers": meta.get("layers"),
                "heads": meta.get("heads"), "kv_heads": meta.get("kv_heads")}
        gpath = os.path.join(src, "greedy.json")
        if os.path.exists(gpath):
            with open(gpath) as f:
                g = json.load(f)
            np.savez(os.path.join(d, "greedy.npz"), prompt=np.array([g["prompt"]], np.int64),
                     tokens=np.array(g["tokens"], np.int64), logits=np.array(g["logits"], np.float32))
            info["greedy"] = "greedy.npz"
        yield folder, info["exporter"], d, info


def exported(args, case):
    """The export folders of one case: (label, folder, export.json)."""
    case_dir = os.path.join(args.work, case)
    out = []
    for p in sorted(glob.glob(os.path.join(case_dir, "*", "export.json"))):
        with open(p) as f:
            info = json.load(f)
        out.append((os.path.basename(os.path.dirname(p)), os.path.dirname(p), info))
    rank = {e: i for i, e in enumerate(EXPORTERS)}
    return sorted(out, key=lambda x: (rank.get(x[0].split(".")[0], len(rank)), x[0]))


def run_exports(args, case):
    """Exports one case in a child process (an exporter that hangs or
    crashes costs only that case); exporters it did not finish are recorded
    as export-failed."""
    kind = CASES[case]["kind"]
    wanted = [e for e in exporters_for(kind) if e in args.exporters]
    have = {label.split(".")[0] for label, _, info in exported(args, case) if info.get("status") != "started"}
    if args.skip_existing and all(e in have for e in wanted):
        return
    cmd = [sys.executable, os.path.abspath(__file__), "--export-case", case, "--work", args.work,
           "--exporters", ",".join(wanted)]
    log = os.path.join(args.work, case, "export.log")
    os.makedirs(os.path.dirname(log), exist_ok=True)
    print(f"== {case}: exporting ({', '.join(wanted)})", flush=True)
    t0 = time.time()
    with open(log, "w") as f:
        try:
            rc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, timeout=args.export_timeout).returncode
            why = f"export process exited {rc}"
        except subprocess.TimeoutExpired:
            why = f"export timed out after {args.export_timeout} s"
    print(f"   exported in {time.time() - t0:.0f} s", flush=True)
    done = {label.split(".")[0]: info for label, _, info in exported(args, case)}
    for e in wanted:
        info = done.get(e)
        if info is None or info.get("status") == "started":
            d = os.path.join(args.work, case, e)
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, "export.json"), "w") as f:
                json.dump({"case": case, "exporter": e, "status": "export-failed", "message": why}, f)


def md_escape(s):
    return str(s).replace("|", "\\|").replace("\n", " ")


def write_table(rows, path):
    head = ["case", "exporter", "tp", "status", "all-reduces", "diff", "message"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        msg = first_line(r.get("message", ""), 240)
        lines.append("| " + " | ".join(md_escape(x) for x in (
            r["case"], r["exporter"], r["tp"], r["status"], r.get("allreduces", ""), r.get("diff", ""), msg)) + " |")
    counts = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
    text = "# tpc sweep over Hugging Face architectures\n\n" + summary + "\n\n" + "\n".join(lines) + "\n"
    with open(path, "w") as f:
        f.write(text)
    return text


def main():
    ap = argparse.ArgumentParser(description="Sweep tiny Hugging Face models through tpc compile + run.")
    ap.add_argument("--tpc", default="tpc", help="the tpc binary (default: tpc on PATH)")
    ap.add_argument("--work", help="work folder (exports, engines, results.md); required but for --list")
    ap.add_argument("--only", default="", help="comma-separated case names (default: all); see --list")
    ap.add_argument("--tp", default="2,4", help="comma-separated tensor-parallel degrees (default 2,4)")
    ap.add_argument("--exporters", default=",".join(EXPORTERS),
                    help=f"comma-separated exporters (default: all of {','.join(EXPORTERS)})")
    ap.add_argument("--rtol", type=float, default=1e-3,
                    help="an output matches when max|diff| <= RTOL x max|onnxruntime| + 1e-5 (default 1e-3)")
    ap.add_argument("--timeout", type=int, default=300, help="seconds for one compile + run (default 300)")
    ap.add_argument("--export-timeout", type=int, default=1800,
                    help="seconds for exporting one case with every exporter (default 1800)")
    ap.add_argument("--skip-existing", action="store_true",
                    help="reuse the exports already in --work (only compile and run)")
    ap.add_argument("--no-tpc", action="store_true", help="only export")
    ap.add_argument("--from-models", metavar="DIR",
                    help="instead of exporting, sweep committed model folders (meta.json, model.onnx, "
                         "inputs/, expected/) such as test/models; --only matches substrings of folder names")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    ap.add_argument("--export-case", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if not args.work and not args.list:
        ap.error("--work DIR is required")
    args.work = os.path.abspath(args.work or ".")
    args.only = [n for n in args.only.split(",") if n]
    args.exporters = [e for e in args.exporters.split(",") if e]
    if args.export_case:
        export_case(args.export_case, args.work, args.exporters)
        return 0
    if args.list:
        for name, spec in CASES.items():
            print(f"{name:12s} {spec['kind']:8s} {', '.join(exporters_for(spec['kind']))}")
        return 0
    args.tp = [int(t) for t in args.tp.split(",") if t]
    unknown = [e for e in args.exporters if e not in EXPORTERS]
    if unknown:
        ap.error(f"unknown exporter(s) {unknown}")
    if not args.no_tpc and not shutil.which(args.tpc):
        ap.error(f"no tpc binary at '{args.tpc}'")
    if args.tpc and os.path.sep in args.tpc:
        args.tpc = os.path.abspath(args.tpc)
    os.makedirs(args.work, exist_ok=True)
    rows = []
    t_start = time.time()
    if args.from_models:
        for case, label, d, info in from_models(args):
            print(f"== {case} ({label})", flush=True)
            sweep_export(args, case, label, d, info, rows)
    else:
        names = args.only or list(CASES)
        bad = [n for n in names if n not in CASES]
        if bad:
            ap.error(f"unknown case(s) {bad}; known: {', '.join(CASES)}")
        for case in names:
            run_exports(args, case)
            if args.no_tpc:
                for label, _, info in exported(args, case):
                    print(f"   {label}: {info.get('status')} {info.get('message', '')}", flush=True)
                continue
            for label, d, info in exported(args, case):
                if label.split(".")[0] in args.exporters:
                    sweep_export(args, case, label, d, info, rows)
            # Results so far, so that a long sweep can be read while it runs.
            with open(os.path.join(args.work, "results.json"), "w") as f:
                json.dump(rows, f, indent=1, default=str)
    if args.no_tpc:
        return 0
    with open(os.path.join(args.work, "results.json"), "w") as f:
        json.dump(rows, f, indent=1, default=str)
    text = write_table(rows, os.path.join(args.work, "results.md"))
    print()
    print(text)
    print(f"sweep took {time.time() - t_start:.0f} s; {os.path.join(args.work, 'results.md')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
