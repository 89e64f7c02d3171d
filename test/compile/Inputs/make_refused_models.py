"""Writes small models that tpc's runtime refuses, and one it accepts.

dup_output.onnx: a graph output listed twice. negative_epsilon.onnx: a
LayerNormalization with epsilon -1. ok.onnx: the same with epsilon 1e-5.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper


def norm_model(epsilon):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])
    scale = helper.make_tensor("s", TensorProto.FLOAT, [4], np.ones(4))
    bias = helper.make_tensor("b", TensorProto.FLOAT, [4], np.zeros(4))
    node = helper.make_node("LayerNormalization", ["x", "s", "b"], ["y"],
                            name="norm", epsilon=epsilon)
    graph = helper.make_graph([node], "g", [x], [y], [scale, bias])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def main(out):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [x], [y, y])
    onnx.save(helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17)]), f"{out}/dup_output.onnx")
    onnx.save(norm_model(-1.0), f"{out}/negative_epsilon.onnx")
    onnx.save(norm_model(1e-5), f"{out}/ok.onnx")


if __name__ == "__main__":
    main(sys.argv[1])
