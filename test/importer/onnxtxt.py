"""Turns ONNX's textual syntax into a binary model for the importer tests.

usage: onnxtxt.py IN.test OUT.onnx

The model text is every line of IN that starts with '# ONNX: ' (with that
prefix removed), so one lit test file holds the model, the RUN lines and the
CHECK lines.
"""
import sys

import onnx
import onnx.parser


def main():
    src, out = sys.argv[1], sys.argv[2]
    prefix = "# ONNX: "
    with open(src) as f:
        text = "\n".join(line[len(prefix):].rstrip("\n")
                         for line in f if line.startswith(prefix))
    model = onnx.parser.parse_model(text)
    onnx.save(model, out)


if __name__ == "__main__":
    main()
