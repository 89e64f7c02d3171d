"""Run ONNX's backend node tests through tpc at tp 1.

usage: node_tests.py [--list | --check EXPECTED | --write-expected FILE | --markdown]
                     [--work DIR] [--jobs N] [--only SUBSTRING] [--tpc PATH]
                     [--node-dir DIR]

A node test is a folder test_*/ with model.onnx and test_data_set_0/
(input_N.pb, output_N.pb; input_N feeds the N-th graph input that is not
an initializer, output_N is the N-th graph output). They are taken from
onnx/backend/test/data/node inside the onnx package when it ships them, and
otherwise written into the work folder from the package's own generators
(onnx.backend.test.case.node, the code ONNX builds those folders with).

Only tests whose every node is in the default domain and has an op type
that `tpc import --list-ops` lists are considered. Each one is compiled
(`tpc compile --tp 1`, with --input-shape for inputs whose dimensions are
not all fixed, taken from the test data), run (`tpc run`), and its outputs
compared with the expected ones: same dtype and shape, floating point
within rtol 1e-3 / atol 1e-4 (bfloat16: 2^-6 / 2^-8, two units of its
precision; NaN equal to NaN), everything else exactly.
A graph input that a node reads as a shape operand (Reshape's shape, Reduce
axes, Slice bounds, ...: SHAPE_OPERANDS), directly or through the ops that
compute the operand, is bound at compile time with `--const-input`, as a
user of a fixed-shape engine does. A test is
classified pass, compile-error, run-error or mismatch. ONNX
writes each test at the since-version of its op; a test at an opset below
the lowest one tpc takes (`tpc import --opset-range`) whose ops are
unchanged between the two is run at that lowest opset.

modes:
  --list                 one line per test: name, class, detail (the default)
  --check EXPECTED       run the tests named in EXPECTED (one a line); exit 1
                         unless all pass; the last line is "N passed, N failed"
  --write-expected FILE  write the sorted names of the passing tests to FILE
  --markdown             print a Markdown section: per op, passing / total and
                         each failing test with a short reason
"""
import argparse
import collections
import concurrent.futures
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import compare_arrays  # noqa: E402

RTOL = 1e-3
ATOL = 1e-4
BF16_RTOL = 2.0 ** -6
BF16_ATOL = 2.0 ** -8
DEFAULT_DOMAINS = ("", "ai.onnx")
TIMEOUT_S = 120
# The one-byte types NumPy has itself; ml_dtypes adds the others.
NUMPY_BYTES = (np.dtype(np.int8), np.dtype(np.uint8), np.dtype(np.bool_))


def find_tpc(explicit):
    if explicit:
        return explicit
    found = shutil.which("tpc")
    if found:
        return found
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(here, "..", "..", "build", "bin", "tpc")


