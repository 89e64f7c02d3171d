#!/usr/bin/env python3
"""Write small hand-built invalid and edge-case ONNX models into test/models/bad/.

Needs only onnx and numpy. If onnxruntime is importable it is used to compute
ext_ok/expected/y.npy (and cross-checked against a numpy reference); otherwise
the numpy reference is written.

Usage: make_bad_models.py [OUT_DIR]   (default: <this dir>/bad)
"""
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.append(os.path.join(HERE, "..", "..", "bench"))
from external_data import external_tensor  # noqa: E402

PRODUCER = "tpc-make-bad-models"


def model(graph, opset=17, extra_opsets=()):
    imports = [helper.make_opsetid("", opset)]
    imports += [helper.make_opsetid(d, v) for d, v in extra_opsets]
    m = helper.make_model(graph, opset_imports=imports, producer_name=PRODUCER)
    m.ir_version = 8
    return m


def save(m, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def check(m, path=None):
    if path is not None:
        onnx.checker.check_model(path)
    else:
        onnx.checker.check_model(m)


def small_linear(opset=17, seq=4, name="linear"):
    """x[1,seq,8] @ W[8,8] + b[8] -> y. Weights stored inline."""
    rng = np.random.default_rng(7)
    w = (rng.standard_normal((8, 8)) * 0.3).astype(np.float32)
    b = (rng.standard_normal((8,)) * 0.1).astype(np.float32)
    g = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "W"], ["xw"], name="matmul_0"),
            helper.make_node("Add", ["xw", "b"], ["y"], name="add_0"),
        ],
        name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, seq, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, seq, 8])],
        initializer=[numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "b")],
    )
    return model(g, opset)


def ext_graph(name, location, offset_w=0, offset_b=None):
    """MatMul+Add with both initializers external in `location`."""
    nw, nb = 8 * 8 * 4, 8 * 4
    if offset_b is None:
        offset_b = offset_w + nw
    g = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "W"], ["xw"], name="matmul_0"),
            helper.make_node("Add", ["xw", "b"], ["y"], name="add_0"),
        ],
        name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8])],
        initializer=[
            external_tensor("W", [8, 8], location, offset_w, nw),
            external_tensor("b", [8], location, offset_b, nb),
        ],
    )
    return model(g, 17)


def unsupported_op(out):
    g = helper.make_graph(
        [
            helper.make_node(
                "NonMaxSuppression",
                ["boxes", "scores", "max_out", "iou_thr", "score_thr"],
                ["selected_indices"],
                name="nms_0",
            )
        ],
        "unsupported_op",
        [
            helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [1, 6, 4]),
            helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 1, 6]),
        ],
        [helper.make_tensor_value_info("selected_indices", TensorProto.INT64, ["n", 3])],
        initializer=[
            numpy_helper.from_array(np.array([3], dtype=np.int64), "max_out"),
            numpy_helper.from_array(np.array([0.5], dtype=np.float32), "iou_thr"),
            numpy_helper.from_array(np.array([0.0], dtype=np.float32), "score_thr"),
        ],
    )
    m = model(g, 17)
    check(m)
    save(m, os.path.join(out, "unsupported_op.onnx"))


def custom_domain(out):
    g = helper.make_graph(
        [
            helper.make_node("Relu", ["x"], ["r"], name="relu_0"),
            helper.make_node("MyOp", ["r"], ["y"], name="custom_0", domain="com.example", alpha=0.5),
        ],
        "custom_domain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
    )
    m = model(g, 17, extra_opsets=[("com.example", 1)])
    save(m, os.path.join(out, "custom_domain.onnx"))


def not_onnx(out):
    with open(os.path.join(out, "not_onnx.onnx"), "w") as f:
        f.write("This is a plain text file, not an ONNX protobuf.\n"
                "It exists to test that the importer rejects it cleanly.\n")


