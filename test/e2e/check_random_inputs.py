"""Checks random-inputs.test's runs in WORK: a and b (seed 0) give equal
outputs and c (seed 7) other ones; each run wrote the inputs it generated
to OUT/inputs/, the ids below the 512-row vocabulary and the mask all ones;
onnxruntime on those inputs gives the run's outputs, every one of them and
no other, within 1e-4 (compare.py; d: with the committed mask given by
--input, which is not written).

usage: check_random_inputs.py WORK MODEL MASK.npy
"""
import os
import sys

import numpy as np
import onnxruntime as ort

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import compare, load_outputs  # noqa: E402


def main():
    work, model, mask = sys.argv[1], sys.argv[2], np.load(sys.argv[3])
    out = {r: load_outputs(os.path.join(work, r)) for r in "abcd"}
    same = compare(out["b"], out["a"], atol=0)[1] is None
    print("same seed: %s" % ("equal" if same else "DIFFERENT"))
    other = compare(out["c"], out["a"], atol=0)[1] is not None
    print("other seed: %s" % ("different" if other else "EQUAL"))
    sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    for r in "acd":
        saved = sorted(os.listdir(os.path.join(work, r, "inputs")))
        ids = np.load(os.path.join(work, r, "inputs", "input_ids.npy"))
        if r == "d":
            feeds = {"input_ids": ids, "attention_mask": mask}
            ok_files = saved == ["input_ids.npy"]
        else:
            m = np.load(os.path.join(work, r, "inputs", "attention_mask.npy"))
            feeds = {"input_ids": ids, "attention_mask": m}
            ok_files = saved == ["attention_mask.npy", "input_ids.npy"] and bool(np.all(m == 1))
        in_range = ids.dtype == np.int64 and bool(np.all((ids >= 0) & (ids < 512)))
        spread = len(np.unique(ids)) > 1
        names = [o.name for o in sess.get_outputs()]
        want = dict(zip(names, sess.run(names, feeds)))
        problem = compare(out[r], want, atol=1e-4)[1]
        print("run %s: files %s, ids in [0, 512) %s, distinct ids %s, |tpc - onnxruntime| %s" % (
            r, "ok" if ok_files else "WRONG %s" % saved, "yes" if in_range else "NO",
            "yes" if spread else "NO", "ok" if problem is None else "FAIL (%s)" % problem))
    return 0


if __name__ == "__main__":
    sys.exit(main())
