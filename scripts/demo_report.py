"""Prints what the demo engines predict and how they agree.

usage: demo_report.py MODEL_DIR OUT_TP1 OUT_TP2

MODEL_DIR holds meta.json (the demo model's training rule and prompt),
inputs/ and expected/ (onnxruntime's logits). OUT_TP1 and OUT_TP2 hold the
logits tpc computed at tp = 1 and tp = 2.
"""
import json
import os
import sys

import numpy as np


def main():
    model_dir, out1, out2 = sys.argv[1:4]
    with open(os.path.join(model_dir, "meta.json")) as f:
        meta = json.load(f)
    prompt = np.load(os.path.join(model_dir, "inputs", "input_ids.npy"))[0]
    ort = np.load(os.path.join(model_dir, "expected", "logits.npy"))
    tp1 = np.load(os.path.join(out1, "logits.npy"))
    tp2 = np.load(os.path.join(out2, "logits.npy"))
    vocab = tp1.shape[-1]
    print("model:   GPT-2 style, %d layers, hidden %d, %d heads, vocab %d"
          % (meta["layers"], meta["hidden"], meta["heads"], vocab))
    print("trained: %s" % meta["training"]["rule"])
    print("prompt:  %s" % " ".join(str(t) for t in prompt))
    last = tp2[0, -1]
    top = np.argsort(-last)[:5]
    probs = np.exp(last - last.max())
    probs /= probs.sum()
    print("top predicted next tokens (tp=2): %s"
          % ", ".join("%d (p=%.3f)" % (t, probs[t]) for t in top))
    expected = (int(prompt[-1]) + 1) % vocab
    print("expected next token by the rule:  %d -> %s"
          % (expected, "correct" if top[0] == expected else "WRONG"))
    per_pos = np.argmax(tp2[0], axis=-1)
    want = (prompt + 1) % vocab
    print("next-token accuracy over the prompt: %d/%d"
          % (int((per_pos == want).sum()), len(prompt)))
    d12 = float(np.max(np.abs(tp1 - tp2)))
    d1o = float(np.max(np.abs(tp1 - ort)))
    d2o = float(np.max(np.abs(tp2 - ort)))
    print("max |tp=1 - onnxruntime| = %.3g" % d1o)
    print("max |tp=2 - onnxruntime| = %.3g" % d2o)
    print("max |tp=2 - tp=1|        = %.3g" % d12)
    ok = max(d1o, d2o) <= 1e-4 and top[0] == expected
    print("demo: %s" % ("OK" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
