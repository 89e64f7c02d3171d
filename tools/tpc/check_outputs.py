"""tpc run --check: the engine's outputs against onnxruntime on the same
inputs. Run by `tpc run` (which embeds this file when tpc is configured),
not by hand:

    python check_outputs.py MODEL OUT_DIR ATOL RTOL NAME=FILE.npy ...
    python check_outputs.py dir:REFERENCE_DIR OUT_DIR ATOL RTOL

With dir:REFERENCE_DIR the expected outputs are the .npy files there (a
tp=1 build's run on the same inputs) instead of onnxruntime's. Inputs named
NAME=FILE (the run's --input files, and the engine's
--const-input files) and ARCHIVE.npz (its --inputs) feed onnxruntime; every output of the model that the
engine wrote to OUT_DIR/<name>.npy is compared. Prints one line per output
(max |diff|, max |diff| / max |expected|, and top-1 agreement over the last
axis for logits) and exits 1 when an output is outside atol + rtol *
|expected|, 2 when onnxruntime cannot run.
"""
import os
import sys


def main(argv):
    model, out_dir, atol, rtol = argv[0], argv[1], float(argv[2]), float(argv[3])
    reference = model[4:] if model.startswith("dir:") else None
    try:
        import numpy as np
        if reference is None:
            import onnxruntime as ort
    except ImportError as e:
        print("tpc run: error: --check needs numpy%s in %s (%s); set TPC_PYTHON "
              "to an interpreter that has them" % (
                  "" if reference else " and onnxruntime", sys.executable, e),
              file=sys.stderr)
        return 2
    if reference is not None:
        # The outputs of the tp=1 build of the same model, same inputs.
        names = sorted(f[:-4] for f in os.listdir(reference) if f.endswith(".npy"))
        want = {n: np.load(os.path.join(reference, n + ".npy")) for n in names}
        print("check against the tp=1 build (atol %g, rtol %g):" % (atol, rtol))
        return compare(np, names, want, out_dir, atol, rtol)
    feeds = {}
    for spec in argv[4:]:
        if spec.endswith(".npz") and "=" not in spec:
            with np.load(spec) as archive:
                feeds.update({k: archive[k] for k in archive.files})
            continue
        name, path = spec.split("=", 1)
        feeds[name] = np.load(path)
    so = ort.SessionOptions()
    so.log_severity_level = 3
    # Basic graph optimizations only: the extended ones run a dequantized
    # weight's MatMul as a quantized kernel that also quantizes the
    # activations, which is not the arithmetic the model defines.
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    try:
        sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
        wanted = {i.name for i in sess.get_inputs()}
        names = [o.name for o in sess.get_outputs()]
        want = dict(zip(names, sess.run(names, {k: v for k, v in feeds.items()
                                                 if k in wanted})))
    except Exception as e:  # onnxruntime's message is the useful part
        print("tpc run: error: --check: onnxruntime cannot run '%s': %s"
              % (model, str(e).splitlines()[0]), file=sys.stderr)
        return 2
    print("check against onnxruntime %s (atol %g, rtol %g):" % (ort.__version__, atol, rtol))
    return compare(np, names, want, out_dir, atol, rtol)


def compare(np, names, want, out_dir, atol, rtol):
    bad = 0
    for name in names:
        path = os.path.join(out_dir, name.replace("/", "_") + ".npy")
        if not os.path.exists(path):
            print("  %s: not written by the engine" % name)
            bad += 1
            continue
        got, ref = np.load(path), want[name]
        if got.shape != ref.shape:
            print("  %s: shape %s, onnxruntime %s  FAIL" % (name, got.shape, ref.shape))
            bad += 1
            continue
        if ref.dtype.kind not in "fc":
            ok = np.array_equal(got, ref)
            print("  %s: %s  %s" % (name, "equal" if ok else "%d of %d differ"
                                    % (int(np.sum(got != ref)), ref.size),
                                    "ok" if ok else "FAIL"))
            bad += not ok
            continue
        g, r = got.astype(np.float64), ref.astype(np.float64)
        diff = np.abs(g - r)
        scale = float(np.max(np.abs(r))) if r.size else 0.0
        ok = bool(np.all(diff <= atol + rtol * np.abs(r))) and bool(
            np.array_equal(np.isnan(g), np.isnan(r)))
        line = "  %s: max |diff| %.3g, max |diff| / max |expected| %.3g" % (
            name, float(np.nanmax(diff)) if diff.size else 0.0,
            float(np.nanmax(diff)) / scale if scale else 0.0)
        if "logits" in name and r.ndim >= 2 and r.shape[-1] > 1:
            agree = float(np.mean(np.argmax(g, -1) == np.argmax(r, -1)))
            line += ", top-1 agreement %.1f%%" % (100 * agree)
        print(line + ("  ok" if ok else "  FAIL"))
        bad += not ok
    print("check: %s" % ("every output within tolerance" if not bad else
                         "%d output(s) outside tolerance" % bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
