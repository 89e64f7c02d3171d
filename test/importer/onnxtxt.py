"""Turns ONNX's textual syntax into a binary model for the importer tests.

usage: onnxtxt.py IN.test OUT.onnx [TAG]

The model text is every line of IN that starts with '# TAG: ' (with that
prefix removed; TAG is ONNX unless given), so one lit test file holds the
model, the RUN lines and the CHECK lines, and several tags hold several
models.
"""
import sys

import onnx
import onnx.parser


def main():
    src, out = sys.argv[1], sys.argv[2]
    prefix = "# %s: " % (sys.argv[3] if len(sys.argv) > 3 else "ONNX")
    with open(src) as f:
        text = "\n".join(line[len(prefix):].rstrip("\n")
                         for line in f if line.startswith(prefix))
    model = onnx.parser.parse_model(text)
    onnx.save(model, out)


if __name__ == "__main__":
    main()
