"""tpc.compile's sharding, fusion and thread options, and Engine(threads=),
each against onnxruntime or the committed outputs, and each with a check
that the option was not ignored (the roles, collectives or kernels that
tpc.inspect reports, or the error the option lifts)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import tpc

MODELS = os.environ.get("TPC_MODELS") or os.path.join(
    os.path.dirname(__file__), "..", "..", "test", "models")
TEST_DIR = os.path.join(MODELS, "..")
sys.path.insert(0, os.path.join(TEST_DIR, "e2e"))
from compare import compare  # noqa: E402


def model(name):
    return os.path.join(MODELS, name, "model.onnx")


def gpt2_matches(engine):
    """The committed GPT-2's outputs, every one and only those, within 1e-4."""
    ids = np.load(os.path.join(MODELS, "gpt2_op17", "inputs", "input_ids.npy"))
    worst, problem = compare(engine.run({"input_ids": ids}),
                             os.path.join(MODELS, "gpt2_op17", "expected"), atol=1e-4)
    assert problem is None, problem


def ort_matches(engine, path, feeds):
    import onnxruntime as ort
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    want = dict(zip(names, session.run(names, feeds)))
    worst, problem = compare(engine.run(feeds), want, atol=1e-4, rtol=1e-4)
    assert problem is None, problem


def collectives(engine):
    """[(AllReduce, AllGather)] per rank."""
    out = []
    for rank in tpc.inspect(engine.path)["ranks"]:
        kinds = {c["kind"]: c["count"] for c in rank["collectives"]}
        out.append((kinds.get("AllReduce", 0), kinds.get("AllGather", 0)))
    return out


def roles(engine):
    """{weight MatMul node: tp_role} of rank 0."""
    return {m["node"]: m["tp_role"]
            for m in tpc.inspect(engine.path)["ranks"][0]["weight_matmuls"]}


def compile_gpt2(tmp_path, name, **options):
    return tpc.compile(model("gpt2_op17"), tp=2, output=str(tmp_path / name),
                       input_shapes={"input_ids": (1, 16)}, **options)


def save(graph, path, opset=17):
    import onnx
    from onnx import helper
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.save(m, str(path))
    return str(path)


def weight(rng, name, shape):
    from onnx import numpy_helper
    return numpy_helper.from_array((rng.standard_normal(shape) * 0.1).astype(np.float32), name)


def test_default_gpt2_for_comparison(tmp_path):
    # What the options below change: two all-reduces per layer, the logits
    # gathered once, every MLP Gemm split.
    engine = compile_gpt2(tmp_path, "default")
    assert collectives(engine) == [(4, 1), (4, 1)]
    assert roles(engine)["/model/transformer/h.0/mlp/c_fc/Gemm"] == "column"
    gpt2_matches(engine)


@pytest.mark.parametrize("as_file", [False, True])
def test_sharding_plan(tmp_path, as_file):
    # Hugging Face tp_plan words: the MLPs replicated, so one all-reduce per
    # layer (attention) is left.
    plan = {"model.transformer.h.*.mlp.c_*": "replicate"}
    if as_file:
        path = tmp_path / "plan.json"
        path.write_text(json.dumps(plan))
        plan = str(path)
    engine = compile_gpt2(tmp_path, "e", sharding_plan=plan)
    got = roles(engine)
    assert got["/model/transformer/h.0/mlp/c_fc/Gemm"] == "replicated"
    assert got["/model/transformer/h.1/mlp/c_proj/Gemm"] == "replicated"
    assert got["/model/transformer/h.0/attn/c_attn/Gemm"] == "column"
    assert collectives(engine) == [(2, 1), (2, 1)]
    gpt2_matches(engine)


def softmax_block(tmp_path):
    """x -> MatMul fc1 -> Softmax over the split axis -> MatMul fc2 -> y:
    fc1's column split cannot pass the softmax."""
    from onnx import TensorProto, helper
    rng = np.random.default_rng(1)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w1"], ["h"], name="fc1"),
         helper.make_node("Softmax", ["h"], ["a"], name="sm", axis=-1),
         helper.make_node("MatMul", ["a", "w2"], ["y"], name="fc2")],
        "blocked",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 64])],
        [weight(rng, "w1", (64, 256)), weight(rng, "w2", (256, 64))])
    return save(graph, tmp_path / "blocked.onnx")


