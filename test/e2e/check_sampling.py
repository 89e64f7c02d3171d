"""tpc generate's sampling (--temperature, --top-k, --seed, --end-token)
against onnxruntime running the same with-past export step by step.

    python check_sampling.py MODELS WORK [--tp 1,2] [--only NAME,...]
                             [--temperature 1.5] [--top-k 8] [--seeds 1,2,3]

For each optimum with-past model with a greedy.json (its prompt; a model
whose inputs are not optimum's, such as onnxruntime-genai's, is left out)
and each tp, a decode engine (--kv-cache 24) must:
  - at --top-k 1 give the greedy tokens, at any temperature and seed;
  - sample, for each seed, tokens that each lie in the top k of
    onnxruntime's logits at that step (the logits of the prompt and the
    tokens sampled before it, fed through the model's past inputs one token
    at a time; a token within 1e-4 of the k-th logit counts as in), from
    logits (--save-logits) within 1e-4 of onnxruntime's;
  - repeat a seed's tokens exactly, and give each seed other tokens;
  - stop at --end-token: the greedy run with the end token set to its
    token at the last step k before the final one that generates a token
    not seen before (k = 0 when all repeat the first), and a sampled run
    with its own token of such a step, end there (k + 1 tokens, the same
    ones).
Prints one line per check and "N passed, N failed".
"""
import json
import os
import sys

import numpy as np
import onnxruntime as ort

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_models import arg_parser, run  # noqa: E402
from compare import compare_arrays  # noqa: E402

ATOL = 1e-4


class OrtDecoder:
    """onnxruntime over an optimum with-past export, a token at a time."""

    def __init__(self, path):
        self.session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        self.inputs = {i.name: i for i in self.session.get_inputs()}
        self.outputs = [o.name for o in self.session.get_outputs()]

    def usable(self):
        """Whether the inputs are optimum's: ids, an optional mask and
        positions, and past caches [batch, heads, past, head_dim] with the
        heads and head_dim fixed."""
        past = [i for n, i in self.inputs.items() if n.startswith("past_key_values.")]
        plain = set(self.inputs) - {i.name for i in past}
        return bool(past) and "input_ids" in plain and plain <= {
            "input_ids", "attention_mask", "position_ids"} and all(
                isinstance(i.shape[1], int) and isinstance(i.shape[3], int)
                for i in past)

    def _forward(self, ids, past, start):
        feed = {"input_ids": np.array([ids], np.int64)}
        if "attention_mask" in self.inputs:
            feed["attention_mask"] = np.ones((1, start + len(ids)), np.int64)
        if "position_ids" in self.inputs:
            feed["position_ids"] = np.arange(start, start + len(ids),
                                             dtype=np.int64)[None]
        for name, info in self.inputs.items():
            if not name.startswith("past_key_values."):
                continue
            if past is None:
                feed[name] = np.zeros([1, info.shape[1], 0, info.shape[3]], np.float32)
            else:
                feed[name] = past[name.replace("past_key_values.", "present.")]
        out = dict(zip(self.outputs, self.session.run(self.outputs, feed)))
        return out["logits"][0, -1].astype(np.float64), out

    def logits(self, prompt, tokens):
        """[len(tokens), vocab]: row i holds the logits token i was picked
        from (after the prompt and tokens[:i])."""
        row, out = self._forward(list(prompt), None, 0)
        rows = [row]
        for i, t in enumerate(tokens[:-1]):
            row, out = self._forward([int(t)], out, len(prompt) + i)
            rows.append(row)
        return np.array(rows)


def in_top_k(logits, tokens, k):
    """The steps whose token is not among the k highest logits of its row
    (within ATOL of the k-th)."""
    bad = []
    for step, (row, t) in enumerate(zip(logits, tokens)):
        kth = np.sort(row)[::-1][min(k, row.size) - 1]
        if not row[t] >= kth - ATOL:
            bad.append(step)
    return bad


def end_step(tokens):
    """The step at which to end a rerun with --end-token tokens[k]: the
    last one before the final step whose token was not generated before
    (0 when every token repeats the first)."""
    return max(k for k in range(len(tokens) - 1) if tokens[k] not in tokens[:k])


class Generator:
    """tpc generate over one engine."""

    def __init__(self, engine, prompt, work, steps):
        self.engine, self.prompt, self.work, self.steps = engine, prompt, work, steps
        self.runs = 0

    def __call__(self, *flags):
        self.runs += 1
        out = os.path.join(self.work, "run%d" % self.runs)
        r = run(["tpc", "generate", self.engine, "--input-ids", self.prompt,
                 "--max-new-tokens", str(self.steps), "--output-dir", out,
                 "--save-logits", "--oversubscribe"] + [str(f) for f in flags])
        if r.returncode != 0:
            raise RuntimeError("tpc generate %s: %s" % (" ".join(map(str, flags)),
                                                         r.stderr.strip()))
        tokens = np.load(os.path.join(out, "generated_ids.npy"))[0].tolist()
        return tokens, np.load(os.path.join(out, "logits.npy"))


