"""Outputs against their reference, for every checker of the test suite.

A max |got - want| alone lets wrong outputs through: Python's
max(0.0, nan) is 0.0 and NaN compares false with every bound, so an
all-NaN output "passes" a check written as max(worst, np.max(...)) or
sys.exit(d > tol); an output that is missing is never looked at, and one
the engine writes besides the expected ones is not either. compare() fails
on each of these, naming the output:

  - an output missing from `got`, or one that `got` has and `want` does not
    (unless extra=True);
  - a shape that differs;
  - a dtype of another kind (float, signed, unsigned, bool, complex): a
    float32 output against a float64 reference is fine, an int32 one is not;
  - a NaN or an infinity in `got` where `want` is finite, or a finite value
    where `want` is not, or another non-finite value (NaN for +inf);
  - with `atol` (and `rtol`), any element outside atol + rtol * |want|;

and otherwise returns the largest |got - want| over every output
(relative=True: each output's divided by its max |want|).

    worst, problem = compare(got, want, atol=1e-4)   # dicts or folders
    if problem: ...                                   # worst is None then

From the command line (lit tests), WANT and GOT are two .npy files or two
folders of them:

    python compare.py WANT GOT [--atol A] [--rtol R] [--relative] [--extra]

prints "match, max |diff| D" (exit 0) or "MISMATCH <problem>" (exit 1).
"""
import argparse
import os
import sys

import numpy as np

KINDS = {"f": "float", "V": "float", "i": "signed", "u": "unsigned",
         "b": "bool", "c": "complex"}


def kind(a):
    """The dtype's kind; ml_dtypes' bfloat16 and float8 (kind 'V') count as
    floats."""
    return KINDS.get(a.dtype.kind, a.dtype.kind)


def load_outputs(folder):
    """{name: array} of the .npy files in `folder` (name without .npy)."""
    return {f[:-4]: np.load(os.path.join(folder, f))
            for f in sorted(os.listdir(folder)) if f.endswith(".npy")}


def _as_numbers(a):
    if a.dtype.kind == "c":
        return a.astype(np.complex128)
    if a.dtype.kind == "V":
        return a.astype(np.float32).astype(np.float64)
    return a.astype(np.float64)


def compare_arrays(got, want, atol=None, rtol=0.0, name=None):
    """(max |got - want|, None), or (None, what is wrong, after "name: "
    when a name is given). With atol, every element must lie within
    atol + rtol * |want|."""
    diff, problem = _compare_arrays(np.asarray(got), np.asarray(want), atol, rtol)
    if problem and name is not None:
        problem = "%s: %s" % (name, problem)
    return diff, problem


def _compare_arrays(got, want, atol, rtol):
    if got.shape != want.shape:
        return None, "shape %s, expected %s" % (got.shape, want.shape)
    if kind(got) != kind(want):
        return None, "dtype %s (%s), expected %s (%s)" % (
            got.dtype, kind(got), want.dtype, kind(want))
    if want.size == 0:
        return 0.0, None
    g, w = _as_numbers(got), _as_numbers(want)
    gf, wf = np.isfinite(g), np.isfinite(w)
    same_special = (np.isnan(g) & np.isnan(w)) | (~gf & ~wf & (g == w))
    bad = ~((gf & wf) | same_special)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        return None, "%d of %d values non-finite where the reference " \
            "differs (first at %s: %r, expected %r)" % (
                int(bad.sum()), want.size, where, got[where].item(),
                want[where].item())
    both = gf & wf
    if not both.any():
        return 0.0, None
    diff = np.abs(g[both] - w[both])
    worst = float(np.max(diff))
    if atol is not None:
        outside = diff > atol + rtol * np.abs(w[both])
        if outside.any():
            return None, "max |diff| %.3g, %d of %d values outside " \
                "atol %g + rtol %g * |expected|" % (
                    worst, int(outside.sum()), want.size, atol, rtol)
    return worst, None


def compare(got, want, atol=None, rtol=0.0, relative=False, extra=False):
    """(worst, None) or (None, problem) over every output. `got` and `want`
    are {name: array} or folders of .npy files."""
    if isinstance(got, (str, os.PathLike)):
        got = load_outputs(got)
    if isinstance(want, (str, os.PathLike)):
        want = load_outputs(want)
    if not want:
        return None, "no expected outputs"
    missing = sorted(set(want) - set(got))
    if missing:
        return None, "missing output%s %s" % (
            "s" if len(missing) > 1 else "", ", ".join(missing))
    unexpected = sorted(set(got) - set(want))
    if unexpected and not extra:
        return None, "unexpected output%s %s" % (
            "s" if len(unexpected) > 1 else "", ", ".join(unexpected))
    worst = 0.0
    for name in sorted(want):
        w = np.asarray(want[name])
        diff, problem = compare_arrays(got[name], w, name=name,
                                       atol=None if relative else atol,
                                       rtol=rtol)
        if problem:
            return None, problem
        if relative:
            wn = _as_numbers(w)
            scale = float(np.max(np.abs(wn[np.isfinite(wn)]), initial=0.0))
            diff = diff / scale if scale > 0 else (0.0 if diff == 0 else np.inf)
            if atol is not None and not diff <= atol:
                return None, "%s: max |diff| / max |expected| %.3g > %g" % (
                    name, diff, atol)
        worst = max(worst, diff)
    return worst, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("want", help="the reference: a .npy file or a folder")
    ap.add_argument("got", help="the outputs: a .npy file or a folder")
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--rtol", type=float, default=0.0)
    ap.add_argument("--relative", action="store_true",
                    help="atol bounds max |diff| / max |expected| per output")
    ap.add_argument("--extra", action="store_true",
                    help="GOT may hold outputs WANT does not name")
    args = ap.parse_args()
    if os.path.isdir(args.want) != os.path.isdir(args.got):
        print("MISMATCH %s and %s: one is a folder, the other is not"
              % (args.want, args.got))
        return 1
    if os.path.isdir(args.want):
        got, want = args.got, args.want
    else:
        name = os.path.basename(args.want)[:-4] if args.want.endswith(".npy") \
            else os.path.basename(args.want)
        if not os.path.exists(args.got):
            print("MISMATCH missing output %s (%s)" % (name, args.got))
            return 1
        got, want = {name: np.load(args.got)}, {name: np.load(args.want)}
    worst, problem = compare(got, want, atol=args.atol, rtol=args.rtol,
                             relative=args.relative, extra=args.extra)
    if problem:
        print("MISMATCH " + problem)
        return 1
    print("match, max |diff|%s %.2g" % (" / max |expected|" if args.relative else "",
                                        worst))
    return 0


if __name__ == "__main__":
    sys.exit(main())
