"""tpc generate against transformers' own generate: for each optimum
with-past test model with a greedy.json (test/models/
generate_greedy.py: float64 PyTorch, greedy), compiles a decode engine
(--kv-cache) at each tp, generates, and checks the tokens one for one and
the logits of every step within --atol of the float64 ones.

    python check_generate.py MODELS WORK [--tp 1,2,4] [--kv-cache 24]
                             [--prefill N] [--only NAME,...]

With --prefill N the engines take a run-time count of 1..N new tokens
(--input-shape input_ids=1x1..N), so the prompt is prefilled in one
forward and its logits are those of the prompt's last token.
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_models import add_mpi_args, arg_parser, run  # noqa: E402


def main():
    ap = arg_parser("1,2,4", only="comma-separated model names (default: every one)")
    ap.add_argument("--kv-cache", type=int, default=24)
    ap.add_argument("--atol", type=float, default=1e-4)
    add_mpi_args(ap, help="also generate at tp 2 under mpirun (a rank per process)")
    ap.add_argument("--prefill", type=int, default=0,
                    help="compile with a run-time count of 1..N new tokens")
    ap.add_argument("--backend", default="cpu",
                    help="tpc generate's backend; with cuda, ranks above one "
                         "are emulated on the one GPU")
    args = ap.parse_args()
    passed = failed = 0
    for name in sorted(os.listdir(args.models)):
        ref_path = os.path.join(args.models, name, "greedy.json")
        if not os.path.exists(ref_path) or \
                (args.only and name not in args.only.split(",")):
            continue
        with open(ref_path) as f:
            ref = json.load(f)
        work = os.path.join(args.work, name)
        os.makedirs(work, exist_ok=True)
        prompt = os.path.join(work, "prompt.npy")
        np.save(prompt, np.array([ref["prompt"]], np.int64))
        expected = np.array(ref["logits"])
        for tp in [int(t) for t in args.tp.split(",")]:
            engine = os.path.join(work, "tp%d" % tp)
            out = os.path.join(work, "out%d" % tp)
            shapes = ["--input-shape", "input_ids=1x1..%d" % args.prefill] \
                if args.prefill else []
            c = run(["tpc", "compile", os.path.join(args.models, name, "model.onnx"),
                     "--tp", str(tp), "--kv-cache", str(args.kv_cache),
                     "-o", engine, "--quiet"] + shapes)
            if c.returncode != 0:
                print("FAIL %s tp=%d: compile: %s" % (name, tp, c.stderr.strip()))
                failed += 1
                continue
            cmd = ["tpc", "generate", engine, "--input-ids", prompt,
                   "--max-new-tokens", str(ref["max_new_tokens"]),
                   "--output-dir", out, "--save-logits", "--json",
                   "--backend", args.backend]
            if args.backend == "cpu":
                cmd.append("--oversubscribe")
            elif tp > 1:
                cmd.append("--emulate-ranks")
            g = run(cmd)
            if g.returncode != 0:
                print("FAIL %s tp=%d: generate: %s" % (name, tp, g.stderr.strip()))
                failed += 1
                continue
            result = json.loads(g.stdout)
            tokens = np.load(os.path.join(out, "generated_ids.npy"))[0].tolist()
            logits = np.load(os.path.join(out, "logits.npy"))
            diff = float(np.abs(logits - expected).max())
            ok = tokens == ref["tokens"] and result["tokens"] == tokens and \
                diff <= args.atol
            print("%s %s tp=%d: %d tokens %s, logits max |diff| %.2g, "
                  "%.3f ms/token" % ("PASS" if ok else "FAIL", name, tp,
                                     len(tokens),
                                     "match" if tokens == ref["tokens"]
                                     else "differ: %s vs %s" % (tokens, ref["tokens"]),
                                     diff, result["per_token_ms"]["median"]))
            passed += ok
            failed += not ok
            if args.mpi and tp == 2:
                m = run([args.mpirun, "--allow-run-as-root", "--oversubscribe",
                         "-np", "2", "tpc", "generate", engine, "--input-ids",
                         prompt, "--max-new-tokens", str(ref["max_new_tokens"]),
                         "--output-dir", out + "-mpi"])
                if m.returncode != 0:
                    print("FAIL %s tp=2 mpirun: %s" % (name, m.stderr.strip()[-400:]))
                    failed += 1
                else:
                    mt = np.load(os.path.join(out + "-mpi", "generated_ids.npy"))[0].tolist()
                    ok = mt == ref["tokens"]
                    print("%s %s tp=2 mpirun: %d tokens %s" % (
                        "PASS" if ok else "FAIL", name, len(mt),
                        "match" if ok else "differ: %s" % mt))
                    passed += ok
                    failed += not ok
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
