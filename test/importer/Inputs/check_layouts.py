"""Compiles each layout external_layouts.py wrote at tp 2, runs it on the
source model's committed inputs and compares every output with the
committed onnxruntime outputs of the inline model (MODEL_DIR/expected;
onnxruntime itself cannot run a ConstantOfShape whose value is external).

    check_layouts.py LAYOUTS_DIR MODEL_DIR LAYOUT...

Prints '<layout>: ok, max |diff| D' per layout; exits 1 at the first layout
that fails to compile or run, has an output missing, of another shape,
not finite, or off by more than meta.json's tolerance.
"""
import json
import os
import subprocess
import sys

import numpy as np


def main():
    root, model_dir, layouts = sys.argv[1], sys.argv[2], sys.argv[3:]
    with open(os.path.join(model_dir, "meta.json")) as f:
        meta = json.load(f)
    shapes, tol = meta["input_shapes"], meta["tolerance"]
    shape_flags = []
    for name, dims in shapes.items():
        shape_flags += ["--input-shape", "%s=%s" % (name, "x".join(map(str, dims)))]
    input_flags = []
    for name in shapes:
        input_flags += ["--input", "%s=%s" % (name, os.path.join(model_dir, "inputs", name + ".npy"))]
    expected = os.path.join(model_dir, "expected")
    for layout in layouts:
        folder = os.path.join(root, layout)
        engine, out = os.path.join(folder, "engine"), os.path.join(folder, "out")
        steps = [["tpc", "compile", os.path.join(folder, "model.onnx"), "--tp", "2",
                  "-o", engine, "--quiet"] + shape_flags,
                 ["tpc", "run", engine, "--output-dir", out] + input_flags]
        for args in steps:
            r = subprocess.run(args, capture_output=True, text=True)
            if r.returncode != 0:
                print("%s: FAILED (%s): %s%s" % (layout, args[1], r.stdout, r.stderr))
                return 1
        worst = 0.0
        for name in sorted(os.listdir(expected)):
            want = np.load(os.path.join(expected, name))
            path = os.path.join(out, name)
            if not os.path.exists(path):
                print("%s: FAILED: no output %s" % (layout, name))
                return 1
            got = np.load(path)
            if got.shape != want.shape or not np.all(np.isfinite(got)):
                print("%s: FAILED: %s is %s%s, expected %s" % (
                    layout, name, got.shape, "" if np.all(np.isfinite(got)) else " with NaN/Inf",
                    want.shape))
                return 1
            worst = max(worst, float(np.max(np.abs(got.astype(np.float64) - want))))
        if not worst <= tol:
            print("%s: FAILED: max |diff| %.3g > %g" % (layout, worst, tol))
            return 1
        print("%s: ok, max |diff| %.2g" % (layout, worst))
    return 0


if __name__ == "__main__":
    sys.exit(main())
