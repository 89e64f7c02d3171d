"""Checks on an engine built with a sharding plugin, for the lit tests.

usage: engine_check.py compare EXPECTED_DIR OUT_DIR [--atol 1e-4]
       engine_check.py collectives ENGINE_DIR

compare: the run's outputs must be those of EXPECTED_DIR, each within atol
(test/e2e/compare.py: also no NaN or infinity, the same shapes, no output
missing or extra); prints "match, max |diff| D" or "MISMATCH ..." (exit 1).
collectives: prints one line per rank, "rank R: AllReduce N, AllGather N",
from `tpc inspect --json` (tpc must be on PATH).
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "e2e"))
from compare import compare as compare_outputs  # noqa: E402


def compare(args):
    worst, problem = compare_outputs(args.out, args.expected, atol=args.atol)
    if problem:
        print("MISMATCH " + problem)
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
