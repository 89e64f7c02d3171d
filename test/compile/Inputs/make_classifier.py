"""Writes a residual MLP block followed by a classifier of LABELS labels:
x[1, 16, 64] -> MatMul 64x256 -> Relu -> MatMul 256x64 -> + x -> MatMul
64xLABELS -> scores. The classifier is an output projection narrower than
tpc's 64 columns per rank.

usage: make_classifier.py OUT.onnx LABELS
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    out, labels = sys.argv[1], int(sys.argv[2])
    rng = np.random.RandomState(0)

    def weight(name, shape):
        return numpy_helper.from_array(
            (rng.randn(*shape) * 0.1).astype(np.float32), name)

    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"], name="fc1"),
        helper.make_node("Relu", ["h"], ["a"], name="act"),
        helper.make_node("MatMul", ["a", "w2"], ["o"], name="fc2"),
        helper.make_node("Add", ["x", "o"], ["r"], name="residual"),
        helper.make_node("MatMul", ["r", "wc"], ["scores"], name="classifier"),
    ]
    graph = helper.make_graph(
        nodes, "classifier",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 64])],
        [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 16, labels])],
        [weight("w1", (64, 256)), weight("w2", (256, 64)), weight("wc", (64, labels))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, out)


if __name__ == "__main__":
    main()
