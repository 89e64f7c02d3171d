"""Writes small MLP blocks carrying ONNX IR-11 sharding annotations
(ShardingSpecProto), one .onnx per case, into the folder argv[1].

Each model: y = x + W2^T relu(x W1) with x [1, 8, 32]; nodes 'fc1' and
'fc2' read the weights 'w1' [32, 64] and 'w2' [64, 32].
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def spec(tensor, axis=None, shards=2, devices=(0, 1), dim_value=None,
         groups=False):
    s = onnx.ShardingSpecProto(tensor_name=tensor, device=list(devices))
    if groups:
        s.index_to_device_group_map.add(key=0, value=[0, 1])
    if axis is not None:
        d = s.sharded_dim.add(axis=axis)
        simple = d.simple_sharding.add(num_shards=shards)
        if dim_value is not None:
            simple.dim_value = dim_value
    return s


def block(path, fc1_specs=(), fc2_specs=(), configs=(("tp2", 2),),
          config_of=None, stage=0):
    rng = np.random.default_rng(0)
    w1 = numpy_helper.from_array(
        rng.standard_normal((32, 64)).astype(np.float32) * 0.2, "w1")
    w2 = numpy_helper.from_array(
        rng.standard_normal((64, 32)).astype(np.float32) * 0.2, "w2")
    fc1 = helper.make_node("MatMul", ["x", "w1"], ["h"], name="fc1")
    act = helper.make_node("Relu", ["h"], ["a"], name="act")
    fc2 = helper.make_node("MatMul", ["a", "w2"], ["o"], name="fc2")
    add = helper.make_node("Add", ["o", "x"], ["y"], name="residual")
    for node, specs in ((fc1, fc1_specs), (fc2, fc2_specs)):
        if specs:
            c = node.device_configurations.add(
                configuration_id=config_of or configs[0][0],
                pipeline_stage=stage)
            c.sharding_spec.extend(specs)
    graph = helper.make_graph(
        [fc1, act, fc2, add], "annotated",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 32])],
        [w1, w2])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 11
    for name, n in configs:
        model.configuration.add(name=name, num_devices=n,
                                device=["gpu%d" % i for i in range(n)])
    onnx.save(model, path)


def main():
    out = sys.argv[1]
    # Megatron's layout, as the annotations of a model sharded elsewhere
    # would state it: fc1 by columns, fc2 by rows, and fc1's output split.
    block(out + "/megatron.onnx",
          fc1_specs=[spec("w1", axis=1), spec("h", axis=2),
                     spec("x")],
          fc2_specs=[spec("w2", axis=0, dim_value=64), spec("o")])
    # Both MatMuls kept whole on every device.
    block(out + "/whole.onnx", fc1_specs=[spec("w1")], fc2_specs=[spec("w2")])
    # fc2 asked by columns, which its split activation does not allow.
    block(out + "/conflict.onnx", fc1_specs=[spec("w1", axis=1)],
          fc2_specs=[spec("w2", axis=1)])
    # Annotated for four devices only.
    block(out + "/four.onnx", configs=(("tp4", 4),),
          fc1_specs=[spec("w1", axis=1, shards=4, devices=(0, 1, 2, 3))],
          fc2_specs=[spec("w2", axis=0, shards=4, devices=(0, 1, 2, 3))])
    # Malformed or beyond what tpc honours.
    block(out + "/unknown-config.onnx", fc1_specs=[spec("w1", axis=1)],
          config_of="tp8")
    block(out + "/groups.onnx", fc1_specs=[spec("w1", axis=1, groups=True)])
    block(out + "/stage.onnx", fc1_specs=[spec("w1", axis=1)], stage=1)
    block(out + "/not-a-tensor.onnx", fc1_specs=[spec("w9", axis=1)])
    block(out + "/dim-value.onnx", fc1_specs=[spec("w1", axis=1, dim_value=60)])
    block(out + "/shards.onnx", fc1_specs=[spec("w1", axis=1, shards=4)])
    block(out + "/axis.onnx", fc1_specs=[spec("w1", axis=2)])
    block(out + "/devices.onnx", fc1_specs=[spec("w1", axis=1, devices=(1, 0))])


if __name__ == "__main__":
    main()
