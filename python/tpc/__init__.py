"""tpc from Python: compile an ONNX transformer into a tensor-parallel
engine and run it in process.

    import numpy as np, tpc
    engine = tpc.compile("model.onnx", tp=2, output="engine/",
                         input_shapes={"input_ids": (1, 16)})
    out = engine.run({"input_ids": np.zeros((1, 16), np.int64)})
    print(out["logits"].shape, tpc.inspect("engine/")["ranks"][0]["steps"])

`compile` runs the `tpc` driver (compiling is one long step; its errors
become tpc.Error with the driver's message). Errors of loading and running
raise a subclass of tpc.Error by their status code (`err.code`, e.g.
"OUT_OF_RANGE" for a token id past the vocabulary, a tpc.OutOfRangeError
that is also an IndexError). `Engine` loads every rank of an
engine in this process (CPU ranks on threads with the in-process
communicator, or `backend="cuda"`) and `run` executes one forward on NumPy
arrays with the GIL released: C-contiguous arrays of the engine's dtype are
read in place, others are converted first. bfloat16 inputs and outputs
travel as float32 (NumPy has no bfloat16), rounded to nearest even on the
way in, exact on the way out.
"""
import json
import os
import shutil
import subprocess
import tempfile

import numpy as np

from . import _tpc

Error = _tpc.Error
# Subclasses by the runtime's status code (`err.code` names it); each also
# derives from the built-in exception of that kind where one fits.
InvalidArgumentError = _tpc.InvalidArgumentError  # and ValueError
NotFoundError = _tpc.NotFoundError  # and LookupError
OutOfRangeError = _tpc.OutOfRangeError  # and IndexError
DeadlineExceededError = _tpc.DeadlineExceededError  # and TimeoutError
DataLossError = _tpc.DataLossError
FailedPreconditionError = _tpc.FailedPreconditionError

__all__ = ["Error", "InvalidArgumentError", "NotFoundError",
           "OutOfRangeError", "DeadlineExceededError", "DataLossError",
           "FailedPreconditionError", "Engine", "compile", "inspect",
           "tpc_binary"]


def tpc_binary():
    """The tpc driver: $TPC_BIN, the one installed beside this package, the
    build tree's (build/bin/tpc next to build/python), or tpc on PATH."""
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [os.environ.get("TPC_BIN"),
                  os.path.join(here, "bin", "tpc"),
                  os.path.join(here, "..", "..", "bin", "tpc"),
                  shutil.which("tpc")]
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return os.path.abspath(c)
    raise Error("cannot find the tpc driver (set TPC_BIN)")


def _bf16_bits(a):
    """float32 -> bfloat16 bit patterns (uint16), round to nearest even."""
    bits = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    rounded = bits + 0x7FFF + ((bits >> 16) & 1)
    nan = np.isnan(a)
    out = (rounded >> 16).astype(np.uint16)
    out[nan] = 0x7FC0
    return out