def truncated(out):
    rng = np.random.default_rng(11)
    w = rng.standard_normal((16, 16)).astype(np.float32)
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["y"], name="matmul_0")],
        "truncated",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])],
        initializer=[numpy_helper.from_array(w, "W")],
    )
    m = model(g, 17)
    check(m)
    data = m.SerializeToString()
    with open(os.path.join(out, "truncated.onnx"), "wb") as f:
        f.write(data[: len(data) // 2])


def ext_missing(out):
    m = ext_graph("ext_missing", "ext_missing_does_not_exist.bin")
    save(m, os.path.join(out, "ext_missing.onnx"))


def ext_short(out):
    m = ext_graph("ext_short", "ext_short.bin", offset_w=128)
    save(m, os.path.join(out, "ext_short.onnx"))
    with open(os.path.join(out, "ext_short.bin"), "wb") as f:
        f.write(np.arange(64, dtype=np.float32).tobytes())


def ext_escape(out):
    m = ext_graph("ext_escape", "../../etc/passwd")
    save(m, os.path.join(out, "ext_escape.onnx"))


def ext_bad_numbers(out):
    """External-data offsets that are not plain decimals: refused, never misread."""
    for name, text in (("ext_hex_offset", "0x40"), ("ext_exp_offset", "1e3"),
                       ("ext_junk_offset", "12abc"), ("ext_plus_offset", "+64")):
        m = ext_graph(name, "ext_ok.bin")
        for e in m.graph.initializer[0].external_data:
            if e.key == "offset":
                e.value = text
        save(m, os.path.join(out, name + ".onnx"))


def bad_shapes(out):
    """A negative dimension with typed data, and a huge initializer without
    data whose byte count would wrap a 64-bit product."""
    for name, dims in (("negative_dim", [-2, 4]), ("huge_dim", [2147483648, 2147483648, 4])):
        t = TensorProto()
        t.name = "W"
        t.data_type = TensorProto.FLOAT
        t.dims.extend(dims)
        if name == "negative_dim":
            t.float_data.extend([1.0] * 8)
        g = helper.make_graph(
            [helper.make_node("Add", ["x", "W"], ["y"], name="add_0")],
            name,
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
            initializer=[t],
        )
        save(model(g, 17), os.path.join(out, name + ".onnx"))


def missing_inputs(out):
    """A MatMul given one input, and a Where whose condition is named "":
    ONNX's checker refuses both, and tpc must too (no crash)."""
    for name, node in (
            ("matmul_one_input", helper.make_node("MatMul", ["x"], ["y"], name="mm_0")),
            ("where_empty_input", helper.make_node("Where", ["", "x", "x"], ["y"], name="where_0"))):
        g = helper.make_graph(
            [node], name,
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])])
        save(model(g, 17), os.path.join(out, name + ".onnx"))


def opset_versions(out):
    for name, opset in (("opset_too_old", 6), ("opset_too_new", 99)):
        g = helper.make_graph(
            [
                helper.make_node("Add", ["x", "x"], ["s"], name="add_0"),
                helper.make_node("Relu", ["s"], ["y"], name="relu_0"),
            ],
            name,
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
        )
        m = model(g, opset)
        m.ir_version = 3 if opset < 8 else 8
        save(m, os.path.join(out, name + ".onnx"))


def dynamic_dim(out):
    m = small_linear(17, seq="seq", name="dynamic_dim")
    check(m)
    save(m, os.path.join(out, "dynamic_dim.onnx"))


def run_ort(path, feeds):
    try:
        import onnxruntime as ort
    except ImportError:
        return None
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def ext_ok(out):
    d = os.path.join(out, "ext_ok")
    os.makedirs(os.path.join(d, "inputs"), exist_ok=True)
    os.makedirs(os.path.join(d, "expected"), exist_ok=True)
    rng = np.random.default_rng(3)
    w = (rng.standard_normal((8, 16)) * 0.4).astype(np.float32)
    b = (rng.standard_normal((16,)) * 0.2).astype(np.float32)
    x = rng.standard_normal((1, 4, 8)).astype(np.float32)

    header = b"TPCW" + bytes(60)
    off_w = 64
    off_b = 640
    blob = bytearray(header)
    blob += bytes(off_w - len(blob))
    blob += w.tobytes()
    blob += bytes(off_b - len(blob))
    blob += b.tobytes()
    blob += bytes(32)
    with open(os.path.join(d, "weights.bin"), "wb") as f:
        f.write(bytes(blob))

    g = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "W"], ["xw"], name="matmul_0"),
            helper.make_node("Add", ["xw", "b"], ["pre"], name="add_0"),
            helper.make_node("Relu", ["pre"], ["y"], name="relu_0"),
        ],
        "ext_ok",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 16])],
        initializer=[
            external_tensor("W", [8, 16], "weights.bin", off_w, w.nbytes),
            external_tensor("b", [16], "weights.bin", off_b, b.nbytes),
        ],
    )
    m = model(g, 17)
    path = os.path.join(d, "model.onnx")
    save(m, path)
    check(m, path)

    ref = np.maximum(x @ w + b, 0).astype(np.float32)
    res = run_ort(path, {"x": x})
    if res is not None:
        diff = float(np.max(np.abs(res[0] - ref)))
        if diff > 1e-5:
            raise SystemExit(f"ext_ok: onnxruntime disagrees with numpy reference ({diff})")
        y = res[0].astype(np.float32)
        src = "onnxruntime"
    else:
        y = ref
        src = "numpy"
    np.save(os.path.join(d, "inputs", "x.npy"), x)
    np.save(os.path.join(d, "expected", "y.npy"), y)
    print(f"  ext_ok expected computed with {src}")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "bad")
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(out)
    for fn in (unsupported_op, custom_domain, not_onnx, truncated, ext_missing, ext_short,
               ext_escape, opset_versions, dynamic_dim, ext_ok, ext_bad_numbers, bad_shapes,
               missing_inputs):
        fn(out)
    for root, _, files in sorted(os.walk(out)):
        for f in sorted(files):
            p = os.path.join(root, f)
            print(f"  {os.path.relpath(p, out):32s} {os.path.getsize(p):8d} bytes")


if __name__ == "__main__":
    main()
