"""The tpc Python package against onnxruntime's outputs of the committed
models: compile, run at tp 1 and 2, inputs converted or refused, one engine
at several sequence lengths, errors as tpc.Error, inspection, a greedy
generation loop, Engine.generate against transformers' own greedy tokens,
threads."""
import json
import os
import threading

import numpy as np
import pytest

import tpc

MODELS = os.environ.get("TPC_MODELS") or os.path.join(
    os.path.dirname(__file__), "..", "..", "test", "models")


def model(name):
    return os.path.join(MODELS, name, "model.onnx")


def data(name, kind, tensor):
    return np.load(os.path.join(MODELS, name, kind, tensor + ".npy"))


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory):
    engines = {}
    for tp in (1, 2):
        out = tmp_path_factory.mktemp("gpt2_tp%d" % tp)
        engines[tp] = tpc.compile(model("gpt2_op17"), tp=tp, output=str(out / "e"),
                                  input_shapes={"input_ids": (1, 16)})
    return engines


@pytest.mark.parametrize("tp", [1, 2])
def test_matches_onnxruntime(gpt2, tp):
    engine = gpt2[tp]
    assert engine.tp == tp
    assert engine.inputs == [("input_ids", "int64", (1, 16))]
    assert engine.outputs == [("logits", "float32", (1, 16, 512))]
    out = engine.run({"input_ids": data("gpt2_op17", "inputs", "input_ids")})
    want = data("gpt2_op17", "expected", "logits")
    assert out["logits"].dtype == np.float32
    np.testing.assert_allclose(out["logits"], want, atol=1e-4, rtol=1e-4)
    assert engine.last_run_ms > 0


def test_inputs_converted_when_needed(gpt2):
    ids = data("gpt2_op17", "inputs", "input_ids")
    want = gpt2[1].run({"input_ids": ids})["logits"]
    # int32 and a non-contiguous view are converted to the engine's int64.
    got32 = gpt2[1].run({"input_ids": ids.astype(np.int32)})["logits"]
    wide = np.repeat(ids, 2, axis=1)[:, ::2]
    assert not wide.flags["C_CONTIGUOUS"]
    got_view = gpt2[1].run({"input_ids": wide})["logits"]
    np.testing.assert_array_equal(got32, want)
    np.testing.assert_array_equal(got_view, want)
    # Any other dtype is refused, as onnxruntime refuses it: float ids would
    # be truncated (500.7 read as 500), uint64 may not fit, a float input
    # given as float64 would be rounded.
    for bad in (np.float32, np.float64, np.uint64):
        with pytest.raises(TypeError, match="input 'input_ids' is %s, but the "
                           "engine expects int64" % np.dtype(bad)):
            gpt2[1].run({"input_ids": ids.astype(bad)})


def test_outputs_are_owned_copies(gpt2):
    ids = data("gpt2_op17", "inputs", "input_ids")
    first = gpt2[2].run({"input_ids": ids})["logits"]
    keep = first.copy()
    gpt2[2].run({"input_ids": (ids + 1) % 512})
    np.testing.assert_array_equal(first, keep)


@pytest.mark.parametrize("feeds, message, kind, builtin, code", [
    ({}, "input 'input_ids' is missing", tpc.InvalidArgumentError,
     ValueError, "INVALID_ARGUMENT"),
    ({"input_ids": np.zeros((1, 8), np.int64)},
     "input 'input_ids' has shape 1x8, the engine takes 1x16",
     tpc.InvalidArgumentError, ValueError, "INVALID_ARGUMENT"),
    ({"input_ids": np.zeros((1, 16), np.int64), "mask": np.zeros(1)},
     "'mask' is not an input of the engine", tpc.NotFoundError, LookupError,
     "NOT_FOUND"),
    # A token id past GPT-2's 512-row embedding is found while running.
    ({"input_ids": np.full((1, 16), 100000, np.int64)},
     r"element 0 is 100000, outside \[-512, 512\)", tpc.OutOfRangeError,
     IndexError, "OUT_OF_RANGE"),
])
def test_run_errors(gpt2, feeds, message, kind, builtin, code):
    with pytest.raises(kind, match=message) as info:
        gpt2[1].run(feeds)
    assert isinstance(info.value, tpc.Error)
    assert isinstance(info.value, builtin)
    assert info.value.code == code
    # The engine still runs after a refused call.
    gpt2[1].run({"input_ids": data("gpt2_op17", "inputs", "input_ids")})


