"""Checks on an engine built with a sharding plugin, for the lit tests.

usage: engine_check.py compare EXPECTED_DIR OUT_DIR [--atol 1e-4]
       engine_check.py collectives ENGINE_DIR

compare: every expected/*.npy must match the run's output of the same name
within atol; prints "match, max |diff| D" or "MISMATCH ..." (exit 1).
collectives: prints one line per rank, "rank R: AllReduce N, AllGather N",
from `tpc inspect --json` (tpc must be on PATH).
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np


def compare(args):
    worst = 0.0
    for name in sorted(os.listdir(args.expected)):
        want = np.load(os.path.join(args.expected, name))
        got = np.load(os.path.join(args.out, name))
        if got.shape != want.shape:
            print("MISMATCH %s: shape %s, expected %s" % (name, got.shape, want.shape))
            return 1
        worst = max(worst, float(np.max(np.abs(got.astype(np.float64) - want))))
    if worst > args.atol:
        print("MISMATCH max |diff| %.3g > %g" % (worst, args.atol))
        return 1
    print("match, max |diff| %.2g" % worst)
    return 0


def collectives(args):
    info = json.loads(subprocess.run(["tpc", "inspect", args.engine, "--json"],
                                     check=True, capture_output=True, text=True).stdout)
    for r, rank in enumerate(info["ranks"]):
        kinds = {c["kind"]: c["count"] for c in rank.get("collectives", [])}
        print("rank %d: AllReduce %d, AllGather %d"
              % (r, kinds.get("AllReduce", 0), kinds.get("AllGather", 0)))
    return 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compare")
    c.add_argument("expected")
    c.add_argument("out")
    c.add_argument("--atol", type=float, default=1e-4)
    k = sub.add_parser("collectives")
    k.add_argument("engine")
    args = ap.parse_args()
    return compare(args) if args.cmd == "compare" else collectives(args)


if __name__ == "__main__":
    sys.exit(main())
