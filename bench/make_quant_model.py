"""A weight-only quantized copy of an ONNX model, made the way users make
one: onnxruntime's own MatMulNBitsQuantizer (round to nearest per block of
K), every MatMul with a constant weight rewritten to com.microsoft's
MatMulNBits, the LM head included (as onnxruntime-genai's builder does).

    make_quant_model.py MODEL.onnx OUT_DIR [--bits 4|8] [--block-size 32]
        [--asymmetric] [--qdq]

Writes OUT_DIR/model.onnx with its weights in external data (model.onnx.data)
and prints OUT_DIR. With --qdq, the quantizer's QDQ format instead:
DequantizeLinear of int4 / uint4 weights blocked along K into each MatMul. Needs onnxruntime's quantization tools and onnx_ir (the
generator virtualenv has both: scripts/gen-models --venv-only). Idempotent:
an existing output with the same recipe (recipe.json) is kept.
"""
import argparse
import json
import os
import sys


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("out")
    ap.add_argument("--bits", type=int, default=4, choices=(4, 8))
    ap.add_argument("--block-size", type=int, default=32)
    ap.add_argument("--asymmetric", action="store_true")
    ap.add_argument("--qdq", action="store_true")
    a = ap.parse_args(argv)
    recipe = {"model": os.path.abspath(a.model),
              "model_bytes": os.path.getsize(a.model),
              "bits": a.bits, "block_size": a.block_size,
              "symmetric": not a.asymmetric, "qdq": a.qdq}
    recipe_path = os.path.join(a.out, "recipe.json")
    if os.path.exists(recipe_path) and os.path.exists(os.path.join(a.out, "model.onnx")):
        with open(recipe_path) as f:
            if json.load(f) == recipe:
                print(a.out)
                return 0
    import onnx
    from onnxruntime.quantization import QuantFormat
    from onnxruntime.quantization.matmul_nbits_quantizer import (
        DefaultWeightOnlyQuantConfig, MatMulNBitsQuantizer)
    model = onnx.load(a.model)
    fmt = QuantFormat.QDQ if a.qdq else QuantFormat.QOperator
    cfg = DefaultWeightOnlyQuantConfig(block_size=a.block_size,
                                       is_symmetric=not a.asymmetric, bits=a.bits,
                                       quant_format=fmt)
    q = MatMulNBitsQuantizer(model, bits=a.bits, block_size=a.block_size,
                             is_symmetric=not a.asymmetric, quant_format=fmt,
                             algo_config=cfg)
    q.process()
    os.makedirs(a.out, exist_ok=True)
    for f in ("model.onnx", "model.onnx.data"):
        if os.path.exists(os.path.join(a.out, f)):
            os.remove(os.path.join(a.out, f))
    onnx.save_model(q.model.model, os.path.join(a.out, "model.onnx"),
                    save_as_external_data=True, all_tensors_to_one_file=True,
                    location="model.onnx.data", size_threshold=1024)
    with open(recipe_path, "w") as f:
        json.dump(recipe, f)
    print(a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
