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
        text = subprocess.run(args, check=True, capture_output=True,
                              text=True).stdout
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