def test_run_time_sequence_length(tmp_path):
    # One engine for every length 1..16, run at three lengths in any order,
    # each against onnxruntime on the source model.
    import onnxruntime as ort
    engine = tpc.compile(model("gpt2_op17"), tp=2, output=str(tmp_path / "e"),
                         input_shapes={"input_ids": (1, (1, 16))})
    assert engine.symbols == [("sequence", 1, 16)]
    assert engine.inputs == [("input_ids", "int64", (1, "sequence"))]
    assert engine.outputs == [("logits", "float32", (1, "sequence", 512))]
    session = ort.InferenceSession(model("gpt2_op17"),
                                   providers=["CPUExecutionProvider"])
    rng = np.random.RandomState(3)
    for length in (11, 3, 16, 1, 3):
        ids = rng.randint(0, 512, size=(1, length)).astype(np.int64)
        got = engine.run({"input_ids": ids})["logits"]
        want = session.run(None, {"input_ids": ids})[0]
        assert got.shape == (1, length, 512)
        np.testing.assert_allclose(got, want, atol=1e-4, rtol=1e-4)
    with pytest.raises(tpc.InvalidArgumentError,
                       match="with sequence in 1..16"):
        engine.run({"input_ids": np.zeros((1, 17), np.int64)})


def test_lm_head_policy(tmp_path):
    # The LM head is split by default (one all-gather of the logits);
    # lm_head="replicated" keeps it whole on every rank, and both engines
    # give onnxruntime's logits.
    import json
    ids = data("gpt2_op17", "inputs", "input_ids")
    want = data("gpt2_op17", "expected", "logits")
    gathers = {}
    for policy in (None, "replicated", "column"):
        out = tmp_path / str(policy)
        engine = tpc.compile(model("gpt2_op17"), tp=2, output=str(out),
                             input_shapes={"input_ids": (1, 16)},
                             lm_head=policy)
        np.testing.assert_allclose(engine.run({"input_ids": ids})["logits"],
                                   want, atol=1e-4, rtol=1e-4)
        options = json.load(open(out / "engine.json"))["options"]
        assert options["lm_head"] == (policy or "auto")
        rank = tpc.inspect(str(out))["ranks"][0]
        gathers[policy] = sum(c["count"] for c in rank["collectives"]
                              if c["kind"] == "AllGather")
    assert gathers == {None: 1, "replicated": 0, "column": 1}
    with pytest.raises(tpc.Error, match="--lm-head must be auto, column or replicated"):
        tpc.compile(model("gpt2_op17"), tp=2, output=str(tmp_path / "bad"),
                    input_shapes={"input_ids": (1, 16)}, lm_head="rows")
    assert not (tmp_path / "bad").exists()


def test_compile_errors(tmp_path):
    with pytest.raises(tpc.Error, match="cannot open"):
        tpc.compile(str(tmp_path / "none.onnx"), output=str(tmp_path / "e"))
    with pytest.raises(tpc.Error, match="dynamic dimension"):
        tpc.compile(model("gpt2_op17"), output=str(tmp_path / "e"))
    with pytest.raises(tpc.Error, match="does not divide"):
        tpc.compile(model("gpt2_op17"), tp=3, output=str(tmp_path / "e"),
                    input_shapes={"input_ids": (1, 16)})
    assert not (tmp_path / "e").exists()
    with pytest.raises(tpc.NotFoundError, match="engine.json") as info:
        tpc.Engine(str(tmp_path))
    assert info.value.code == "NOT_FOUND"
    with pytest.raises(tpc.InvalidArgumentError, match="'cpu' or 'cuda'"):
        tpc.Engine(str(tmp_path), backend="tpu")


def test_inspect(gpt2):
    info = tpc.inspect(gpt2[2].path)
    assert info["tp"] == 2 and len(info["ranks"]) == 2
    assert [i["name"] for i in info["inputs"]] == ["input_ids"]


def test_const_inputs_and_bf16(tmp_path):
    # BERT with the attention mask bound at compile time, in bf16: the
    # engine takes only input_ids and returns float32 values.
    mask = data("bert_op17", "inputs", "attention_mask")
    engine = tpc.compile(model("bert_op17"), tp=2, output=str(tmp_path / "e"),
                         dtype="bf16", input_shapes={"input_ids": (1, 16)},
                         const_inputs={"attention_mask": mask})
    assert [n for n, _, _ in engine.inputs] == ["input_ids"]
    out = engine.run({"input_ids": data("bert_op17", "inputs", "input_ids")})
    want = data("bert_op17", "expected", "last_hidden_state")
    got = out["last_hidden_state"]
    assert got.dtype == np.float32
    assert np.max(np.abs(got - want)) / np.max(np.abs(want)) < 3e-2


def test_greedy_generation_loop(tmp_path):
    # demo_gpt2 predicts (token + 1) % vocab: a fixed-window greedy loop
    # through the API continues the count.
    engine = tpc.compile(model("demo_gpt2"), tp=2, output=str(tmp_path / "e"),
                         input_shapes={"input_ids": (1, 16)})
    vocab = engine.outputs[0][2][-1]
    window = list(range(100, 116))
    generated = []
    for _ in range(8):
        logits = engine.run({"input_ids": np.array([window], np.int64)})["logits"]
        token = int(np.argmax(logits[0, -1]))
        generated.append(token)
        window = window[1:] + [token]
    assert generated == [(116 + i) % vocab for i in range(8)]


