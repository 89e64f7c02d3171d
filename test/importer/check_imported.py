"""Imports every committed export and checks the module's structure.

For each model folder under MODELS: every SSA value has a static type, no
Shape/Range/ConstantOfShape op survives, the function's inputs and outputs
are the ONNX graph's, and weights larger than 64 bytes are onnx.Weight ops
(referenced, not copied into the IR: the printed module stays under a
quarter of the model file's size; folded masks and rotary tables are the
only dense constants).
"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from check_models import KNOWN_REFUSALS, known_refusal  # noqa: E402


def model_refusals(name):
    """The tp keys of KNOWN_REFUSALS for a model (None: every tp)."""
    return [tp for (model, tp) in KNOWN_REFUSALS if model == name]


def main():
    models = sys.argv[1]
    failures = 0
    checked = 0
    for name in sorted(os.listdir(models)):
        meta_path = os.path.join(models, name, "meta.json")
        if not os.path.exists(meta_path):
            continue
        with open(meta_path) as f:
            meta = json.load(f)
        args = ["tpc", "import", os.path.join(models, name, "model.onnx")]
        for inp, shape in meta["input_shapes"].items():
            args += ["--input-shape", inp + "=" + "x".join(map(str, shape))]
        r = subprocess.run(args, capture_output=True, text=True)
        refusal = known_refusal(name, None)
        if refusal is not None and (model_refusals(name) == [None]):
            # A model tpc cannot import yet: the error must say why.
            ok = r.returncode == 1 and refusal in r.stderr
            checked += 1
            failures += 0 if ok else 1
            print("%-12s %s" % (name, "refused as expected" if ok else
                                "FAIL: expected %r, got %r" % (refusal, r.stderr.strip())))
            continue
        if r.returncode != 0:
            raise subprocess.CalledProcessError(r.returncode, args, r.stdout, r.stderr)
        text = r.stdout
        problems = []
        if "?" in re.sub(r'"[^"]*"', "", text):
            problems.append("a dynamic dimension survived")
        for op in ("onnx.Shape", "onnx.Range", "onnx.ConstantOfShape",
                   "onnx.Size"):
            if op + " " in text:
                problems.append(op + " survived")
        for out in meta["outputs"]:
            if '"%s"' % out not in text:
                problems.append("output %s missing" % out)
        if "onnx.Weight" not in text:
            problems.append("no onnx.Weight")
        size = len(text.encode())
        model_size = os.path.getsize(os.path.join(models, name, "model.onnx"))
        if size > model_size // 4:
            problems.append("module is %d bytes for a %d-byte model" % (size, model_size))
        checked += 1
        status = "ok" if not problems else "FAIL: " + "; ".join(problems)
        print("%-12s %s" % (name, status))
        failures += bool(problems)
    if checked == 0:
        print("no models found under", models)
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
