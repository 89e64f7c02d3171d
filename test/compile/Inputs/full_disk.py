"""Compiles into targets that cannot take the engine, and checks what is left.

usage: full_disk.py TPC MODEL WORK [CASE...]
Three cases (all of them by default), each printed as "CASE: exit N, left
[...]" with the compile's error line:
  fsize     the file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored) stops the
            writer mid-file, as a full disk or a quota does; works anywhere
  enospc    a 1 MiB tmpfs really fills up (ENOSPC); needs mount rights
            (lit's feature tmpfs-mount), printed as "enospc: cannot mount
            a tmpfs: ..." without them
  readonly  a read-only tmpfs; needs mount rights, like enospc
In each, an engine compiled there before (when the target allows one) must
be left as it was, and no temporary folder may remain.
"""
import os
import resource
import shutil
import signal
import subprocess
import sys


def compile_into(tpc, model, out, limit=None):
    def pre():
        if limit:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    r = subprocess.run([tpc, "compile", model, "--input-shape", "input_ids=1x8",
                        "-o", out, "--quiet"], preexec_fn=pre,
                       capture_output=True, text=True)
    return r.returncode, r.stderr.strip().splitlines()[-1:] or [""]


def report(case, parent, rc, err):
    print("%s: exit %d, left %s" % (case, rc, sorted(os.listdir(parent))))
    print("%s: %s" % (case, err[0]))


def mount_tmpfs(path, options):
    os.makedirs(path, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", path],
                       capture_output=True, text=True)
    return r.returncode == 0, r.stderr.strip()


def main(tpc, model, work, *cases):
    cases = cases or ("fsize", "enospc", "readonly")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    if "fsize" in cases:
        fsize(tpc, model, work)
    # enospc: a real full file system; readonly: nothing can be created.
    for case, options in (("enospc", "size=1m"), ("readonly", "ro,size=1m")):
        if case not in cases:
            continue
        mnt = os.path.join(work, case)
        ok, why = mount_tmpfs(mnt, options)
        if not ok:
            print("%s: cannot mount a tmpfs: %s" % (case, why))
            continue
        try:
            rc, err = compile_into(tpc, model, os.path.join(mnt, "engine"))
            report(case, mnt, rc, err)
        finally:
            subprocess.run(["umount", mnt])


def fsize(tpc, model, work):
    """The old engine stays; the new one never appears."""
    parent = os.path.join(work, "fsize")
    os.makedirs(parent)
    target = os.path.join(parent, "engine")
    rc, err = compile_into(tpc, model, target)
    assert rc == 0, err
    before = open(os.path.join(target, "engine.json")).read()
    rc, err = compile_into(tpc, model, target, limit=200000)
    report("fsize", parent, rc, err)
    print("fsize: old engine %s" % ("kept" if open(os.path.join(target, "engine.json")).read() == before else "CHANGED"))


if __name__ == "__main__":
    main(*sys.argv[1:])
