"""Make committed ONNX test files free of this machine's traces.

The dynamo exporter stores stack traces (with absolute paths of the machine
that ran it) in node metadata, and exporters leave doc strings; neither
changes what a model computes. The generators call strip_metadata before
saving and check_no_local_paths after.

    python test/models/onnx_clean.py FILE.onnx ...   # clean files in place
"""
import sys

import onnx

FORBIDDEN = [b"/opt/", b"/work/", b"/tmp/", b"/root", b"/home/"]


def strip_metadata(model):
    """Drop metadata_props and doc_strings everywhere (the dynamo exporter stores stack traces there)."""

    def clean_graph(g):
        g.doc_string = ""
        del g.metadata_props[:]
        for vi in list(g.input) + list(g.output) + list(g.value_info):
            vi.doc_string = ""
            del vi.metadata_props[:]
        for t in g.initializer:
            t.doc_string = ""
            del t.metadata_props[:]
        clean_nodes(g.node)

    def clean_nodes(nodes):
        for n in nodes:
            n.doc_string = ""
            del n.metadata_props[:]
            for a in n.attribute:
                a.doc_string = ""
                if a.type == onnx.AttributeProto.GRAPH:
                    clean_graph(a.g)
                elif a.type == onnx.AttributeProto.GRAPHS:
                    for sub in a.graphs:
                        clean_graph(sub)

    model.doc_string = ""
    del model.metadata_props[:]
    clean_graph(model.graph)
    for f in model.functions:
        f.doc_string = ""
        del f.metadata_props[:]
        clean_nodes(f.node)
    return model


def check_no_local_paths(path):
    with open(path, "rb") as f:
        data = f.read()
    bad = [s.decode() for s in FORBIDDEN if s in data]
    if bad:
        raise RuntimeError(f"{path} contains machine-local paths {bad}")



def main(paths):
    for path in paths:
        model = onnx.load(path)
        onnx.save(strip_metadata(model), path)
        check_no_local_paths(path)


if __name__ == "__main__":
    main(sys.argv[1:])