def supported_ops(tpc):
    r = subprocess.run([tpc, "import", "--list-ops"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("tpc import --list-ops failed: " + r.stderr.strip())
    ops = set()
    for line in r.stdout.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        # | op | since | imports as | domain |: the default domain only.
        if len(cells) >= 4 and cells[1].isdigit() and cells[3] == "ai.onnx" \
                and "(ONNX Runtime)" not in cells[2]:
            ops.add(cells[0])
    if not ops:
        sys.exit("tpc import --list-ops printed no ops")
    return ops


def set_opset_range(tpc):
    global MIN_OPSET, OPSET_RANGE
    r = subprocess.run([tpc, "import", "--opset-range"], capture_output=True,
                       text=True)
    lo_hi = r.stdout.split()
    if r.returncode != 0 or len(lo_hi) != 2:
        sys.exit("tpc import --opset-range failed: " + r.stderr.strip())
    MIN_OPSET = int(lo_hi[0])
    OPSET_RANGE = "%s-%s" % tuple(lo_hi)


def model_ops(model):
    return {n.op_type for n in model.graph.node}


def selectable(model, ops):
    """True when every node is a supported op of the default domain."""
    nodes = model.graph.node
    return bool(nodes) and all(n.domain in DEFAULT_DOMAINS and n.op_type in ops
                               for n in nodes)


def shipped_node_dir():
    d = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node")
    if os.path.isdir(d) and any(n.startswith("test_") for n in os.listdir(d)):
        return d
    return None


def write_case(case, root):
    """Writes one generated node test as ONNX lays them out on disk."""
    d = os.path.join(root, case.name)
    data = os.path.join(d, "test_data_set_0")
    os.makedirs(data)
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(case.model.SerializeToString())
    inputs, outputs = case.data_sets[0]
    graph = case.model.graph
    for kind, values, infos in (("input", inputs, graph.input),
                                ("output", outputs, graph.output)):
        for j, value in enumerate(values):
            if isinstance(value, onnx.TensorProto):
                proto = value
            else:
                proto = numpy_helper.from_array(np.asarray(value), infos[j].name)
            with open(os.path.join(data, "%s_%d.pb" % (kind, j)), "wb") as f:
                f.write(proto.SerializeToString())


def generate_node_tests(root, ops, wanted):
    """Writes the selectable node tests (those in wanted, when given) under root."""
    import warnings
    from onnx.backend.test.case import node as node_cases
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            cases = node_cases.collect_testcases()
    os.makedirs(root, exist_ok=True)
    for case in cases:
        if wanted is not None and case.name not in wanted:
            continue
        if case.kind != "node" or not selectable(case.model, ops):
            continue
        for j, value in enumerate(list(case.data_sets[0][0]) + list(case.data_sets[0][1])):
            if not isinstance(value, (np.ndarray, np.generic, onnx.TensorProto)):
                break  # sequences, maps, optionals: not tensors
        else:
            write_case(case, root)
    return root


def load_tests(node_dir, ops, wanted):
    """name -> (folder, model) for the selectable tests."""
    tests = {}
    for name in sorted(os.listdir(node_dir)):
        if not name.startswith("test_") or (wanted is not None and name not in wanted):
            continue
        folder = os.path.join(node_dir, name)
        path = os.path.join(folder, "model.onnx")
        if not os.path.exists(path):
            continue
        model = onnx.load(path, load_external_data=False)
        if selectable(model, ops):
            tests[name] = (folder, model)
    return tests


def read_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def graph_inputs(model):
    inits = {t.name for t in model.graph.initializer}
    return [vi for vi in model.graph.input if vi.name not in inits]


def needs_shape(vi):
    tt = vi.type.tensor_type
    if not tt.HasField("shape"):
        return True
    return any(not d.HasField("dim_value") or d.dim_value < 0 for d in tt.shape.dim)


def first_line(text):
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line
    return "(no message)"


def died(rc):
    if rc < 0:
        try:
            return "crashed with %s" % signal.Signals(-rc).name
        except ValueError:
            return "crashed with signal %d" % -rc
    return None


def tpc_error(argv):
    """Runs a tpc command; None when it succeeds, else why it failed."""
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return "timed out after %ds" % TIMEOUT_S
    except OSError as e:
        return "cannot start tpc: %s" % e
    if r.returncode == 0:
        return None
    crash = died(r.returncode)
    msg = first_line(r.stderr + r.stdout)
    return ("%s: %s" % (crash, msg)) if crash else msg


def compare(got, want):
    """None when got matches want, else a short description."""
    if want.dtype.name == "bfloat16" and got.dtype == np.float32:
        # tpc run writes bf16 outputs as float32 (numpy has no bfloat16),
        # each value exact; a bf16 result is compared within two units of
        # bf16's precision (2^-7 relative): kernels accumulate in float and
        # round once, the reference rounds elsewhere.
        want = want.astype(np.float32)
        if compare_arrays(got, want, atol=BF16_ATOL, rtol=BF16_RTOL)[1] is None:
            return None
    if got.dtype.kind == "V" and got.dtype.itemsize == 1 and \
            want.dtype.itemsize == 1 and want.dtype not in NUMPY_BYTES:
        # float8 and 4-/2-bit integers (ml_dtypes): tpc writes their bit
        # patterns as one opaque byte per element.
        got = got.view(want.dtype)
        if got.shape != want.shape:
            return "shape %s, expected %s" % (got.shape, want.shape)
        g, w = got.astype(np.float64), want.astype(np.float64)
        if np.array_equal(g, w, equal_nan=True):
            return None
        return "%d of %d elements differ" % (
            int(np.sum(~((g == w) | (np.isnan(g) & np.isnan(w))))), want.size)
    if got.dtype != want.dtype:
        return "dtype %s, expected %s" % (got.dtype, want.dtype)
    if got.shape != want.shape:
        return "shape %s, expected %s" % (got.shape, want.shape)
    if want.size == 0:
        return None
    if np.issubdtype(want.dtype, np.floating) or np.issubdtype(want.dtype, np.complexfloating):
        # NaN where ONNX expects NaN, an infinity where it expects that one.
        return compare_arrays(got, want, atol=ATOL, rtol=RTOL)[1]
    if np.array_equal(got, want):
        return None
    if want.dtype == np.bool_ or not np.issubdtype(want.dtype, np.number):
        return "%d of %d elements differ" % (int(np.sum(got != want)), want.size)
    return "max |diff| %d (%d of %d elements differ)" % (
        int(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))),
        int(np.sum(got != want)), want.size)


