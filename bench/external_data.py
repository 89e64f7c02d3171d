"""Pieces of ONNX models whose float32 weights live in an external file.

Used by make_big_model.py and make_gpt2_model.py, and by
test/models/make_bad_models.py for its external-data cases.
"""
from onnx import TensorProto


def external_tensor(name, dims, location, offset, length):
    """A float32 initializer whose data are `length` bytes at `offset` in the
    file `location` (relative to the model's folder)."""
    t = TensorProto()
    t.name = name
    t.data_type = TensorProto.FLOAT
    t.dims.extend(dims)
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", str(offset)), ("length", str(length))):
        e = t.external_data.add()
        e.key = k
        e.value = v
    return t


def align(f, alignment):
    """Pads the file f, open for writing, with zero bytes up to a multiple of
    `alignment`; returns the offset reached."""
    pad = (-f.tell()) % alignment
    if pad:
        f.write(bytes(pad))
    return f.tell()
