"""tpc compile -o: what it replaces, what it refuses, what it leaves.

usage: check_output_dirs.py MODEL.onnx WORK_DIR BIG_MODEL.onnx

Prints one line per case and a final "N passed, N failed" line. Each case
would fail on a writer that renames into "engine/" literally, deletes a
folder it did not write, leaves its temporary folder after SIGINT or
SIGTERM, or never cleans up after a killed compile.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

passed = failed = 0


def report(ok, name, detail=""):
    global passed, failed
    print("%s %s%s" % ("PASS" if ok else "FAIL", name, ": " + detail if detail else ""), flush=True)
    if ok:
        passed += 1
    else:
        failed += 1


def compile_(model, out, cwd=None, extra=()):
    return subprocess.run(["tpc", "compile", model, "-o", out, "--input-shape",
                           "input_ids=1x16", "--quiet", *extra],
                          capture_output=True, text=True, cwd=cwd)


def is_engine(d):
    try:
        with open(os.path.join(d, "engine.json")) as f:
            return json.load(f).get("format") == "tpc-engine"
    except OSError:
        return False


def leftovers(parent):
    return [n for n in os.listdir(parent) if ".tmp-" in n]


def main():
    model, work, big = sys.argv[1], sys.argv[2], sys.argv[3]
    model = os.path.abspath(model)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    # A trailing slash, and replacing an engine through one.
    e = os.path.join(work, "engine")
    r1 = compile_(model, e + "/")
    first = open(os.path.join(e, "engine.json")).read() if is_engine(e) else ""
    r2 = compile_(model, e + "/", extra=("--tp", "2"))
    ok = r1.returncode == 0 and r2.returncode == 0 and is_engine(e) and \
        json.load(open(os.path.join(e, "engine.json")))["tp"] == 2 and first
    report(ok, "-o engine/ creates and replaces", (r1.stderr + r2.stderr).strip())

    # Relative, '.', '..' and nested targets.
    sub = os.path.join(work, "a", "b")
    os.makedirs(sub)
    r = compile_(model, "rel", cwd=sub)
    report(r.returncode == 0 and is_engine(os.path.join(sub, "rel")), "-o rel", r.stderr.strip())
    dot = os.path.join(work, "dot")
    os.makedirs(dot)
    r1 = compile_(model, ".", cwd=dot)
    r2 = compile_(model, ".", cwd=dot)
    report(r1.returncode == 0 and r2.returncode == 0 and is_engine(dot),
           "-o . twice", (r1.stderr + r2.stderr).strip())
    r = compile_(model, "..", cwd=os.path.join(work, "a", "b", "rel"))
    report(r.returncode == 1 and "not an engine folder" in r.stderr and
           os.path.isdir(os.path.join(sub, "rel")), "-o .. (a folder with other things) is refused",
           r.stderr.strip())
    r = compile_(model, os.path.join(work, "x", "y", "z"))
    report(r.returncode == 0 and is_engine(os.path.join(work, "x", "y", "z")), "-o nested/new/folder",
           r.stderr.strip())

    # Folders tpc did not write are never touched.
    fake = os.path.join(work, "fake")
    os.makedirs(fake)
    with open(os.path.join(fake, "engine.json"), "w") as f:
        f.write("{}")
    with open(os.path.join(fake, "notes.txt"), "w") as f:
        f.write("mine")
    r = compile_(model, fake)
    report(r.returncode == 1 and "is not one tpc wrote" in r.stderr and
           sorted(os.listdir(fake)) == ["engine.json", "notes.txt"],
           "engine.json {} with other files is refused and kept", r.stderr.strip())
    mixed = os.path.join(work, "mixed")
    compile_(model, mixed)
    with open(os.path.join(mixed, "model.onnx"), "w") as f:
        f.write("user data")
    r = compile_(model, mixed)
    report(r.returncode == 1 and "'model.onnx', which is not part of the engine" in r.stderr and
           os.path.exists(os.path.join(mixed, "model.onnx")),
           "an engine folder holding a user's file is refused", r.stderr.strip())
    afile = os.path.join(work, "afile")
    open(afile, "w").write("x")
    r = compile_(model, afile)
    report(r.returncode == 1 and "is not a folder" in r.stderr and open(afile).read() == "x",
           "-o FILE is refused", r.stderr.strip())
    report(not leftovers(work), "no temporary folders left", str(leftovers(work)))

    # A killed compile's leftovers are removed by the next one, with a note.
    stale = os.path.join(work, ".engine.tmp-999999999")
    os.makedirs(stale)
    open(os.path.join(stale, "rank0.plan"), "w").write("x")
    r = compile_(model, e)
    report(r.returncode == 0 and not os.path.exists(stale) and "left by a compile" in r.stderr,
           "a dead compile's temporary folder is removed", r.stderr.strip())

    # SIGINT / SIGTERM during the write: the temporary folder goes and the
    # process ends by the signal (a shell reports 130 / 143).
    for sig in (signal.SIGINT, signal.SIGTERM):
        status = -sig
        target = os.path.join(work, "big")
        caught = False
        for attempt in range(5):
            p = subprocess.Popen(["tpc", "compile", big, "-o", target, "--tp", "2", "--quiet"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            tmp = os.path.join(work, ".big.tmp-%d" % p.pid)
            deadline = time.time() + 120
            while p.poll() is None and not os.path.exists(tmp) and time.time() < deadline:
                time.sleep(0.001)
            if p.poll() is None:
                time.sleep(0.05)
                p.send_signal(sig)
            rc = p.wait(timeout=120)
            p.stderr.read()
            p.stderr.close()
            if rc == status:
                caught = True
                break
            if rc != 0:
                break
            # The compile finished before the signal: try again over it.
        ok = caught and not os.path.exists(tmp) and not leftovers(work) and \
            not os.path.exists(target)
        report(ok, "%s during the write" % signal.Signals(sig).name,
               "exit %d, leftovers %s" % (rc, leftovers(work)))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
