#!/usr/bin/env python3
"""Run one command and print its wall time and peak resident memory as JSON.

    measure.py [--log FILE] -- COMMAND...

Prints {"rc", "wall_s", "user_s", "sys_s", "max_rss_kib"} on stdout. Run it as
a fresh process per measurement: the peak comes from
getrusage(RUSAGE_CHILDREN), which covers every child this process has waited
for, so here exactly the one command. COMMAND's stdout and stderr go to FILE
(default: discarded).
"""
import argparse
import json
import resource
import subprocess
import sys
import time


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not cmd:
        ap.error("no command")
    out = open(args.log, "wb") if args.log else subprocess.DEVNULL
    try:
        t0 = time.perf_counter()
        rc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT if args.log else out).returncode
        wall = time.perf_counter() - t0
    finally:
        if args.log:
            out.close()
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    json.dump({"rc": rc, "wall_s": wall, "user_s": ru.ru_utime, "sys_s": ru.ru_stime,
               "max_rss_kib": ru.ru_maxrss}, sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