def check_engine(gen, oracle, prompt, args, report, case):
    greedy, _ = gen()
    for t, seed in (("1.0", 5), ("50", 9)):
        tokens, _ = gen("--temperature", t, "--top-k", 1, "--seed", seed)
        report(tokens == greedy, case, "top-k 1 at temperature %s, seed %d: %s" % (
            t, seed, "the greedy tokens" if tokens == greedy else
            "%s, greedy %s" % (tokens, greedy)))
    sampled = {}
    for seed in args.seeds:
        flags = ("--temperature", args.temperature, "--top-k", args.top_k,
                 "--seed", seed)
        tokens, logits = gen(*flags)
        sampled[seed] = tokens
        want = oracle.logits(prompt, tokens)
        _, problem = compare_arrays(logits, want, atol=ATOL, name="logits")
        outside = in_top_k(want, tokens, args.top_k)
        own = in_top_k(logits.astype(np.float64), tokens, args.top_k)
        ok = problem is None and not outside and not own
        report(ok, case, "seed %d: %d tokens, each in onnxruntime's top %d%s" % (
            seed, len(tokens), args.top_k, "" if ok else
            ": %s; steps outside: %s (onnxruntime), %s (tpc's logits)" % (
                problem, outside, own)))
        again, _ = gen(*flags)
        report(again == tokens, case, "seed %d again: %s" % (
            seed, "the same tokens" if again == tokens else "%s, first %s" % (
                again, tokens)))
    distinct = len({tuple(t) for t in sampled.values()})
    report(distinct == len(sampled), case, "%d seeds, %d different sequences%s" % (
        len(sampled), distinct, "" if distinct == len(sampled) else
        ": %s" % sampled))
    # --end-token: a token first generated at step k ends the output there.
    for name, tokens, flags in (
            ("greedy", greedy, ()),
            ("seed %d" % args.seeds[0], sampled[args.seeds[0]],
             ("--temperature", args.temperature, "--top-k", args.top_k,
              "--seed", args.seeds[0]))):
        k = end_step(tokens)
        ended, _ = gen("--end-token", tokens[k], *flags)
        ok = ended == tokens[:k + 1]
        report(ok, case, "%s ends at --end-token %d: %d of %d tokens%s" % (
            name, tokens[k], len(ended), len(tokens), "" if ok else
            ", got %s, want %s" % (ended, tokens[:k + 1])))


def main():
    ap = arg_parser("1,2", only="comma-separated model names (default: every one)")
    ap.add_argument("--temperature", default="1.5")
    ap.add_argument("--top-k", type=int, default=8)
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--max-new-tokens", type=int, default=12)
    args = ap.parse_args()
    args.seeds = [int(s) for s in args.seeds.split(",")]
    passed = failed = 0

    def report(ok, case, detail):
        nonlocal passed, failed
        print("%s %s: %s" % ("PASS" if ok else "FAIL", case, detail), flush=True)
        passed += ok
        failed += not ok

    for name in sorted(os.listdir(args.models)):
        model = os.path.join(args.models, name, "model.onnx")
        ref_path = os.path.join(args.models, name, "greedy.json")
        if not os.path.exists(ref_path) or \
                (args.only and name not in args.only.split(",")):
            continue
        oracle = OrtDecoder(model)
        if not oracle.usable():
            continue
        with open(ref_path) as f:
            prompt = json.load(f)["prompt"]
        work = os.path.join(args.work, name)
        os.makedirs(work, exist_ok=True)
        prompt_file = os.path.join(work, "prompt.npy")
        np.save(prompt_file, np.array([prompt], np.int64))
        for tp in [int(t) for t in args.tp.split(",")]:
            case = "%s tp=%d" % (name, tp)
            engine = os.path.join(work, "tp%d" % tp)
            c = run(["tpc", "compile", model, "--tp", str(tp), "--kv-cache", "24",
                     "-o", engine, "--quiet"])
            if c.returncode != 0:
                report(False, case, "compile: " + c.stderr.strip())
                continue
            gen = Generator(engine, prompt_file, os.path.join(work, "runs%d" % tp),
                            args.max_new_tokens)
            try:
                check_engine(gen, oracle, prompt, args, report, case)
            except RuntimeError as e:
                report(False, case, str(e))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
