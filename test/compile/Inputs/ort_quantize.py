"""Quantizes a committed export with onnxruntime's own quantization tools.

usage: ort_quantize.py MODEL.onnx OUT_DIR

Writes OUT_DIR/qdq.onnx (quantize_static, QDQ format: int8 per-channel
weights and int8 activations between QuantizeLinear / DequantizeLinear
pairs, calibrated on fixed random ids) and OUT_DIR/dynamic.onnx
(quantize_dynamic: MatMulInteger with DynamicQuantizeLinear activations),
and OUT_DIR/ids.npy, the ids the checks run on. Deterministic: fixed seeds.
"""
import os
import sys

import numpy as np
import onnx
from onnxruntime.quantization import (CalibrationDataReader, QuantFormat,
                                      QuantType, quantize_dynamic,
                                      quantize_static)


class Ids(CalibrationDataReader):
    def __init__(self, name, shape):
        self.batches = iter([{name: np.random.default_rng(i).integers(
            0, 500, shape).astype(np.int64)} for i in range(4)])

    def get_next(self):
        return next(self.batches, None)


def main():
    src, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    inp = onnx.load(src, load_external_data=False).graph.input[0]
    shape = [d.dim_value or 1 for d in inp.type.tensor_type.shape.dim]
    shape[-1] = 16
    quantize_static(src, os.path.join(out, "qdq.onnx"), Ids(inp.name, shape),
                    quant_format=QuantFormat.QDQ, per_channel=True,
                    weight_type=QuantType.QInt8,
                    activation_type=QuantType.QInt8,
                    op_types_to_quantize=["MatMul", "Gemm"])
    # 7-bit weights (reduce_range): onnxruntime's u8 x s8 kernels on CPUs
    # without VNNI sum pairs of products in saturating 16-bit lanes, so with
    # full-range weights its own result depends on the machine (off by 0.6%
    # of the logits on an AVX2-only CPU, where tpc equals ONNX's reference
    # evaluator exactly); with 7 bits no pair can saturate.
    quantize_dynamic(src, os.path.join(out, "dynamic.onnx"),
                     weight_type=QuantType.QInt8, reduce_range=True)
    np.save(os.path.join(out, "ids.npy"),
            np.random.default_rng(9).integers(0, 500, shape).astype(np.int64))


if __name__ == "__main__":
    main()