@pytest.mark.parametrize("allow", ["fc1", ["w1"], ["fc*", "other"]])
def test_allow_replicated(tmp_path, allow):
    path = softmax_block(tmp_path)
    with pytest.raises(tpc.Error, match="cannot shard weight MatMul 'fc1'"):
        tpc.compile(path, tp=2, output=str(tmp_path / "refused"))
    assert not (tmp_path / "refused").exists()
    engine = tpc.compile(path, tp=2, output=str(tmp_path / "e"), allow_replicated=allow)
    assert roles(engine)["fc1"] == "replicated"
    x = np.random.default_rng(2).standard_normal((1, 8, 64)).astype(np.float32)
    ort_matches(engine, path, {"x": x})


def test_vocab_parallel_embedding(tmp_path):
    # The token table split by rows: the lookups' partial sums take one
    # all-reduce more.
    engine = compile_gpt2(tmp_path, "e", vocab_parallel_embedding=True)
    assert collectives(engine) == [(5, 1), (5, 1)]
    gpt2_matches(engine)


def classifier(tmp_path, labels=2):
    """A residual MLP and a classifier of `labels` columns: an output
    projection narrower than 64 columns per rank."""
    from onnx import TensorProto, helper
    rng = np.random.default_rng(3)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w1"], ["h"], name="fc1"),
         helper.make_node("Relu", ["h"], ["a"], name="act"),
         helper.make_node("MatMul", ["a", "w2"], ["o"], name="fc2"),
         helper.make_node("Add", ["x", "o"], ["r"], name="residual"),
         helper.make_node("MatMul", ["r", "wc"], ["scores"], name="classifier")],
        "classifier",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 64])],
        [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 16, labels])],
        [weight(rng, "w1", (64, 256)), weight(rng, "w2", (256, 64)),
         weight(rng, "wc", (64, labels))])
    return save(graph, tmp_path / "cls.onnx")


def test_parallel_lm_head(tmp_path):
    # A 2-label head stays replicated by default; parallel_lm_head splits it
    # by columns and gathers its output.
    path = classifier(tmp_path)
    x = np.random.default_rng(4).standard_normal((1, 16, 64)).astype(np.float32)
    default = tpc.compile(path, tp=2, output=str(tmp_path / "auto"))
    assert roles(default)["classifier"] == "replicated"
    assert collectives(default) == [(1, 0), (1, 0)]
    engine = tpc.compile(path, tp=2, output=str(tmp_path / "col"), parallel_lm_head=True)
    assert roles(engine)["classifier"] == "column"
    assert collectives(engine) == [(1, 1), (1, 1)]
    with open(os.path.join(engine.path, "engine.json")) as f:
        assert json.load(f)["options"]["lm_head"] == "column"
    ort_matches(default, path, {"x": x})
    ort_matches(engine, path, {"x": x})


def test_ignore_sharding_annotations(tmp_path):
    # Annotations for four devices refuse tp 2 unless ignored.
    subprocess.run([sys.executable, os.path.join(TEST_DIR, "compile", "Inputs",
                                                 "make_annotated.py"), str(tmp_path)],
                   check=True)
    path = str(tmp_path / "four.onnx")
    with pytest.raises(tpc.Error, match=r"are for 4 \('tp4'\) devices, not --tp 2"):
        tpc.compile(path, tp=2, output=str(tmp_path / "refused"))
    engine = tpc.compile(path, tp=2, output=str(tmp_path / "e"),
                         ignore_sharding_annotations=True)
    assert roles(engine) == {"fc1": "column", "fc2": "row"}
    x = np.random.default_rng(5).standard_normal((1, 8, 32)).astype(np.float32)
    ort_matches(engine, path, {"x": x})


def plugin_path():
    """The example sharding plugin, built beside the driver (build/lib)."""
    return os.path.join(os.path.dirname(tpc.tpc_binary()), "..", "lib",
                        "TPCMlpOnlyShardingPlugin.so")


def test_pass_plugins_and_sharding(tmp_path):
    plugin = plugin_path()
    if not os.path.exists(plugin):
        pytest.skip("the example plugin is not built beside %s" % tpc.tpc_binary())
    # The plugin's MLP-only sharding: one all-reduce per layer, attention
    # and the LM head replicated.
    engine = compile_gpt2(tmp_path, "e", pass_plugins=[plugin],
                          sharding="tpc-mlp-only-shard")
    assert collectives(engine) == [(2, 0), (2, 0)]
    assert roles(engine)["/model/transformer/h.0/attn/c_attn/Gemm"] == "replicated"
    with open(os.path.join(engine.path, "engine.json")) as f:
        assert json.load(f)["options"]["sharding"] == "tpc-mlp-only-shard"
    gpt2_matches(engine)
    with pytest.raises(tpc.Error, match="unknown sharding pass 'tpc-mlp-only-shard'"):
        compile_gpt2(tmp_path, "no-plugin", sharding="tpc-mlp-only-shard")


