"""The checkers checked: outputs with a fault injected must fail every
checker that compares outputs, and correct ones must pass.

usage: check_checkers.py MODELS WORK

From the committed onnxruntime outputs of hf_gpt2_optimum_past (logits and
four KV caches, two of them of one shape), each case writes a reference
folder and an output folder into WORK/CASE, as `tpc run --output-dir`
writes them, and hands them to compare.py (as a module and from the
command line), check_models.py, check_dtype.py, check_contrib.py,
plugin/Inputs/engine_check.py and, for the cases of one array,
node_tests.py (its compare, output by output). Prints "PASS CHECKER CASE: ..." when the checker says what
it should (the fault reported, the correct output accepted), else FAIL;
then "N passed, N failed".
"""
import os
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check_contrib  # noqa: E402
import check_dtype  # noqa: E402
import check_models  # noqa: E402
import compare  # noqa: E402
import node_tests  # noqa: E402

ENGINE_CHECK = os.path.join(HERE, "..", "plugin", "Inputs", "engine_check.py")
MODEL = "hf_gpt2_optimum_past"


def set_at(name, index, value):
    def fault(got, want):
        got[name] = got[name].copy()
        got[name][index] = value
    return fault


def fill(name, value):
    def fault(got, want):
        got[name] = np.full_like(got[name], value)
    return fault


def swap(a, b):
    def fault(got, want):
        got[a], got[b] = got[b], got[a]
    return fault


def drop(name):
    def fault(got, want):
        del got[name]
    return fault


def add(name, like):
    def fault(got, want):
        got[name] = got[like].copy()
    return fault


def reshape(name):
    def fault(got, want):
        got[name] = got[name][:, :-1]
    return fault


def as_int(name):
    def fault(got, want):
        got[name] = np.rint(got[name]).astype(np.int32)
    return fault


def nan_in_both(got, want):
    # A NaN the reference has too is an agreement (ONNX's node tests
    # expect NaN of some ops), not a fault.
    for d in (got, want):
        d["logits"] = d["logits"].copy()
        d["logits"][0, 0, 3] = np.nan


# (case, fault, whether it passes, the output node_tests.compare is given:
# it compares one array at a time, its caller looks for missing outputs).
CASES = [
    ("correct", None, True, "logits"),
    ("nan", set_at("logits", (0, 1, 7), np.nan), False, "logits"),
    ("all-nan", fill("logits", np.nan), False, "logits"),
    ("inf", set_at("present.0.value", (0, 0, 0, 0), np.inf), False, "present.0.value"),
    ("minus-inf", set_at("present.1.key", (0, 3, 7, 15), -np.inf), False, "present.1.key"),
    ("swapped", swap("present.0.key", "present.0.value"), False, "present.0.key"),
    ("swapped-shapes", swap("logits", "present.1.key"), False, "logits"),
    ("dropped", drop("present.1.value"), False, None),
    ("extra", add("present.2.key", "present.1.key"), False, None),
    ("wrong-shape", reshape("logits"), False, "logits"),
    ("int-dtype", as_int("logits"), False, "logits"),
    ("nan-in-both", nan_in_both, True, "logits"),
]


def write(folder, arrays):
    os.makedirs(folder)
    for name, a in arrays.items():
        np.save(os.path.join(folder, name + ".npy"), a)


def checkers():
    """(name, fn(case_dir, got, want) -> problem or None)."""
    def module(case, got, want):
        return compare.compare(os.path.join(case, "out"),
                               os.path.join(case, "model", "expected"), atol=1e-4)[1]

    def command(argv):
        r = subprocess.run([sys.executable] + argv, capture_output=True, text=True)
        line = (r.stdout.strip().splitlines() or [r.stderr.strip()])[-1]
        return None if r.returncode == 0 and line.startswith("match") else line

    def cli(case, got, want):
        return command([os.path.join(HERE, "compare.py"),
                        os.path.join(case, "model", "expected"),
                        os.path.join(case, "out"), "--atol", "1e-4"])

    def models(case, got, want):
        return check_models.compare(os.path.join(case, "model"),
                                    os.path.join(case, "out"), 1e-4)[1]

    def dtype(case, got, want):
        rel, problem = check_dtype.compare(os.path.join(case, "model"),
                                           os.path.join(case, "out"))
        if problem is None and rel > check_dtype.TOLERANCE["fp16"]:
            problem = "max |diff| / max |want| %.3g" % rel
        return problem

    def contrib(case, got, want):
        return check_contrib.compare_run(got, want)

    def engine_check(case, got, want):
        return command([ENGINE_CHECK, "compare",
                        os.path.join(case, "model", "expected"),
                        os.path.join(case, "out")])

    return [("compare", module), ("compare.py", cli), ("check_models", models),
            ("check_dtype", dtype), ("check_contrib", contrib),
            ("engine_check", engine_check)]


def main():
    models, work = sys.argv[1], sys.argv[2]
    reference = compare.load_outputs(os.path.join(models, MODEL, "expected"))
    shutil.rmtree(work, ignore_errors=True)
    passed = failed = 0

    def report(ok, checker, case, detail):
        nonlocal passed, failed
        print("%s %s %s: %s" % ("PASS" if ok else "FAIL", checker, case, detail))
        passed += ok
        failed += not ok

    for case, fault, passes, node_output in CASES:
        want = dict(reference)
        # A correct run is not bit-exact.
        got = {k: (v + np.float32(1e-6)).astype(v.dtype) for k, v in want.items()}
        if fault:
            fault(got, want)
        case_dir = os.path.join(work, case)
        write(os.path.join(case_dir, "model", "expected"), want)
        write(os.path.join(case_dir, "out"), got)
        results = []
        for checker, fn in checkers():
            try:
                results.append((checker, fn(case_dir, got, want)))
            except Exception as e:  # a crash is no report
                report(False, checker, case, "raised %s: %s" % (type(e).__name__, e))
        if node_output:
            results.append(("node_tests", node_tests.compare(got[node_output],
                                                             want[node_output])))
        for checker, problem in results:
            report((problem is None) == passes, checker, case,
                   "accepted" if problem is None else "reported: " + problem)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
