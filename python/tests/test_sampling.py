"""Engine.generate's sampling against onnxruntime running the same
with-past export token by token (test/e2e/check_sampling.py's oracle):
top_k=1 is greedy; every sampled token is in the reference top k; a seed
repeats itself and other seeds differ; end_token ends the output; and the
first sampled token follows softmax(logits / T) over the top k (a
chi-square test over 2000 seeds)."""
import json
import math
import os
import sys

import numpy as np
import pytest

import tpc

MODELS = os.environ.get("TPC_MODELS") or os.path.join(
    os.path.dirname(__file__), "..", "..", "test", "models")
sys.path.insert(0, os.path.join(MODELS, "..", "e2e"))
from check_sampling import OrtDecoder, end_step, in_top_k  # noqa: E402

NAME = "hf_llama_optimum_past"


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    """A decode engine that prefills the prompt in one forward, its prompt,
    its greedy tokens and the onnxruntime oracle."""
    with open(os.path.join(MODELS, NAME, "greedy.json")) as f:
        ref = json.load(f)
    path = os.path.join(MODELS, NAME, "model.onnx")
    engine = tpc.compile(path, tp=1, output=str(tmp_path_factory.mktemp("s") / "e"),
                         kv_cache=24, input_shapes={"input_ids": (1, (1, 8))})
    return engine, ref["prompt"], ref["tokens"], OrtDecoder(path)


def tokens_of(result):
    return result.tokens[0].tolist()


def test_top_k_one_is_greedy(llama):
    engine, prompt, greedy, _ = llama
    assert tokens_of(engine.generate(prompt, len(greedy))) == greedy
    for temperature, seed in ((1.0, 3), (25.0, 11)):
        assert tokens_of(engine.generate(prompt, len(greedy), temperature=temperature,
                                         top_k=1, seed=seed)) == greedy


def test_sampled_tokens_are_in_the_reference_top_k(llama):
    engine, prompt, greedy, oracle = llama
    runs = {}
    for seed in (1, 2, 3, 4):
        tokens = tokens_of(engine.generate(prompt, 12, temperature=1.5, top_k=4,
                                           seed=seed))
        assert len(tokens) == 12
        assert in_top_k(oracle.logits(prompt, tokens), tokens, 4) == [], (seed, tokens)
        again = engine.generate(prompt, 12, temperature=1.5, top_k=4, seed=seed)
        assert tokens_of(again) == tokens
        runs[seed] = tokens
    assert len({tuple(t) for t in runs.values()}) == len(runs), runs
    assert all(t != greedy for t in runs.values())


def test_end_token(llama):
    engine, prompt, greedy, _ = llama
    k = end_step(greedy)
    assert 0 < k < len(greedy) - 1
    ended = engine.generate(prompt, len(greedy), end_token=greedy[k])
    assert tokens_of(ended) == greedy[:k + 1]
    assert len(ended.step_ms) == k
    # A sampled run ends at its own token, the same tokens up to there.
    sampled = tokens_of(engine.generate(prompt, 12, temperature=1.5, top_k=8, seed=5))
    k = end_step(sampled)
    ended = engine.generate(prompt, 12, temperature=1.5, top_k=8, seed=5,
                            end_token=sampled[k])
    assert tokens_of(ended) == sampled[:k + 1]
    # An id the run never generates ends nothing.
    absent = next(t for t in range(320) if t not in greedy)
    assert tokens_of(engine.generate(prompt, len(greedy), end_token=absent)) == greedy


def chi_square_sf(x, df):
    """P(X > x) for X chi-square with df degrees of freedom: 1 minus the
    regularized lower incomplete gamma P(df/2, x/2), by its series."""
    a, z = df / 2.0, x / 2.0
    if z <= 0:
        return 1.0
    term = total = 1.0 / a
    n = 0
    while term > total * 1e-16:
        n += 1
        term *= z / (a + n)
        total += term
    return max(0.0, 1.0 - total * math.exp(-z + a * math.log(z) - math.lgamma(a)))


def test_chi_square_sf():
    # Tabulated critical values: P(X > 24.32) = 1e-3 at 7 degrees of
    # freedom, P(X > 3.841) = 0.05 at 1.
    assert abs(chi_square_sf(24.322, 7) - 1e-3) < 1e-5
    assert abs(chi_square_sf(3.8415, 1) - 0.05) < 1e-5
    assert abs(chi_square_sf(7.0, 7) - 0.4289) < 1e-4


def test_first_token_follows_the_softmax_over_the_top_k(llama):
    # 2000 seeds, one token each: the counts of the 8 most likely tokens
    # (onnxruntime's logits of the prompt) against 2000 softmax(logits / 0.5)
    # over them, Pearson's chi-square with 7 degrees of freedom: a correct
    # sampler fails one time in 1000. The same counts must be far from the
    # softmax at temperature 1 (a sampler that ignored the temperature).
    engine, prompt, _, oracle = llama
    k, temperature, n = 8, 0.5, 2000
    logits = oracle.logits(prompt, [0])[0]
    top = np.argsort(-logits, kind="stable")[:k]

    def softmax(t):
        w = np.exp((logits[top] - logits[top[0]]) / t)
        return w / w.sum()

    counts = {int(t): 0 for t in top}
    for seed in range(n):
        token = tokens_of(engine.generate(prompt, 1, temperature=temperature,
                                          top_k=k, seed=seed))[0]
        assert token in counts, "token %d is outside the top %d" % (token, k)
        counts[token] += 1
    observed = np.array([counts[int(t)] for t in top], np.float64)

    def p_value(t):
        expected = n * softmax(t)
        return chi_square_sf(float(np.sum((observed - expected) ** 2 / expected)), k - 1)

    assert p_value(temperature) > 1e-3, (observed.tolist(), (n * softmax(temperature)).tolist())
    assert p_value(1.0) < 1e-6, observed.tolist()
