"""Rewrites an engine's rank files so that every weight is misaligned.

usage: misalign_weights.py ENGINE_DIR
Adds one space to each rankN.safetensors header (JSON allows trailing
whitespace), which moves the data buffer, and so every tensor, by one byte,
then records the new sizes and digests in engine.json, as a user who
hand-edits a header would. The tensors' values are unchanged.
"""
import hashlib
import json
import os
import struct
import sys


def main(engine):
    manifest_path = os.path.join(engine, "engine.json")
    with open(manifest_path) as f:
        manifest = json.load(f)
    for rank in manifest["ranks"]:
        path = os.path.join(engine, rank["weights"]["file"])
        with open(path, "rb") as f:
            blob = f.read()
        (n,) = struct.unpack("<Q", blob[:8])
        header = blob[8:8 + n] + b" "
        data = blob[8 + n:]
        out = struct.pack("<Q", len(header)) + header + data
        with open(path, "wb") as f:
            f.write(out)
        rank["weights"]["bytes"] = len(out)
        rank["weights"]["sha256"] = hashlib.sha256(out).hexdigest()
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=2)


if __name__ == "__main__":
    main(sys.argv[1])
