#!/usr/bin/env python3
"""Greedy generations of the optimum with-past test models, by transformers.

For each case, rebuilds the PyTorch model generate_hf.py exported (same
config, same seeded weights), runs transformers' own `generate` in float64
(greedy, no end token) on a fixed prompt, and writes
test/models/<name>/greedy.json (beside expected/, which holds
onnxruntime outputs only):

    {"prompt": [...], "tokens": [...], "max_new_tokens": N,
     "logits": [[...], ...]}   # float64 logits of every generation step

Before writing, the float64 logits of prompt + tokens are checked against
onnxruntime on the committed model.onnx (so the rebuilt model is the
exported one). tpc's decode engines are compared with these files by
test/e2e/check_generate.py. Run with the generator venv:

    /opt/tpc-gen/bin/python test/models/generate_greedy.py
"""
import json
import os
import sys

import numpy as np
import onnxruntime as ort
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import generate_genai  # noqa: E402
import generate_hf  # noqa: E402

# name -> how generate_hf.py / generate_genai.py built it.
CASES = {name: generate_hf.CASES[name] for name in
         ["hf_gpt2_optimum_past", "hf_llama_optimum_past", "hf_qwen2_optimum_past",
          "hf_qwen3moe_optimum_past", "hf_gemma2_optimum_past"]}
CASES[generate_genai.NAME] = {"family": "llama_past", "seed": generate_genai.SEED}
PROMPT_LEN = 5
NEW_TOKENS = 12


def ort_logits(path, ids, head_dim):
    s = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    n = len(ids)
    feed = {}
    for i in s.get_inputs():
        if i.name == "input_ids":
            feed[i.name] = np.array([ids], np.int64)
        elif i.name == "attention_mask":
            feed[i.name] = np.ones((1, n), np.int64)
        elif i.name == "position_ids":
            feed[i.name] = np.arange(n, dtype=np.int64)[None]
        else:  # past_key_values.*: empty
            shape = [1 if isinstance(d, str) and "batch" in d else d
                     for d in i.shape]
            shape[2] = 0
            # onnxruntime-genai names the head dim ("kv_cache_dim").
            shape = [head_dim if isinstance(d, str) else d for d in shape]
            feed[i.name] = np.zeros(shape, np.float32)
    return s.run(["logits"], feed)[0][0]


def main():
    for name, case in CASES.items():
        model, meta = generate_hf.build_case(case)
        model = model.double().eval()
        rng = np.random.default_rng(case["seed"])
        prompt = rng.integers(3, meta["vocab"], PROMPT_LEN).tolist()
        with torch.no_grad():
            out = model.generate(
                torch.tensor([prompt]), max_new_tokens=NEW_TOKENS,
                min_new_tokens=NEW_TOKENS, do_sample=False, num_beams=1,
                output_logits=True, return_dict_in_generate=True,
                pad_token_id=0)
        tokens = out.sequences[0, PROMPT_LEN:].tolist()
        logits = [l[0].tolist() for l in out.logits]
        # The rebuilt model is the exported one: its logits over the whole
        # sequence match onnxruntime's on model.onnx.
        seq = prompt + tokens[:-1]
        with torch.no_grad():
            full = model(torch.tensor([seq])).logits[0].numpy()
        ref = ort_logits(os.path.join(HERE, name, "model.onnx"), seq, meta["head_dim"])
        diff = float(np.abs(full - ref).max())
        assert diff < 1e-4, (name, diff)
        # transformers' cached steps agree with its full forward (to 1e-5:
        # Gemma 2's sliding-window cache sums its window in another order).
        for i, step in enumerate(logits):
            d = np.abs(np.array(step) - full[PROMPT_LEN - 1 + i]).max()
            assert d < 1e-5, (name, i, d)
        path = os.path.join(HERE, name, "greedy.json")
        with open(path, "w") as f:
            json.dump({"prompt": prompt, "tokens": tokens,
                       "max_new_tokens": NEW_TOKENS, "logits": logits}, f)
        print("%s: prompt %s -> %s (onnxruntime vs float64 %.2g)"
              % (name, prompt, tokens, diff))


if __name__ == "__main__":
    main()
