"""Writes one model in the external-data layouts exporters produce.

    external_layouts.py SRC.onnx OUT_DIR

OUT_DIR/<layout>/model.onnx for each layout, every tensor (attribute
tensors of Constant and ConstantOfShape nodes too) moved out of the graph:

  one        one data file, as onnx.save(save_as_external_data=True) with
             size_threshold=0 and convert_attribute=True writes it (the
             layout of optimum's exports over 2 GB)
  per_tensor a file per tensor (all_tensors_to_one_file=False)
  subfolder  one file in a subfolder of the model's folder (location
             "data/weights.bin")
  two_files  the tensors alternating between two files
  past_4gib  one sparse file whose every offset is past 4 GiB

Prints the number of attribute tensors moved, so a test can check that the
file exercises them.

    external_layouts.py --drop-constant-data LAYOUT_DIR

deletes the data file of the first Constant whose value is external (in a
file-per-tensor layout) and prints the Constant's node name.
"""
import os
import sys

import onnx
from onnx import external_data_helper as edh

FOUR_GIB = 4 << 30


def tensors_with_data(model):
    """Every tensor the layouts move: initializers and attribute tensors."""
    return list(edh._get_all_tensors(model))


def attribute_tensors(model):
    return [a.t for n in model.graph.node for a in n.attribute if a.HasField("t")]


def rewrite(model, out_dir, place):
    """Writes each tensor's raw bytes where place(index) says: (file, offset);
    the tensor then refers to it."""
    os.makedirs(out_dir, exist_ok=True)
    files = {}
    for i, t in enumerate(tensors_with_data(model)):
        if not t.HasField("raw_data"):
            # Typed fields (float_data, int64_data): as raw little-endian bytes.
            t.raw_data = onnx.numpy_helper.to_array(t).tobytes()
            for f in ("float_data", "int32_data", "int64_data", "double_data",
                      "uint64_data"):
                t.ClearField(f)
        location, base = place(i)
        path = os.path.join(out_dir, location)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        f = files.get(path)
        if f is None:
            f = files[path] = open(path, "wb")
        offset = max(f.seek(0, 2), base)
        # Aligned like onnx's writer: 4 KiB pages keep mmap slices aligned.
        offset = (offset + 4095) // 4096 * 4096
        f.seek(offset)
        f.write(t.raw_data)
        edh.set_external_data(t, location, offset=offset, length=len(t.raw_data))
        t.ClearField("raw_data")
        t.data_location = onnx.TensorProto.EXTERNAL
    for f in files.values():
        f.close()
    onnx.save(model, os.path.join(out_dir, "model.onnx"))


def drop_constant_data(folder):
    model = onnx.load(os.path.join(folder, "model.onnx"), load_external_data=False)
    for n in model.graph.node:
        if n.op_type == "Constant" and n.attribute[0].t.data_location == onnx.TensorProto.EXTERNAL:
            where = {e.key: e.value for e in n.attribute[0].t.external_data}
            os.remove(os.path.join(folder, where["location"]))
            print(n.name)
            return
    sys.exit("no Constant with external data in %s" % folder)


def main():
    if sys.argv[1] == "--drop-constant-data":
        return drop_constant_data(sys.argv[2])
    src, out = sys.argv[1], sys.argv[2]
    base = onnx.load(src)
    print("attribute tensors:", len(attribute_tensors(base)))
    layouts = {
        "one": lambda i: ("model.onnx.data", 0),
        "per_tensor": lambda i: ("tensor_%d.bin" % i, 0),
        "subfolder": lambda i: (os.path.join("data", "weights.bin"), 0),
        "two_files": lambda i: ("part_%d.bin" % (i % 2), 0),
        "past_4gib": lambda i: ("sparse.bin", FOUR_GIB),
    }
    for name, place in layouts.items():
        model = onnx.ModelProto()
        model.CopyFrom(base)
        rewrite(model, os.path.join(out, name), place)
        moved = sum(1 for t in attribute_tensors(model)
                    if t.data_location == onnx.TensorProto.EXTERNAL)
        print("%s: %d attribute tensors external" % (name, moved))


if __name__ == "__main__":
    main()