def _bf16_to_f32(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


class Engine:
    """Every rank of the engine in `path`, loaded in this process.

    backend: "cpu" (ranks on threads, `threads` kernel threads each) or
    "cuda" (one GPU per rank; `emulate_ranks` puts every rank on one GPU).
    """

    def __init__(self, path, backend="cpu", threads=1, emulate_ranks=False):
        self.path = os.fspath(path)
        self._engine = _tpc.Engine(self.path, backend, int(threads),
                                   bool(emulate_ranks))

    @property
    def tp(self):
        return self._engine.tp

    @property
    def inputs(self):
        """[(name, dtype, shape)] of the graph inputs; bf16 shows as
        "bfloat16", a run-time dimension as its symbol's name."""
        return [(n, self._show(d, n, True), s) for n, d, s in self._engine.inputs]

    @property
    def outputs(self):
        return [(n, self._show(d, n, False), s) for n, d, s in self._engine.outputs]

    @property
    def symbols(self):
        """[(name, min, max)] of the run-time dimensions (empty for an
        engine of static shapes)."""
        return list(self._engine.symbols)

    def _show(self, dtype, name, is_input):
        return "bfloat16" if name in self._bf16(is_input) else dtype

    def _bf16(self, is_input):
        key = "_bf16_in" if is_input else "_bf16_out"
        if not hasattr(self, key):
            with open(os.path.join(self.path, "engine.json")) as f:
                manifest = json.load(f)
            specs = manifest["inputs" if is_input else "outputs"]
            setattr(self, key, {s["name"] for s in specs
                                if s.get("dtype") in ("bf16", "bfloat16")})
        return getattr(self, key)

    @property
    def last_run_ms(self):
        """Wall time of the last run, in milliseconds."""
        return self._engine.last_run_ms

    def run(self, feeds):
        """One forward: {input name: array} -> {output name: array}."""
        if not isinstance(feeds, dict):
            raise TypeError("run() takes a dict of input name -> array")
        wanted = {n: d for n, d, _ in self._engine.inputs}
        arrays = {}
        for name, value in feeds.items():
            if name in self._bf16(True):
                arrays[name] = _bf16_bits(np.asarray(value))
            elif name in wanted:
                value = np.asarray(value)
                if wanted[name] == "uint8" and value.dtype.itemsize == 1 and \
                        value.dtype.kind not in "iub":
                    # An ml_dtypes float8 / int4 array: its bit patterns.
                    value = value.view(np.uint8)
                arrays[name] = np.ascontiguousarray(
                    value, dtype=_checked_input_dtype(name, value.dtype, wanted[name]))
            else:
                arrays[name] = value  # refused by the engine, by name
        out = self._engine.run(arrays)
        for name in self._bf16(False):
            if name in out:
                out[name] = _bf16_to_f32(out[name])
        return out

    def generate(self, input_ids, max_new_tokens, *, temperature=0.0,
                 top_k=0, seed=0, end_token=None):
        """Generates tokens with a decode engine (tpc compile --kv-cache):
        the prompt `input_ids` (a sequence or a [1, T] array of ids) is fed
        into the per-rank KV caches (in one forward when the engine takes a
        run-time count of tokens, else one at a time), then each new token
        is picked from the logits (greedy at temperature 0, else sampled
        among the top_k) and fed back. Returns a GenerateResult: .tokens
        (int64 array [1, N]), .time_to_first_token_ms, .step_ms."""
        ids = np.asarray(input_ids)
        if ids.ndim == 2 and ids.shape[0] == 1:
            ids = ids[0]
        if ids.ndim != 1 or not np.issubdtype(ids.dtype, np.integer):
            raise TypeError("generate() takes the prompt as integer ids, a "
                            "sequence or an array of shape [1, T]")
        tokens, ttft, steps = self._engine.generate(
            [int(t) for t in ids], int(max_new_tokens), float(temperature),
            int(top_k), int(seed), -1 if end_token is None else int(end_token))
        return GenerateResult(np.array([tokens], np.int64), ttft, list(steps))

    def __repr__(self):
        return "tpc.Engine(%r, tp=%d)" % (self.path, self.tp)


def _checked_input_dtype(name, got, want):
    """The dtype an input array is passed as: the engine's own. An array of
    another dtype is refused, as onnxruntime refuses it, except integers
    that widen exactly (int32 token ids for an int64 input)."""
    got, want = np.dtype(got), np.dtype(want)
    if got == want:
        return want
    if got.kind in "iu" and want.kind in "iu" and np.can_cast(got, want, "safe"):
        return want
    raise TypeError("input '%s' is %s, but the engine expects %s (only integers "
                    "that widen exactly are converted)" % (name, got, want))


class GenerateResult:
    """What Engine.generate returns: the generated ids ([1, N] int64), the
    time to the first token and of each later step, in milliseconds."""

    def __init__(self, tokens, time_to_first_token_ms, step_ms):
        self.tokens = tokens
        self.time_to_first_token_ms = time_to_first_token_ms
        self.step_ms = step_ms

    def __repr__(self):
        return "GenerateResult(tokens=%r)" % (self.tokens.tolist(),)


def _dim_spec(d):
    """One dimension of --input-shape: 16, (1, 64) -> "1..64", or a
    "seq:1..64" string as given."""
    if isinstance(d, str):
        return d
    if isinstance(d, (tuple, list)):
        if len(d) != 2:
            raise ValueError("a run-time dimension is (low, high), got %r" % (d,))
        return "%d..%d" % (int(d[0]), int(d[1]))
    return str(int(d))


def compile(model, tp=1, output=None, *, dtype="fp32", input_shapes=None,
            const_inputs=None, sharding_plan=None, allow_replicated=None,
            vocab_parallel_embedding=False, lm_head=None, parallel_lm_head=False,
            ignore_sharding_annotations=False, pass_plugins=None, sharding=None, sharding_options=None,
            fusion=True, quiet=True, backend="cpu", threads=1,
            kv_cache=None, quantize=None, block_size=None, symmetric=True,
            quantize_skip=None):
    """Compiles `model` (an .onnx path) for `tp` ranks into the folder
    `output` and returns the loaded Engine (on `backend`).

    input_shapes: {name: shape} for inputs with dynamic dimensions. A
    dimension is a size, or a run-time dimension: a (low, high) range or a
    "symbol:low..high" string, e.g. {"input_ids": (1, (1, 128))}; the
    engine then runs every size in the range.
    const_inputs: {name: array} bound at compile time (--const-input).
    sharding_plan: a plan file path, or a dict written to one.
    allow_replicated: glob or list of globs (--allow-replicated).
    lm_head: "auto" (the default), "column" or "replicated" (--lm-head);
    parallel_lm_head=True is lm_head="column".
    pass_plugins: list of MLIR pass plugin paths; sharding: the pass to use.
    kv_cache: for an export with past inputs, the KV-cache length of a
    decode engine (--kv-cache), for Engine.generate.
    quantize: "int4" or "int8", weight-only quantization of the weight
    MatMuls (--quantize); block_size (--block-size, default 32),
    symmetric=False for zero points (--asymmetric), quantize_skip: glob or
    list of globs kept in full precision (--quantize-skip).
    """
    if output is None:
        raise TypeError("compile() needs output=, the engine folder to write")
    args = [tpc_binary(), "compile", os.fspath(model), "--tp", str(int(tp)),
            "-o", os.fspath(output), "--dtype", dtype]
    with tempfile.TemporaryDirectory(prefix="tpc-compile-") as tmp:
        for name, shape in (input_shapes or {}).items():
            dims = "x".join(_dim_spec(d) for d in shape) if len(shape) else "scalar"
            args += ["--input-shape", "%s=%s" % (name, dims)]
        for i, (name, value) in enumerate((const_inputs or {}).items()):
            path = os.path.join(tmp, "const%d.npy" % i)
            np.save(path, np.asarray(value))
            args += ["--const-input", "%s=%s" % (name, path)]
        if isinstance(sharding_plan, dict):
            path = os.path.join(tmp, "plan.json")
            with open(path, "w") as f:
                json.dump(sharding_plan, f)
            sharding_plan = path
        if sharding_plan is not None:
            args += ["--sharding-plan", os.fspath(sharding_plan)]
        if isinstance(allow_replicated, str):
            allow_replicated = [allow_replicated]
        for glob in allow_replicated or []:
            args += ["--allow-replicated", glob]
        for plugin in pass_plugins or []:
            args += ["--pass-plugin", os.fspath(plugin)]
        if sharding:
            args += ["--sharding", sharding]
        if sharding_options:
            args += ["--sharding-options", sharding_options]
        if vocab_parallel_embedding:
            args.append("--vocab-parallel-embedding")
        if lm_head is not None:
            args += ["--lm-head", lm_head]
        if parallel_lm_head:
            args.append("--parallel-lm-head")
        if ignore_sharding_annotations:
            args.append("--ignore-sharding-annotations")
        if kv_cache is not None:
            args += ["--kv-cache", str(int(kv_cache))]
        if not fusion:
            args.append("--no-fusion")
        if quantize is not None:
            args += ["--quantize", quantize]
            if block_size is not None:
                args += ["--block-size", str(int(block_size))]
            if not symmetric:
                args.append("--asymmetric")
            if isinstance(quantize_skip, str):
                quantize_skip = [quantize_skip]
            for glob in quantize_skip or []:
                args += ["--quantize-skip", glob]
        if quiet:
            args.append("--quiet")
        r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        lines = [l for l in r.stderr.strip().splitlines() if l.strip()]
        raise Error(lines[-1] if lines else
                    "tpc compile exited with %d" % r.returncode)
    if not quiet and r.stdout:
        print(r.stdout, end="")
    return Engine(output, backend=backend, threads=threads)


def inspect(path):
    """What `tpc inspect --json` prints, as a dict."""
    return json.loads(_tpc.inspect_json(os.fspath(path)))
