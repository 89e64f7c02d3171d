"""Check the importer's op table against ONNX's own operator schemas.

usage: op_versions.py --tpc PATH [--min N] [--max N]

For every op type that `tpc import --list-ops` lists, each since-version
ONNX defines for it that is in effect somewhere in opsets [min, max] must
have its own row in the table: a model is imported by the row with the
highest since-version not above its opset, so a missing row would import a
newer version with an older version's meaning. A row whose since-version is
not one ONNX defines for the op is reported too (it documents a version that
does not exist). Rows of other domains, and the ops ONNX Runtime registers
in the default domain (marked "(ONNX Runtime)"), are not ONNX's to check.
min and max default to the range `tpc import --list-ops`
states. Prints one line per problem and exits 1 when there is any.
"""
import argparse
import re
import subprocess
import sys

import onnx.defs


def table(tpc):
    r = subprocess.run([tpc, "import", "--list-ops"], capture_output=True,
                       text=True)
    if r.returncode != 0:
        sys.exit("tpc import --list-ops failed: " + r.stderr.strip())
    rows = {}
    for line in r.stdout.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        # | op | since | imports as | domain |: ONNX's schemas cover the
        # default domain, less the ops ONNX Runtime registers there.
        if len(cells) >= 4 and cells[1].isdigit() and cells[3] == "ai.onnx" \
                and "(ONNX Runtime)" not in cells[2]:
            rows.setdefault(cells[0], set()).add(int(cells[1]))
    return rows


def opset_range(tpc):
    r = subprocess.run([tpc, "import", "--opset-range"], capture_output=True,
                       text=True)
    m = re.match(r"(\d+) (\d+)", r.stdout.strip())
    if r.returncode != 0 or not m:
        sys.exit("tpc import --opset-range printed no range")
    return int(m.group(1)), int(m.group(2))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tpc", required=True)
    ap.add_argument("--min", type=int)
    ap.add_argument("--max", type=int)
    a = ap.parse_args()
    lo, hi = opset_range(a.tpc)
    lo = a.min if a.min is not None else lo
    hi = a.max if a.max is not None else hi
    newest = onnx.defs.onnx_opset_version()
    defined = {}
    for s in onnx.defs.get_all_schemas_with_history():
        if s.domain in ("", "ai.onnx"):
            defined.setdefault(s.name, set()).add(s.since_version)
    problems = []
    rows = table(a.tpc)
    for op, have in sorted(rows.items()):
        if op not in defined:
            problems.append(f"{op}: not an op of ONNX {onnx.__version__}")
            continue
        versions = sorted(defined[op])
        for i, v in enumerate(versions):
            end = versions[i + 1] - 1 if i + 1 < len(versions) else newest
            if v > hi or end < lo:
                continue  # not in effect anywhere in [lo, hi]
            if v not in have:
                problems.append(f"{op}: no row for since-version {v} "
                                f"(opsets {max(v, lo)} to {min(end, hi)})")
        for v in sorted(have - defined[op]):
            problems.append(f"{op}: row for since-version {v}, which ONNX "
                            f"does not define (it has {versions})")
    for p in problems:
        print(p)
    print(f"{len(problems)} problems in opsets {lo} to {hi}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