# The lowest default-domain opset tpc takes; set from `tpc import
# --opset-range` in main().
MIN_OPSET = 7
OPSET_RANGE = "7-28"


def default_opset(model):
    for imp in model.opset_import:
        if imp.domain in DEFAULT_DOMAINS:
            return imp.version
    return None


def lifted_to_min_opset(model):
    """The model at MIN_OPSET when it declares an older opset whose ops all
    mean the same at MIN_OPSET (ONNX writes each node test at its op's
    since-version, so an op unchanged since opset 1 comes at opset 1);
    otherwise None."""
    version = default_opset(model)
    if version is None or version >= MIN_OPSET:
        return None
    for node in model.graph.node:
        try:
            schema = onnx.defs.get_schema(node.op_type, MIN_OPSET, node.domain)
        except Exception:
            return None
        if schema.since_version > version:
            return None
    lifted = onnx.ModelProto()
    lifted.CopyFrom(model)
    for imp in lifted.opset_import:
        if imp.domain in DEFAULT_DOMAINS:
            imp.version = MIN_OPSET
    return lifted


# Operands tpc needs as compile-time constants (shapes, axes, sizes, bounds),
# by op type: input positions. A test that feeds one from a graph input binds
# that input with --const-input (tpc, like TensorRT, specializes on them).
SHAPE_OPERANDS = {
    "Reshape": (1,), "Expand": (1,), "Tile": (1,), "ConstantOfShape": (0,),
    "Squeeze": (1,), "Unsqueeze": (1,), "Split": (1,), "Slice": (1, 2, 3, 4),
    "Pad": (1, 2, 3), "Range": (0, 1, 2), "CumSum": (1,), "Trilu": (1,),
    "ReduceSum": (1,), "ReduceMean": (1,), "ReduceMax": (1,), "ReduceMin": (1,),
    "ReduceProd": (1,), "ReduceL2": (1,), "ReduceSumSquare": (1,),
    "ReduceL1": (1,), "ReduceLogSum": (1,), "ReduceLogSumExp": (1,),
    "Dropout": (1, 2), "TopK": (1,), "OneHot": (1,),
}


def shape_operand_inputs(model):
    """Names of graph inputs whose values a node reads as a shape operand,
    directly or through the ops computing that operand (a Shape or Size
    reads only its input's shape, so the walk stops there)."""
    inputs = {vi.name for vi in graph_inputs(model)}
    producer = {o: n for n in model.graph.node for o in n.output}
    todo = [node.input[i] for node in model.graph.node
            for i in SHAPE_OPERANDS.get(node.op_type, ())
            if i < len(node.input) and node.input[i]]
    seen, names = set(), set()
    while todo:
        v = todo.pop()
        if v in seen:
            continue
        seen.add(v)
        if v in inputs:
            names.add(v)
        n = producer.get(v)
        if n is not None and n.op_type not in ("Shape", "Size"):
            todo.extend(i for i in n.input if i)
    return names


