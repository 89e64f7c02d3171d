"""Replaces an engine over and over while other processes read it.

usage: replace_race.py TPC MODEL WORK [--compiles N] [--writers W]
                        [--input-shape S]
Compiles MODEL into WORK/engine N times, alternating tp 1 and tp 2 (so the
two engines differ in every file), while `tpc run` and `tpc inspect` read
the same folder in a loop. With --writers 2, two such compile loops run at
once into the same target. Every read must see one whole engine, the old
or the new, and at the end the folder must hold one complete engine (its
digests verified) and no temporary folder: prints "reads: R, failed: F,
final engine: ok|BROKEN, leftovers: [...]" and the first failure, and
exits 1 on any of them.
"""
import argparse
import os
import subprocess
import threading


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tpc")
    ap.add_argument("model")
    ap.add_argument("work")
    ap.add_argument("--compiles", type=int, default=12)
    ap.add_argument("--input-shape", default="input_ids=1x16")
    ap.add_argument("--writers", type=int, default=1)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    engine = os.path.join(args.work, "engine")

    def compile_tp(tp):
        subprocess.run([args.tpc, "compile", args.model, "--tp", str(tp),
                        "--input-shape", args.input_shape, "-o", engine,
                        "--quiet"], check=True)

    compile_tp(1)
    done = threading.Event()
    failures = []
    reads = [0]

    def reader(command):
        while not done.is_set():
            r = subprocess.run(command, capture_output=True, text=True)
            reads[0] += 1
            if r.returncode != 0:
                failures.append(" ".join(command[1:2]) + ": " + r.stderr.strip())

    threads = [threading.Thread(target=reader, args=(c,)) for c in (
        [args.tpc, "run", engine, "--random-inputs", "--oversubscribe"],
        [args.tpc, "inspect", engine])]
    for t in threads:
        t.start()
    def writer(first):
        for i in range(args.compiles):
            compile_tp(2 if (i + first) % 2 == 0 else 1)

    writers = [threading.Thread(target=writer, args=(w,)) for w in range(args.writers)]
    try:
        for w in writers:
            w.start()
        for w in writers:
            w.join()
    finally:
        done.set()
        for t in threads:
            t.join()
    final = subprocess.run([args.tpc, "inspect", engine], capture_output=True, text=True)
    leftovers = sorted(n for n in os.listdir(args.work) if n != "engine")
    print("reads: %d, failed: %d, final engine: %s, leftovers: %s" % (
        reads[0], len(failures), "ok" if final.returncode == 0 else "BROKEN", leftovers))
    if failures:
        print("first failure: " + failures[0])
    return 1 if failures or final.returncode or leftovers else 0


if __name__ == "__main__":
    raise SystemExit(main())