def test_sharding_options(tmp_path):
    # tpc's own pass named with --sharding takes its options as text: the
    # LM head replicated, so no all-gather of the logits.
    engine = compile_gpt2(tmp_path, "e", sharding="tpc-tp-shard",
                          sharding_options="lm-head=replicated")
    assert collectives(engine) == [(4, 0), (4, 0)]
    assert roles(engine)["/model/lm_head/MatMul"] == "replicated"
    gpt2_matches(engine)
    with pytest.raises(tpc.Error, match="refused options"):
        compile_gpt2(tmp_path, "bad", sharding="tpc-tp-shard",
                     sharding_options="no-such-option=1")


# Kernels only the fusion passes make from decomposed ops.
FUSED = {"Attention", "AddNormalization", "LayerNormalization", "RMSNormalization",
         "Gelu", "SwiGLU"}


def kernels(engine):
    return set(tpc.inspect(engine.path)["ranks"][0]["kernels"])


def test_no_fusion(tmp_path):
    # GPT-2 at opset 14 (layer norms decomposed): fused by default, each op
    # its own step with fusion=False; both match onnxruntime.
    ids = np.load(os.path.join(MODELS, "gpt2_op14", "inputs", "input_ids.npy"))
    want = os.path.join(MODELS, "gpt2_op14", "expected")
    fused = tpc.compile(model("gpt2_op14"), tp=2, output=str(tmp_path / "fused"),
                        input_shapes={"input_ids": (1, 16)})
    plain = tpc.compile(model("gpt2_op14"), tp=2, output=str(tmp_path / "plain"),
                        input_shapes={"input_ids": (1, 16)}, fusion=False)
    assert {"Attention", "AddNormalization"} <= kernels(fused)
    assert kernels(plain) & FUSED == set(), kernels(plain)
    assert {"Softmax", "Tanh"} <= kernels(plain)
    assert tpc.inspect(plain.path)["ranks"][0]["steps"] > \
        tpc.inspect(fused.path)["ranks"][0]["steps"]
    for engine in (fused, plain):
        assert compare(engine.run({"input_ids": ids}), want, atol=1e-4)[1] is None


def test_threads(tmp_path):
    # Two kernel threads per rank, through compile and through Engine: the
    # same outputs (the GEMMs and attention split by thread). How many
    # threads ran is not visible from Python; the outputs are what can be
    # checked.
    engine = compile_gpt2(tmp_path, "e", threads=2)
    gpt2_matches(engine)
    again = tpc.Engine(engine.path, threads=2)
    gpt2_matches(again)
    gpt2_matches(tpc.Engine(engine.path, threads=3))


def test_quantize_int4_matches_onnxruntime_on_the_same_quantization(tmp_path):
    """quantize="int4" at tp 2: every weight MatMul runs on packed 4-bit
    codes (inspect says so, and the shard holds u8 codes), and the outputs
    equal onnxruntime's on the model quantized into MatMulNBits nodes by
    the test suite's own quantizer (the same rounding)."""
    helper = os.path.join(TEST_DIR, "compile", "Inputs", "make_matmul_nbits.py")
    ref = str(tmp_path / "q4.onnx")
    subprocess.run([sys.executable, helper, "quantize", model("gpt2_op17"), ref,
                    "4", "32"], check=True)
    engine = compile_gpt2(tmp_path, "q4", quantize="int4", block_size=32)
    rank = tpc.inspect(engine.path)["ranks"][0]
    kernels = {m["kernel"] for m in rank["weight_matmuls"]}
    assert kernels == {"MatMulNBits"}, kernels
    assert rank["weight_bytes_by_dtype"].get("u8", 0) > 0
    ids = np.load(os.path.join(MODELS, "gpt2_op17", "inputs", "input_ids.npy"))
    ort_matches(engine, ref, {"input_ids": ids})


def test_quantize_refuses_a_split_off_the_blocks(tmp_path):
    """Blocks of 64 cannot follow a row-parallel split of K = 64 over two
    ranks: a clear error, and no engine folder."""
    with pytest.raises(Exception) as err:
        compile_gpt2(tmp_path, "bad", quantize="int4", block_size=64)
    assert "do not fall on blocks of 64" in str(err.value)
    assert not (tmp_path / "bad").exists()
