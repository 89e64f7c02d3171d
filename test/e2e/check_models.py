"""End to end: compile every committed export at several tensor-parallel
degrees, run it, and compare with onnxruntime's outputs.

usage: check_models.py MODELS_DIR WORK_DIR [--tp 1,2,4,8] [--mpi] [--atol 1e-4]

For each model folder (with meta.json) and each tp: when the heads allow
tp, `tpc compile` + `tpc run` (in-process ranks) must reproduce
expected/*.npy within atol, and every rank's plan must hold exactly the
minimum of all-reduces (two per transformer layer, one for parallel
residual blocks, none at tp 1), one all-gather per KV cache output whose
heads are split, one of the logits where the LM head is split, and no
other, and an arena within 1.2x of its liveness
lower bound; when they do not, the compile must fail with the promised
error and leave no engine folder, and so must the KNOWN_REFUSALS below.
A model folder with torch_check/ (inputs/ and expected/ of the torch module
in float64) is also checked on those inputs. With --mpi, tp 2 engines also
run under mpirun. Prints one
line per case and a final "N passed, N failed" line.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import compare as compare_outputs  # noqa: E402


def heads_allow(meta, tp):
    heads, kv = meta["heads"], meta.get("kv_heads", meta["heads"])
    return heads % tp == 0 and (kv % tp == 0 or tp % kv == 0)


# Layouts tpc refuses although the heads would allow them, with the start
# of the error it must give: (model, tp or None for every tp). None today.
KNOWN_REFUSALS = {}


def known_refusal(model, tp):
    return KNOWN_REFUSALS.get((model, tp), KNOWN_REFUSALS.get((model, None)))


def expected_collectives(meta, tp):
    """All-reduces per rank: the Megatron minimum, one per layer for parallel
    residual blocks and two otherwise; all-gathers: one per KV cache output
    (present.N.*) while the kv heads are split, none when they are
    replicated (fewer kv heads than ranks)."""
    if tp == 1:
        return 0, 0
    ar = meta.get("allreduces_per_layer", 2) * meta["layers"]
    kv = meta.get("kv_heads", meta["heads"])
    ag = meta.get("present_outputs", 0) if kv % tp == 0 else 0
    return ar, ag


def head_gathers(meta, tp, vocab_parallel):
    """All-gathers of the logits: one where the LM head is column-parallel.
    The default output-head policy (--lm-head auto) splits it when every
    rank gets at least 64 vocabulary columns; a head tied to a table split
    by rows (--vocab-parallel-embedding) is split at any width."""
    if tp == 1 or "logits" not in meta.get("outputs", []):
        return 0
    if meta["vocab"] // tp >= 64:
        return 1
    return int(bool(vocab_parallel and meta.get("tied_lm_head")))


def arg_parser(tp, only="comma-separated substrings: only the models whose name has one"):
    """MODELS WORK [--tp] [--only]: the arguments of the checkers that go
    through a folder of test models."""
    ap = argparse.ArgumentParser()
    ap.add_argument("models")
    ap.add_argument("work")
    ap.add_argument("--tp", default=tp)
    ap.add_argument("--only", default="", help=only)
    return ap


def add_mpi_args(ap, help=None):
    """--mpi (also run tp 2 under mpirun) and --mpirun (its command)."""
    ap.add_argument("--mpi", action="store_true", help=help)
    ap.add_argument("--mpirun", default="mpirun")


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


class Tally:
    """PASS/FAIL lines and their counts; exit status 1 on any failure or
    when nothing ran."""

    def __init__(self):
        self.passed = self.failed = 0

    def __call__(self, ok, name, detail):
        print("%s %s: %s" % ("PASS" if ok else "FAIL", name, detail), flush=True)
        if ok:
            self.passed += 1
        else:
            self.failed += 1

    def finish(self):
        print("%d passed, %d failed" % (self.passed, self.failed))
        return 1 if self.failed or self.passed == 0 else 0


def models_in(models, only):
    """(name, folder, meta) of each model folder with a meta.json, in name
    order; with `only` (comma-separated substrings), those whose name has
    one."""
    for model in sorted(os.listdir(models)):
        model_dir = os.path.join(models, model)
        meta_path = os.path.join(model_dir, "meta.json")
        if not os.path.exists(meta_path) or (
                only and not any(o in model for o in only.split(","))):
            continue
        with open(meta_path) as f:
            yield model, model_dir, json.load(f)


def compare(model_dir, out_dir, atol):
    """(max |diff|, None) or (None, what is wrong): the run's outputs in
    out_dir against model_dir/expected, every one there and no other,
    within atol (compare.py: NaN, infinities, shapes and dtypes too)."""
    return compare_outputs(out_dir, os.path.join(model_dir, "expected"), atol=atol)


def torch_check(model_dir, check_dir, meta, tp, args):
    """A second input with the torch module's float64 outputs as the oracle
    (torch_check/inputs, torch_check/expected): for the mixture-of-experts
    exports, an input that leaves an expert without tokens, which the traced
    file cannot run in onnxruntime."""
    shape = "x".join(map(str, meta["torch_check_shape"]))
    engine = os.path.join(args.work, "%s_tp%d_torch" % (os.path.basename(model_dir), tp))
    r = run(["tpc", "compile", os.path.join(model_dir, "model.onnx"), "--tp", str(tp),
             "-o", engine, "--input-shape", "input_ids=" + shape])
    if r.returncode != 0:
        return False, "compile failed: " + r.stderr.strip()
    out = engine + "_out"
    r = run(["tpc", "run", engine, "--output-dir", out, "--oversubscribe",
             "--input", "input_ids=" + os.path.join(check_dir, "inputs", "input_ids.npy")])
    if r.returncode != 0:
        return False, "run failed: " + r.stderr.strip()
    worst, err = compare(check_dir, out, args.atol)
    return err is None, err or "max |diff| %.2g against torch in float64" % worst


def main():
    ap = arg_parser("1,2,4,8")
    add_mpi_args(ap)
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--vocab-parallel", action="store_true",
                    help="compile with --vocab-parallel-embedding: one more "
                    "all-reduce per forward (the summed embedding lookups)")
    args = ap.parse_args()
    degrees = [int(t) for t in args.tp.split(",")]
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    report = Tally()
    for model, model_dir, meta in models_in(args.models, args.only):
        shapes = []
        for inp, shape in meta["input_shapes"].items():
            shapes += ["--input-shape", "%s=%s" % (inp, "x".join(map(str, shape)))]
        inputs = []
        for inp in meta["input_shapes"]:
            inputs += ["--input", "%s=%s" % (inp, os.path.join(model_dir, "inputs", inp + ".npy"))]
        for tp in degrees:
            case = "%s tp=%d" % (model, tp)
            engine = os.path.join(args.work, "%s_tp%d" % (model, tp))
            r = run(["tpc", "compile", os.path.join(model_dir, "model.onnx"),
                     "--tp", str(tp), "-o", engine] + shapes
                    + (["--vocab-parallel-embedding"] if args.vocab_parallel else []))
            refusal = known_refusal(model, tp)
            if refusal:
                ok = (r.returncode == 1 and refusal in r.stderr
                      and not os.path.exists(engine))
                report(ok, case, "known refusal: " + r.stderr.strip().splitlines()[0]
                       if r.stderr.strip() else "not refused")
                continue
            if not heads_allow(meta, tp):
                ok = (r.returncode == 1 and "does not divide the" in r.stderr
                      and "tp values that work" in r.stderr
                      and not os.path.exists(engine))
                report(ok, case, "refused: " + r.stderr.strip().splitlines()[0]
                       if r.stderr.strip() else "not refused")
                continue
            if r.returncode != 0:
                report(False, case, "compile failed: " + r.stderr.strip())
                continue
            info = json.loads(run(["tpc", "inspect", engine, "--json"]).stdout)
            want_ar, want_ag = expected_collectives(meta, tp)
            if args.vocab_parallel and tp > 1:
                want_ar += 1
            want_ag += head_gathers(meta, tp, args.vocab_parallel)
            counts_ok = True
            arena_ok = True
            for rank in info["ranks"]:
                kinds = {c["kind"]: c["count"] for c in rank.get("collectives", [])}
                if kinds.get("AllReduce", 0) != want_ar or kinds.get("AllGather", 0) != want_ag:
                    counts_ok = False
                # The memory plan stays within 1.2x of the liveness bound.
                bound = rank.get("arena_lower_bound_bytes", 0)
                if not bound or rank["arena_bytes"] > 1.2 * bound:
                    arena_ok = False
            out = os.path.join(args.work, "%s_tp%d_out" % (model, tp))
            r = run(["tpc", "run", engine, "--output-dir", out, "--oversubscribe"] + inputs)
            if r.returncode != 0:
                report(False, case, "run failed: " + r.stderr.strip())
                continue
            worst, err = compare(model_dir, out, args.atol)
            detail = "max |diff| %.2g, %d all-reduces and %d all-gathers per rank" % (
                worst or 0, want_ar, want_ag)
            if not arena_ok:
                err = err or "arena above 1.2x its liveness lower bound: %s" % [
                    (r["arena_bytes"], r.get("arena_lower_bound_bytes")) for r in info["ranks"]]
            report(err is None and counts_ok, case,
                   detail if err is None and counts_ok else (err or "wrong collective counts: %s" % info["ranks"][0].get("collectives")))
            check_dir = os.path.join(model_dir, "torch_check")
            if os.path.isdir(check_dir):
                ok, detail = torch_check(model_dir, check_dir, meta, tp, args)
                report(ok, case + " torch_check", detail)
            if args.mpi and tp == 2:
                out_mpi = out + "_mpi"
                r = run([args.mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "2",
                         "tpc", "run", engine, "--output-dir", out_mpi] + inputs, timeout=300)
                if r.returncode != 0:
                    report(False, case + " mpirun", "run failed: " + r.stderr.strip()[-500:])
                    continue
                worst, err = compare(model_dir, out_mpi, args.atol)
                report(err is None, case + " mpirun", err or "max |diff| %.2g" % worst)
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