def run_test(tpc, name, folder, model, work):
    """(class, detail) for one test."""
    case_dir = os.path.join(work, name)
    shutil.rmtree(case_dir, ignore_errors=True)
    os.makedirs(case_dir)
    model_path = os.path.join(folder, "model.onnx")
    lifted = lifted_to_min_opset(model)
    if lifted is not None:
        model_path = os.path.join(case_dir, "model.onnx")
        with open(model_path, "wb") as f:
            f.write(lifted.SerializeToString())
    data = os.path.join(folder, "test_data_set_0")
    inputs = graph_inputs(model)
    shape_flags, input_flags = [], []
    frozen = shape_operand_inputs(model)
    for j, vi in enumerate(inputs):
        path = os.path.join(data, "input_%d.pb" % j)
        if not os.path.exists(path):
            return "compile-error", "test data has no input_%d.pb for '%s'" % (j, vi.name)
        arr = read_pb(path)
        npy = os.path.join(case_dir, "input_%d.npy" % j)
        np.save(npy, arr)
        if vi.name in frozen:
            shape_flags += ["--const-input", "%s=%s" % (vi.name, npy)]
            continue
        input_flags += ["--input", "%s=%s" % (vi.name, npy)]
        if needs_shape(vi) and arr.ndim > 0:
            shape_flags += ["--input-shape", "%s=%s" % (vi.name, "x".join(map(str, arr.shape)))]
    engine = os.path.join(case_dir, "engine")
    error = tpc_error([tpc, "compile", model_path, "--tp", "1", "-o", engine] + shape_flags)
    if error is not None:
        return "compile-error", error
    out = os.path.join(case_dir, "out")
    error = tpc_error([tpc, "run", engine, "--output-dir", out] + input_flags)
    if error is not None:
        return "run-error", error
    problems = []
    for j, vi in enumerate(model.graph.output):
        want = read_pb(os.path.join(data, "output_%d.pb" % j))
        path = os.path.join(out, vi.name.replace("/", "_") + ".npy")
        if not os.path.exists(path):
            return "run-error", "no output file for '%s'" % vi.name
        try:
            got = np.load(path)
        except Exception as e:  # a malformed file is the runtime's fault
            return "run-error", "unreadable output '%s': %s" % (vi.name, e)
        diff = compare(got, want)
        if diff:
            problems.append("%s: %s" % (vi.name, diff) if len(model.graph.output) > 1 else diff)
    shutil.rmtree(case_dir, ignore_errors=True)
    if problems:
        return "mismatch", "; ".join(problems)
    return "pass", ""


def type_name(number):
    try:
        return onnx.helper.tensor_dtype_to_np_dtype(number).name
    except Exception:
        return onnx.TensorProto.DataType.Name(number).lower()


SHORT_REASONS = [
    (r"uses opset (\d+) of the default domain",
     lambda m: "opset %s, tpc takes %s" % (m.group(1), OPSET_RANGE)),
    (r"unsupported (?:element|data) type \w+ \((\d+)\)",
     lambda m: "%s tensors not supported" % type_name(int(m.group(1)))),
    (r"unsupported target data type \w+ \((\d+)\)",
     lambda m: "Cast to %s not supported" % type_name(int(m.group(1)))),
    (r"the '(\w+)' input must be a compile-time constant",
     lambda m: "'%s' is a graph input, not a constant" % m.group(1)),
    (r"start, limit and delta must be compile-time constants",
     lambda m: "Range bounds are graph inputs, not constants"),
    (r"output \d+ \(mean or inverse standard deviation\) is not supported",
     lambda m: "Mean / InvStdDev outputs not supported"),
    (r"the mask output of Dropout is not supported",
     lambda m: "Dropout mask output not supported"),
    (r"only mode '\w+' is supported, not '(\w+)'",
     lambda m: "mode '%s' not supported" % m.group(1)),
    (r"is not computed by a kernel", lambda m: "constant graph output not supported"),
    (r"\((\w+), node .*input \d+ has unsupported dtype (\w+)",
     lambda m: "%s kernel lacks %s" % (m.group(1), m.group(2))),
    (r"\((\w+), node .*rejected its operands.*\): (.*)",
     lambda m: "%s kernel: %s" % (m.group(1), m.group(2))),
    (r"unsupported dtype descr '<V2'", lambda m: "bfloat16 inputs not readable by tpc run"),
]


def short_reason(cls, detail):
    """A short phrase for the Markdown table."""
    m = re.search(r"crashed with \w+", detail)
    if m:
        return "%s %s" % (cls, m.group(0))
    if cls == "mismatch":
        return "wrong result: %s" % detail
    for pat, fmt in SHORT_REASONS:
        m = re.search(pat, detail)
        if m:
            return fmt(m)
    text = re.sub(r"^tpc \w+: error: ", "", detail)
    if len(text) > 80:
        text = text[:77] + "..."
    return "%s: %s" % (cls, text)


