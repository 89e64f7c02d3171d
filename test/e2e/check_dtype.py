"""End to end: compile the committed exports with --dtype fp16 / bf16, run
them on the CPU and compare with onnxruntime's float32 outputs.

usage: check_dtype.py MODELS_DIR WORK_DIR [--tp 1,2] [--dtypes bf16,fp16]
                      [--only NAME] [--compile-args "ARGS"]

For each model folder (with meta.json), tp and dtype:
  - engine.json records the dtype; the inputs and outputs keep the model's
    dtypes (the user feeds the same .npy files and gets float32 back);
  - every rank's weight file opens with the `safetensors` package, holds no
    F32 tensor, and each tensor is the fp32 engine's tensor rounded to
    nearest even (finite values saturating), bit for bit;
  - `tpc inspect` reports at most 0.51x the fp32 engine's weight bytes
    (only the few integer constants are not halved);
  - the outputs match expected/*.npy within
        max |got - want| / max |want|  <=  TOLERANCE[dtype]
    Rounding every activation costs up to 2^-9 (bf16) or 2^-12 (fp16)
    relative per op, and a two-layer model chains a few dozen such ops:
    the committed models reach 0.0031-0.010 in bf16 and 0.0004-0.0015 in
    fp16 (0.015 and 0.002 with --no-fusion; BERT's normalized hidden
    states are the worst; printed per case), half the bound or less. The
    16-bit accumulation and rounding of each kernel are checked to one ulp
    by the kernel unit tests (HalfPrecisionTest); an overflowed mask
    (NaN) fails the finite check here, a missing boundary cast the dtype
    check.
Then `--dtype int8` must fail with exit 1, name the flag and leave no
engine folder. Prints one line per case and "N passed, N failed".
"""
import json
import os
import shutil
import struct
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_models import (Tally, arg_parser, heads_allow,  # noqa: E402
                          known_refusal, models_in, run)
from compare import compare as compare_outputs, load_outputs  # noqa: E402

# max |got - want| / max |want| allowed per dtype.
TOLERANCE = {"bf16": 3e-2, "fp16": 4e-3}
ST_NAME = {"bf16": "BF16", "fp16": "F16"}


def read_safetensors(path):
    """(header, data) of a safetensors file, read independently of tpc."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    header.pop("__metadata__", None)
    return header, raw[8 + n:]


def tensor_bits(header, data, name, dtype):
    begin, end = header[name]["data_offsets"]
    return np.frombuffer(data[begin:end], dtype=dtype)


def narrow(values, dtype):
    """float32 -> 16-bit bits, nearest even, finite values saturating."""
    v = values.astype(np.float32)
    if dtype == "fp16":
        big = np.float32(65504)
        v = np.where(np.isfinite(v), np.clip(v, -big, big), v)
        return v.astype(np.float16).view(np.uint16)
    u = v.view(np.uint32).astype(np.uint64)
    nan = np.isnan(v)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    overflow = np.isfinite(v) & ((r & 0x7FFF) == 0x7F80)
    r = np.where(overflow, (r & 0x8000) | 0x7F7F, r)
    return np.where(nan, ((u >> 16) | 0x40).astype(np.uint16), r).astype(np.uint16)


def check_weights(ref_engine, engine, dtype, world):
    """None, or what is wrong with the 16-bit engine's weight files."""
    try:
        from safetensors import safe_open
    except ImportError:
        safe_open = None
    for rank in range(world):
        name = "rank%d.safetensors" % rank
        path = os.path.join(engine, name)
        if safe_open is not None:
            with safe_open(path, framework="numpy") as f:
                for key in f.keys():
                    got = f.get_slice(key).get_dtype()
                    if got == "F32":
                        return "%s: tensor %s is still F32" % (name, key)
        h16, d16 = read_safetensors(path)
        h32, d32 = read_safetensors(os.path.join(ref_engine, name))
        if sorted(h16) != sorted(h32):
            return "%s: tensor names differ from the fp32 engine" % name
        for key, info in h32.items():
            if info["dtype"] != "F32":
                if h16[key]["dtype"] != info["dtype"]:
                    return "%s: %s changed from %s" % (name, key, info["dtype"])
                continue
            if h16[key]["dtype"] != ST_NAME[dtype]:
                return "%s: %s is %s, not %s" % (name, key, h16[key]["dtype"],
                                                  ST_NAME[dtype])
            want = narrow(tensor_bits(h32, d32, key, "<f4"), dtype)
            got = tensor_bits(h16, d16, key, "<u2")
            if got.shape != want.shape or not np.array_equal(got, want):
                bad = int(np.sum(got != want)) if got.shape == want.shape else -1
                return "%s: %s is not the rounded fp32 tensor (%d elements differ)" % (
                    name, key, bad)
    return None


def weight_bytes(engine):
    info = json.loads(run(["tpc", "inspect", engine, "--json"]).stdout)
    return [r["weight_bytes"] for r in info["ranks"]]


