"""Runs a command and checks its peak resident memory.

usage: peak_rss.py --max-mib N [--expect-failure] -- COMMAND...

Exits with the command's status if it fails, and with 1 if its peak RSS
(getrusage of the child, in MiB) exceeds N. With --expect-failure the
command must fail instead (its stderr is passed through, for FileCheck):
exit 0 when it failed within the limit, 1 otherwise.
"""
import argparse
import resource
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-mib", type=float, required=True)
    ap.add_argument("--expect-failure", action="store_true")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    rc = subprocess.run(cmd, stdout=subprocess.DEVNULL).returncode
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
    print("peak RSS %.1f MiB (limit %.1f MiB): %s" % (peak, args.max_mib, " ".join(cmd)))
    if args.expect_failure:
        return 0 if rc != 0 and peak <= args.max_mib else 1
    if rc != 0:
        return rc
    return 1 if peak > args.max_mib else 0


if __name__ == "__main__":
    sys.exit(main())
