"""Checks a `tpc run --profile` trace against the engine it profiled.

usage: check_trace.py TRACE.json ENGINE_DIR --runs N
Every rank has a track; every step of every rank appears once per run as a
complete event named by its kernel, carrying its node and step; the
collectives (AllReduce, AllGather, ReduceScatter) are in their own category,
are as many as the engine's (tpc inspect --json) times the runs, and each
gives the part of its time spent waiting for peers (0 <= wait_us <= dur).
Prints one summary line; exits 1 on a mismatch.
"""
import argparse
import collections
import json
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("engine")
    ap.add_argument("--runs", type=int, required=True)
    args = ap.parse_args()
    events = [e for e in json.load(open(args.trace))["traceEvents"] if e["ph"] == "X"]
    info = json.loads(subprocess.run(["tpc", "inspect", args.engine, "--json"],
                                     check=True, capture_output=True, text=True).stdout)
    ranks = sorted({e["tid"] for e in events})
    assert ranks == list(range(info["tp"])), ranks
    per_rank = collections.Counter(e["tid"] for e in events)
    steps = {r["rank"]: r["steps"] for r in info["ranks"]}
    for r in ranks:
        assert per_rank[r] == steps[r] * args.runs, (r, per_rank[r], steps[r])
        seen = collections.Counter((e["args"]["run"], e["args"]["step"]) for e in events if e["tid"] == r)
        assert all(c == 1 for c in seen.values()) and len(seen) == steps[r] * args.runs
    collectives = [e for e in events if e["cat"] == "collective"]
    expected = sum(c["count"] for r in info["ranks"] for c in r["collectives"]) * args.runs
    assert len(collectives) == expected, (len(collectives), expected)
    assert all(e["name"] in ("AllReduce", "AllGather", "ReduceScatter") for e in collectives)
    for e in collectives:
        assert 0 <= e["args"]["wait_us"] <= e["dur"] + 1e-3, e
    assert all("wait_us" not in e["args"] for e in events if e["cat"] == "kernel")
    named = all(e["args"]["node"] for e in events)
    assert all(e["dur"] >= 0 and e["ts"] >= 0 for e in events)
    print("ranks %s, %d runs of %d steps each, %d collective events with their wait%s" % (
        ranks, args.runs, steps[0], len(collectives),
        ", every event names its node" if named else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