@pytest.mark.parametrize("tp", [1, 2])
def test_generate_matches_transformers(tmp_path, tp):
    # Llama (GQA) from optimum with past: the tokens of transformers'
    # float64 greedy generate (greedy.json), one for one.
    with open(os.path.join(MODELS, "hf_llama_optimum_past",
                           "greedy.json")) as f:
        ref = json.load(f)
    engine = tpc.compile(model("hf_llama_optimum_past"), tp=tp,
                         output=str(tmp_path / "e"), kv_cache=24)
    result = engine.generate(np.array([ref["prompt"]]), ref["max_new_tokens"])
    assert result.tokens.tolist() == [ref["tokens"]]
    assert result.tokens.dtype == np.int64
    assert len(result.step_ms) == ref["max_new_tokens"] - 1
    assert result.time_to_first_token_ms > 0
    # A second generation starts from empty caches.
    again = engine.generate(ref["prompt"], 3)
    assert again.tokens.tolist() == [ref["tokens"][:3]]
    # Sampling is reproducible by seed.
    a = engine.generate(ref["prompt"], 6, temperature=1.0, top_k=5, seed=7)
    b = engine.generate(ref["prompt"], 6, temperature=1.0, top_k=5, seed=7)
    assert a.tokens.tolist() == b.tokens.tolist()
    with pytest.raises(tpc.OutOfRangeError, match="need 30 cache positions"):
        engine.generate(ref["prompt"], 26)
    with pytest.raises(IndexError, match="outside the vocabulary") as info:
        engine.generate([1, 10**6], 2)
    assert info.value.code == "OUT_OF_RANGE"
    with pytest.raises(TypeError):
        engine.generate(np.zeros((1, 3), np.float32), 2)


def test_generate_with_prompt_prefill(tmp_path):
    # A decode engine that takes 1..8 tokens per forward prefills the prompt
    # at once and still gives transformers' greedy tokens.
    with open(os.path.join(MODELS, "hf_qwen2_optimum_past",
                           "greedy.json")) as f:
        ref = json.load(f)
    engine = tpc.compile(model("hf_qwen2_optimum_past"), tp=2,
                         output=str(tmp_path / "e"), kv_cache=24,
                         input_shapes={"input_ids": (1, (1, 8))})
    assert engine.symbols == [("sequence_length", 1, 8)]
    result = engine.generate(ref["prompt"], ref["max_new_tokens"])
    assert result.tokens.tolist() == [ref["tokens"]]


def test_generate_needs_a_decode_engine(gpt2):
    with pytest.raises(tpc.FailedPreconditionError,
                       match="not a decode engine"):
        gpt2[1].generate([1, 2, 3], 2)


def test_threads_run_engines_concurrently(gpt2):
    ids = data("gpt2_op17", "inputs", "input_ids")
    want = data("gpt2_op17", "expected", "logits")
    results, errors = {}, []

    def work(tp):
        try:
            for _ in range(5):
                results[tp] = gpt2[tp].run({"input_ids": ids})["logits"]
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(tp,)) for tp in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for tp in (1, 2):
        np.testing.assert_allclose(results[tp], want, atol=1e-4, rtol=1e-4)


def test_float8_and_int4_travel_as_bit_patterns(tmp_path):
    # ml_dtypes arrays go in as their bytes; the engine's outputs of those
    # types come back as uint8 bit patterns (checked against ONNX's reference
    # evaluator: onnxruntime's Python API takes no ml_dtypes arrays).
    ml_dtypes = pytest.importorskip("ml_dtypes")
    import onnx
    from onnx import TensorProto, helper
    from onnx.reference import ReferenceEvaluator
    graph = helper.make_graph(
        [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT),
         helper.make_node("Cast", ["y"], ["q"], to=TensorProto.FLOAT8E4M3FN),
         helper.make_node("Cast", ["n"], ["m"], to=TensorProto.FLOAT)],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT8E5M2, [6]),
         helper.make_tensor_value_info("n", TensorProto.INT4, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [6]),
         helper.make_tensor_value_info("q", TensorProto.FLOAT8E4M3FN, [6]),
         helper.make_tensor_value_info("m", TensorProto.FLOAT, [4])])
    path = str(tmp_path / "m.onnx")
    onnx.save(helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10), path)
    engine = tpc.compile(path, output=str(tmp_path / "e"))
    x = np.array([1.5, -2, 0.25, 57344, -0.0, 3], dtype=ml_dtypes.float8_e5m2)
    n = np.array([-8, -1, 0, 7], dtype=ml_dtypes.int4)
    out = engine.run({"x": x, "n": n})
    np.testing.assert_array_equal(out["y"], x.astype(np.float32))
    np.testing.assert_array_equal(out["m"], [-8, -1, 0, 7])
    assert out["q"].dtype == np.uint8
    want = ReferenceEvaluator(path).run(["q"], {"x": x, "n": n})[0]
    np.testing.assert_array_equal(out["q"], want.view(np.uint8))