def fixed_bytes(engine, world):
    """Per rank, the bytes of the weight files' non-F32 tensors (integer
    tables such as a densely computed routing's), which no dtype narrows."""
    out = []
    for rank in range(world):
        header, _ = read_safetensors(os.path.join(engine, "rank%d.safetensors" % rank))
        out.append(sum(e - b for t in header.values() if t["dtype"] != "F32"
                       for b, e in [t["data_offsets"]]))
    return out


def compare(model_dir, out_dir):
    """(max |diff| / max |want|, None) or (None, problem) over every
    expected output: each of the model's dtype exactly (a 16-bit engine
    still returns float32), and compare.py's checks (every output there and
    no other, shapes, no NaN or infinity where the reference is finite)."""
    got = load_outputs(out_dir)
    want = load_outputs(os.path.join(model_dir, "expected"))
    for name in sorted(set(got) & set(want)):
        g, w = got[name], want[name]
        if g.dtype != w.dtype:
            return None, "%s: %s%s, expected %s%s" % (
                name, g.dtype, g.shape, w.dtype, w.shape)
    return compare_outputs(got, want, relative=True)


def main():
    ap = arg_parser("1,2")
    ap.add_argument("--dtypes", default="bf16,fp16")
    ap.add_argument("--compile-args", default="",
                    help="more tpc compile flags for every engine")
    args = ap.parse_args()
    extra = args.compile_args.split()
    degrees = [int(t) for t in args.tp.split(",")]
    dtypes = args.dtypes.split(",")
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    report = Tally()
    for model, model_dir, meta in models_in(args.models, args.only):
        shapes, inputs = [], []
        for inp, shape in meta["input_shapes"].items():
            shapes += ["--input-shape", "%s=%s" % (inp, "x".join(map(str, shape)))]
            inputs += ["--input", "%s=%s" % (inp, os.path.join(model_dir, "inputs", inp + ".npy"))]
        onnx_path = os.path.join(model_dir, "model.onnx")
        for tp in degrees:
            # check_models.py asserts these refusals.
            if not heads_allow(meta, tp) or known_refusal(model, tp):
                continue
            ref = os.path.join(args.work, "%s_tp%d_fp32" % (model, tp))
            r = run(["tpc", "compile", onnx_path, "--tp", str(tp), "-o", ref] + shapes + extra)
            if r.returncode != 0:
                report(False, "%s tp=%d fp32" % (model, tp), r.stderr.strip())
                continue
            ref_bytes = weight_bytes(ref)
            for dtype in dtypes:
                case = "%s %s tp=%d" % (model, dtype, tp)
                engine = os.path.join(args.work, "%s_tp%d_%s" % (model, tp, dtype))
                r = run(["tpc", "compile", onnx_path, "--tp", str(tp), "--dtype", dtype,
                         "-o", engine] + shapes + extra)
                if r.returncode != 0:
                    report(False, case, "compile failed: " + r.stderr.strip())
                    continue
                with open(os.path.join(engine, "engine.json")) as f:
                    manifest = json.load(f)
                with open(os.path.join(ref, "engine.json")) as f:
                    ref_manifest = json.load(f)
                problem = None
                if manifest["options"].get("dtype") != dtype:
                    problem = "engine.json options.dtype is %r" % manifest["options"].get("dtype")
                elif (manifest["inputs"] != ref_manifest["inputs"]
                      or manifest["outputs"] != ref_manifest["outputs"]):
                    problem = "inputs/outputs differ from the fp32 engine: %s" % manifest["outputs"]
                if problem is None:
                    problem = check_weights(ref, engine, dtype, tp)
                wb = weight_bytes(engine)
                fixed = fixed_bytes(ref, tp)
                if problem is None and any(b - f > 0.51 * (rb - f)
                                           for b, rb, f in zip(wb, ref_bytes, fixed)):
                    problem = "weight bytes %s vs fp32 %s" % (wb, ref_bytes)
                if problem:
                    report(False, case, problem)
                    continue
                out = engine + "_out"
                r = run(["tpc", "run", engine, "--output-dir", out] + inputs)
                if r.returncode != 0:
                    report(False, case, "run failed: " + r.stderr.strip())
                    continue
                rel, problem = compare(model_dir, out)
                tol = TOLERANCE[dtype]
                if problem is None and rel > tol:
                    problem = "max |diff| / max |want| %.3g > %g" % (rel, tol)
                report(problem is None, case, problem or
                       "max |diff| / max |want| %.2g (tolerance %g), weights %d of %d bytes"
                       % (rel, tol, wb[0], ref_bytes[0]))

    # A bad value is refused before anything is written.
    model = os.path.join(args.models, "gpt2_op17", "model.onnx")
    engine = os.path.join(args.work, "bad_dtype")
    r = run(["tpc", "compile", model, "--dtype", "int8", "-o", engine,
             "--input-shape", "input_ids=1x16"])
    ok = (r.returncode == 1 and "--dtype" in r.stderr and "int8" in r.stderr
          and not os.path.exists(engine)
          and not any(n.startswith(".bad_dtype") for n in os.listdir(args.work)))
    report(ok, "--dtype int8", r.stderr.strip() or "not refused")
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
