"""Writes onnxruntime MatMulNBits models: a committed export with its weight
MatMuls quantized, and single-node cases of every input layout.

usage: make_matmul_nbits.py quantize MODEL.onnx OUT.onnx BITS BLOCK
                            [--asymmetric] [--float-zero-points]
                            [--bias] [--skip NAME_SUBSTRING]
       make_matmul_nbits.py qdq MODEL.onnx OUT.onnx BITS BLOCK [--asymmetric]
       make_matmul_nbits.py compare REF.onnx INPUTS.npz OUT_DIR ATOL
       make_matmul_nbits.py nodes OUT_DIR
       make_matmul_nbits.py bad OUT_DIR
       make_matmul_nbits.py shard-bytes ENGINE_DIR

`quantize` replaces every MatMul whose B is a 2-D float32 initializer (and
every Gemm with alpha and beta 1 and no transposed A, its C the bias) by a
MatMulNBits node (round to nearest per block of K, the packing onnxruntime
defines: codes low nibble first along K, scales [N * blocks], zero points
packed two 4-bit codes per byte, default 2^(bits - 1)), as onnxruntime's
MatMulNBitsQuantizer writes them. `nodes` writes one model per layout
(bits, block sizes, K not a multiple of the block, zero points packed,
float or absent, bias, 1-D and 2-D scales, rank-2 and rank-3 A) with its
input a.npy beside it. `bad` writes malformed nodes (bits, block size, K,
B's shape, scale and zero point counts, a reordered g_idx).
`qdq` writes the QDQ form instead: DequantizeLinear of int4 / int8
codes (uint4 / uint8 with zero points when asymmetric) blocked along K,
into the MatMul. `compare` runs REF.onnx in onnxruntime on the inputs (numpy.savez, by
name) and compares every output with OUT_DIR/NAME.npy: max |diff| and
"ok" within ATOL, else "FAIL". Deterministic: fixed seeds.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def quantize(w, bits, block, asymmetric):
    """w [K, N] float32 -> codes [N, blocks, block] (uint8 values), scales
    [N, blocks], zero points [N, blocks] (None when symmetric)."""
    k, n = w.shape
    blocks = (k + block - 1) // block
    padded = np.zeros((blocks * block, n), np.float32)
    padded[:k] = w
    wb = padded.T.reshape(n, blocks, block)
    top = (1 << bits) - 1
    if asymmetric:
        lo = np.minimum(wb.min(axis=2), 0)
        hi = np.maximum(wb.max(axis=2), 0)
        scale = (hi - lo) / top
        scale[scale == 0] = 1
        zero = np.clip(np.round(-lo / scale), 0, top).astype(np.uint8)
    else:
        # The value of largest magnitude maps to code 0, as onnxruntime's
        # quantizer and tpc compile --quantize do.
        at = np.abs(wb).argmax(axis=2)[..., None]
        vmax = np.take_along_axis(wb, at, axis=2)[..., 0]
        scale = vmax / np.float32(-(1 << (bits - 1)))
        scale[scale == 0] = 1
        zero = None
    z = zero if zero is not None else np.full(scale.shape, 1 << (bits - 1))
    codes = np.clip(np.round(wb / scale[..., None]) + z[..., None], 0, top)
    return codes.astype(np.uint8), scale.astype(np.float32), zero


def pack(codes, bits):
    """Codes along the last axis, packed low first into uint8."""
    if bits == 8:
        return codes.astype(np.uint8)
    if codes.shape[-1] % 2:
        codes = np.concatenate(
            [codes, np.zeros(codes.shape[:-1] + (1,), np.uint8)], axis=-1)
    return (codes[..., 0::2] | (codes[..., 1::2] << 4)).astype(np.uint8)


def nbits_node(name, a, y, w, bits, block, asymmetric=False,
               float_zero=False, bias=None, scales_2d=False):
    """The MatMulNBits node and its initializers for weight w [K, N]."""
    k, n = w.shape
    codes, scale, zero = quantize(w, bits, block, asymmetric or float_zero)
    blocks = scale.shape[1]
    inits = [numpy_helper.from_array(pack(codes, bits), name + "_Q")]
    sshape = scale if scales_2d else scale.reshape(-1)
    inits.append(numpy_helper.from_array(sshape, name + "_scales"))
    inputs = [a, name + "_Q", name + "_scales"]
    if float_zero:
        # Float zero points: the code that dequantizes to zero, unrounded.
        zf = zero.astype(np.float32) + np.float32(0.25)
        inits.append(numpy_helper.from_array(zf.reshape(-1), name + "_zp"))
        inputs.append(name + "_zp")
    elif zero is not None:
        inits.append(numpy_helper.from_array(
            pack(zero, bits).reshape(-1), name + "_zp"))
        inputs.append(name + "_zp")
    if bias is not None:
        while len(inputs) < 5:
            inputs.append("")
        inits.append(numpy_helper.from_array(bias, name + "_bias"))
        inputs.append(name + "_bias")
    node = helper.make_node("MatMulNBits", inputs, [y], name=name,
                            domain="com.microsoft", K=k, N=n, bits=bits,
                            block_size=block)
    return node, inits


def replace_graph(g, nodes, drop, added):
    """g's nodes become `nodes`; its initializers lose those in `drop` that
    no node reads any more and gain `added`."""
    used = {i for n in nodes for i in n.input}
    keep = [t for t in g.initializer if t.name not in drop or t.name in used]
    del g.node[:]
    g.node.extend(nodes)
    del g.initializer[:]
    g.initializer.extend(keep + added)


def quantize_model(src, out, bits, block, asymmetric, float_zero, bias,
                   skip):
    model = onnx.load(src)
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    rng = np.random.default_rng(5)
    nodes, drop, added = [], set(), []
    for node in g.node:
        w = (inits.get(node.input[1])
             if node.op_type in ("MatMul", "Gemm") else None)
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        plain_gemm = (node.op_type != "Gemm" or
                      (attrs.get("transA", 0) == 0 and attrs.get("alpha", 1.0) == 1.0
                       and attrs.get("beta", 1.0) == 1.0))
        if (w is None or len(w.dims) != 2 or w.data_type != TensorProto.FLOAT
                or not plain_gemm or (skip and skip in node.name)):
            nodes.append(node)
            continue
        arr = numpy_helper.to_array(w)
        if node.op_type == "Gemm" and attrs.get("transB", 0):
            arr = arr.T
        b = (rng.standard_normal(arr.shape[1]).astype(np.float32) * 0.02
             if bias else None)
        c = (node.input[2] if node.op_type == "Gemm" and len(node.input) > 2
             and node.input[2] else None)
        out_name = node.output[0]
        if c in inits:
            b = numpy_helper.to_array(inits[c]).reshape(-1)
            c = None
        elif c:
            out_name += "_product"
        q, qi = nbits_node(node.name or node.output[0], node.input[0],
                           out_name, arr, bits, block, asymmetric,
                           float_zero, b)
        nodes.append(q)
        if c:
            nodes.append(helper.make_node("Add", [out_name, c], [node.output[0]]))
        added += qi
        drop.add(w.name)
    replace_graph(g, nodes, drop, added)
    if not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    onnx.save(model, out)


def single(path, a_shape, k, n, bits, block, **kw):
    rng = np.random.default_rng(k * 31 + n * 7 + bits + block)
    w = rng.standard_normal((k, n)).astype(np.float32)
    node, inits = nbits_node("q", "a", "y", w, bits, block, **kw)
    graph = helper.make_graph(
        [node], "nbits",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, a_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                       a_shape[:-1] + [n])], inits)
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    os.makedirs(path, exist_ok=True)
    onnx.save(model, os.path.join(path, "model.onnx"))
    np.save(os.path.join(path, "a.npy"),
            rng.standard_normal(a_shape).astype(np.float32))


def nodes(out):
    rng = np.random.default_rng(1)
    cases = {
        "b4_blk32_sym": ([1, 3, 64], 64, 48, 4, 32, {}),
        "b4_blk16_asym": ([2, 5, 96], 96, 40, 4, 16, {"asymmetric": True}),
        "b4_blk64_oddk": ([4, 100], 100, 24, 4, 64, {"asymmetric": True}),
        "b4_blk128_bias": ([1, 2, 256], 256, 33, 4, 128,
                           {"bias": rng.standard_normal(33).astype(np.float32)}),
        "b4_blk32_floatzp": ([3, 64], 64, 16, 4, 32, {"float_zero": True}),
        "b4_blk256_scales2d": ([1, 1, 512], 512, 64, 4, 256,
                               {"scales_2d": True, "asymmetric": True}),
        "b8_blk32_sym": ([1, 4, 64], 64, 40, 8, 32, {}),
        "b8_blk64_asym_oddk": ([2, 3, 72], 72, 20, 8, 64,
                               {"asymmetric": True}),
        "b4_blk32_oddblocks_asym": ([1, 3, 96], 96, 8, 4, 32,
                                    {"asymmetric": True}),
    }
    for name, (shape, k, n, bits, block, kw) in cases.items():
        single(os.path.join(out, name), shape, k, n, bits, block, **kw)


def bad(out):
    """One model per malformed MatMulNBits (bad/<case>.onnx)."""
    os.makedirs(out, exist_ok=True)
    w = np.random.default_rng(3).standard_normal((64, 16)).astype(np.float32)

    def write(name, edit):
        node, inits = nbits_node("q", "a", "y", w, 4, 32, asymmetric=True)
        node, inits = edit(node, inits)
        graph = helper.make_graph(
            [node], "bad",
            [helper.make_tensor_value_info("a", TensorProto.FLOAT, [1, 64])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])],
            inits)
        model = helper.make_model(graph, opset_imports=[
            helper.make_opsetid("", 17),
            helper.make_opsetid("com.microsoft", 1)])
        onnx.save(model, os.path.join(out, name + ".onnx"))

    def attr(key, value):
        def edit(node, inits):
            for a in node.attribute:
                if a.name == key:
                    a.i = value
            return node, inits
        return edit

    def tensor(index, arr):
        def edit(node, inits):
            inits[index] = numpy_helper.from_array(arr, inits[index].name)
            return node, inits
        return edit

    def g_idx(node, inits):
        perm = np.arange(64, dtype=np.int32) // 32
        perm = perm[::-1].copy()
        inits.append(numpy_helper.from_array(perm, "q_gidx"))
        node.input.append("q_gidx")
        return node, inits

    write("bits3", attr("bits", 3))
    write("block24", attr("block_size", 24))
    write("k_mismatch", attr("K", 48))
    write("b_shape", tensor(0, np.zeros((16, 2, 8), np.uint8)))
    write("scales_count", tensor(1, np.ones(30, np.float32)))
    write("zp_count", tensor(2, np.zeros(5, np.uint8)))
    write("g_idx_reordered", g_idx)


def shard_bytes(engine):
    """Bytes of rank0.safetensors per dtype, from its header."""
    import json
    import struct
    with open(os.path.join(engine, "rank0.safetensors"), "rb") as f:
        size = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(size))
    total = {}
    for name, t in header.items():
        if name != "__metadata__":
            lo, hi = t["data_offsets"]
            total[t["dtype"]] = total.get(t["dtype"], 0) + hi - lo
    for dtype in sorted(total):
        print(f"{dtype} {total[dtype]}")


def qdq_model(src, out, bits, block, asymmetric):
    """Every MatMul whose B is a 2-D float32 initializer [K, N] with K a
    multiple of `block` reads it through a DequantizeLinear of its codes
    (axis 0, blocked; symmetric: signed codes, no zero point; asymmetric:
    unsigned codes and zero points of the same type), as onnxruntime's QDQ
    quantizer writes weights. Opset 21 (blocked DequantizeLinear)."""
    model = onnx.load(src)
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    signed = {4: TensorProto.INT4, 8: TensorProto.INT8}[bits]
    unsigned = {4: TensorProto.UINT4, 8: TensorProto.UINT8}[bits]
    nodes, drop, added = [], set(), []
    for node in g.node:
        w = inits.get(node.input[1]) if node.op_type == "MatMul" else None
        if (w is None or len(w.dims) != 2 or w.data_type != TensorProto.FLOAT
                or w.dims[0] % block):
            nodes.append(node)
            continue
        arr = numpy_helper.to_array(w)
        k, n = arr.shape
        codes, scale, zero = quantize(arr, bits, block, asymmetric)
        # codes [N, blocks, block] -> [K, N]; parameters [blocks, N].
        kn = codes.transpose(1, 2, 0).reshape(k, n).astype(np.int64)
        base = w.name + "_qdq"

        def raw(name, dtype, values):
            # raw_data, as exporters and quantizers store tensors: 4-bit
            # values two to a byte, the first in the low nibble.
            flat = (values.flatten() & 0xFF).astype(np.uint8)
            if bits == 4:
                flat = flat & 15
                if flat.size % 2:
                    flat = np.concatenate([flat, np.zeros(1, np.uint8)])
                flat = flat[0::2] | (flat[1::2] << 4)
            return helper.make_tensor(name, dtype, list(values.shape),
                                      flat.tobytes(), raw=True)
        if asymmetric:
            q = raw(base, unsigned, kn)
            z = raw(base + "_zero", unsigned, zero.T.astype(np.int64))
        else:
            q = raw(base, signed, kn - (1 << (bits - 1)))
            z = None
        s = numpy_helper.from_array(scale.T.copy(), base + "_scale")
        added += [q, s] + ([z] if z is not None else [])
        dq_out = base + "_dq"
        ins = [base, base + "_scale"] + ([base + "_zero"] if z is not None else [])
        nodes.append(helper.make_node("DequantizeLinear", ins, [dq_out],
                                      axis=0, block_size=block))
        nodes.append(helper.make_node("MatMul", [node.input[0], dq_out],
                                      list(node.output), name=node.name))
        drop.add(w.name)
    replace_graph(g, nodes, drop, added)
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            o.version = max(o.version, 21)
    model.ir_version = max(model.ir_version, 10)
    onnx.save(model, out)


def compare(ref, inputs, out_dir, atol):
    import onnxruntime as ort
    # The basic level: the extended one rewrites a dequantized weight's
    # MatMul into one that quantizes its activations (another arithmetic).
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    s = ort.InferenceSession(ref, so, providers=["CPUExecutionProvider"])
    feeds = dict(np.load(inputs))
    for o, got in zip(s.get_outputs(), s.run(None, feeds)):
        mine = np.load(os.path.join(out_dir, o.name + ".npy"))
        diff = float(np.abs(mine.astype(np.float64) - got).max())
        print(f"{o.name}: max |diff| {diff:.2e} {'ok' if diff <= atol else 'FAIL'}")


def main():
    if sys.argv[1] == "qdq":
        qdq_model(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]),
                  "--asymmetric" in sys.argv[6:])
        return
    if sys.argv[1] == "compare":
        compare(sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]))
        return
    if sys.argv[1] == "shard-bytes":
        shard_bytes(sys.argv[2])
        return
    if sys.argv[1] in ("nodes", "bad"):
        (nodes if sys.argv[1] == "nodes" else bad)(sys.argv[2])
        return
    args = sys.argv[2:]
    flags = [a for a in args if a.startswith("--")]
    pos = [a for a in args if not a.startswith("--")]
    skip = None
    if "--skip" in args:
        skip = args[args.index("--skip") + 1]
        pos.remove(skip)
    quantize_model(pos[0], pos[1], int(pos[2]), int(pos[3]),
                   "--asymmetric" in flags, "--float-zero-points" in flags,
                   "--bias" in flags, skip)


if __name__ == "__main__":
    main()