def markdown(results, tests, ops):
    by_op = collections.defaultdict(list)
    for name, (folder, model) in tests.items():
        for op in model_ops(model):
            by_op[op].append(name)
    total = len(results)
    passed = sum(1 for c, _ in results.values() if c == "pass")
    lines = [
        "## ONNX backend node tests",
        "",
        "`test/e2e/node_tests.py --markdown` produced this section: it compiles "
        "and runs at tp 1 every ONNX backend node test (onnx %s) whose nodes are "
        "all supported ops of the default domain, and compares the outputs with "
        "ONNX's (floats within rtol 1e-3 / atol 1e-4, bfloat16 within 2^-6 / 2^-8, other types exactly). "
        "A graph input that feeds a shape operand (Reshape's shape, Reduce axes, "
        "Slice bounds, ...) is bound at compile time with `--const-input`. "
        "A test counts for each op in its graph; `test/e2e/node-tests.test` "
        "keeps the passing ones passing." % onnx.__version__,
        "",
        "%d of %d tests pass." % (passed, total),
        "",
        "| ONNX op | passing | why the others fail (tests) |",
        "|---|---|---|",
    ]
    for op in sorted(ops, key=str.lower):
        names = sorted(by_op.get(op, []))
        if not names:
            lines.append("| %s | no tests | |" % op)
            continue
        good = [n for n in names if results[n][0] == "pass"]
        reasons = collections.Counter(short_reason(*results[n]).replace("|", "\\|")
                                      for n in names if results[n][0] != "pass")
        why = "; ".join("%s (%d)" % (r, c) for r, c in
                        sorted(reasons.items(), key=lambda rc: (-rc[1], rc[0])))
        lines.append("| %s | %d / %d | %s |" % (op, len(good), len(names), why))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--list", action="store_true")
    mode.add_argument("--check", metavar="EXPECTED")
    mode.add_argument("--write-expected", metavar="FILE")
    mode.add_argument("--markdown", action="store_true")
    ap.add_argument("--work", help="work folder (emptied first); a temporary one by default")
    ap.add_argument("--jobs", type=int, default=2, help="tests run at once (at most 2)")
    ap.add_argument("--only", default="", help="only tests whose name contains this")
    ap.add_argument("--tpc", help="the tpc binary (default: tpc on PATH, else build/bin/tpc)")
    ap.add_argument("--node-dir", help="a folder of node tests to use instead of onnx's")
    args = ap.parse_args()

    tpc = find_tpc(args.tpc)
    ops = supported_ops(tpc)
    set_opset_range(tpc)
    wanted = None
    if args.check:
        with open(args.check) as f:
            wanted = {l.strip() for l in f if l.strip() and not l.startswith("#")}

    temp = args.work is None
    work = tempfile.mkdtemp(prefix="tpc-node-tests-") if temp else os.path.abspath(args.work)
    if not temp:
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
    try:
        node_dir = args.node_dir or shipped_node_dir() or generate_node_tests(
            os.path.join(work, "node"), ops, wanted)
        tests = load_tests(node_dir, ops, wanted)
        if args.only:
            tests = {n: t for n, t in tests.items() if args.only in n}
        results = {}
        runs = os.path.join(work, "runs")
        shutil.rmtree(runs, ignore_errors=True)  # an interrupted run's
        os.makedirs(runs)
        jobs = max(1, min(2, args.jobs))
        with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
            futures = {pool.submit(run_test, tpc, n, folder, model, runs): n
                       for n, (folder, model) in tests.items()}
            for fut in concurrent.futures.as_completed(futures):
                results[futures[fut]] = fut.result()
    finally:
        if temp:
            shutil.rmtree(work, ignore_errors=True)

    if args.check:
        passed = failed = 0
        for name in sorted(wanted):
            cls, detail = results.get(name, ("missing", "no such selectable node test"))
            if cls == "pass":
                passed += 1
            else:
                failed += 1
                print("FAIL %s: %s: %s" % (name, cls, detail))
        print("%d passed, %d failed" % (passed, failed))
        return 1 if failed or passed == 0 else 0
    if args.write_expected:
        with open(args.write_expected, "w") as f:
            for name in sorted(n for n, (c, _) in results.items() if c == "pass"):
                f.write(name + "\n")
        print("%d of %d tests pass; wrote %s" % (
            sum(1 for c, _ in results.values() if c == "pass"), len(results),
            args.write_expected))
        return 0
    if args.markdown:
        print(markdown(results, tests, ops))
        return 0
    width = max([len(n) for n in results] + [4])
    counts = collections.Counter(c for c, _ in results.values())
    for name in sorted(results):
        cls, detail = results[name]
        print("%-*s  %-13s  %s" % (width, name, cls, detail))
    print(", ".join("%s %d" % (c, counts[c]) for c in
                    ("pass", "compile-error", "run-error", "mismatch") if c in counts)
          + " (of %d)" % len(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
