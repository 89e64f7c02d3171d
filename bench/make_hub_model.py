"""Hub-size decoder models, built from their published configs with seeded
random weights (no download) and exported the way users export them.

    make_hub_model.py NAME [--out DIR] [--exporter optimum|dynamo] [--seed N]
    make_hub_model.py --list

NAME is a key of CONFIGS (the architecture fields of the model's
config.json on the Hub). The model is built on the CPU in float32, its
weights re-initialised from the seed (test/models/generate_hf.py's
reinit_weights: matrices N(0, (0.8/sqrt(fan_in))^2), so attention is far
from uniform), saved as a transformers folder and exported:

  optimum  optimum's text-generation-with-past (past_key_values.N.* in,
           present.N.* out); over 2 GB the weights go to external data,
           small Constants included
  dynamo   torch.onnx.export(dynamo=True) of the logits forward

Writes DIR/NAME-EXPORTER/model.onnx (+ data) and hf/ (the transformers
folder, which the greedy reference of bench_hub_decode.py loads). Needs the
generator virtualenv (scripts/gen-models --venv-only). Idempotent: an
existing export with the same recipe (recipe.json) is kept.
"""
import argparse
import json
import os
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "models"))

# Architecture fields of each model's config.json on the Hub.
CONFIGS = {
    "qwen2.5-0.5b": ("Qwen2Config", "Qwen2ForCausalLM", dict(
        hidden_size=896, intermediate_size=4864, num_hidden_layers=24,
        num_attention_heads=14, num_key_value_heads=2, vocab_size=151936,
        max_position_embeddings=32768, rope_theta=1000000.0, rms_norm_eps=1e-6,
        tie_word_embeddings=True, use_sliding_window=False, hidden_act="silu")),
    "qwen2.5-1.5b": ("Qwen2Config", "Qwen2ForCausalLM", dict(
        hidden_size=1536, intermediate_size=8960, num_hidden_layers=28,
        num_attention_heads=12, num_key_value_heads=2, vocab_size=151936,
        max_position_embeddings=32768, rope_theta=1000000.0, rms_norm_eps=1e-6,
        tie_word_embeddings=True, use_sliding_window=False, hidden_act="silu")),
    "llama-3.2-1b": ("LlamaConfig", "LlamaForCausalLM", dict(
        hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
        num_attention_heads=32, num_key_value_heads=8, head_dim=64, vocab_size=128256,
        max_position_embeddings=131072, rope_theta=500000.0, rms_norm_eps=1e-5,
        tie_word_embeddings=True, hidden_act="silu",
        rope_scaling=dict(rope_type="llama3", factor=32.0, low_freq_factor=1.0,
                          high_freq_factor=4.0, original_max_position_embeddings=8192))),
    "gemma-2-2b": ("Gemma2Config", "Gemma2ForCausalLM", dict(
        hidden_size=2304, intermediate_size=9216, num_hidden_layers=26,
        num_attention_heads=8, num_key_value_heads=4, head_dim=256, vocab_size=256000,
        max_position_embeddings=8192, rope_theta=10000.0, rms_norm_eps=1e-6,
        query_pre_attn_scalar=256, sliding_window=4096, final_logit_softcapping=30.0,
        attn_logit_softcapping=50.0, hidden_activation="gelu_pytorch_tanh",
        tie_word_embeddings=True)),
    "phi-3-mini": ("Phi3Config", "Phi3ForCausalLM", dict(
        hidden_size=3072, intermediate_size=8192, num_hidden_layers=32,
        num_attention_heads=32, num_key_value_heads=32, vocab_size=32064,
        max_position_embeddings=4096, original_max_position_embeddings=4096,
        rope_theta=10000.0, rms_norm_eps=1e-5, tie_word_embeddings=False,
        sliding_window=None, hidden_act="silu")),
}


def build(name, seed):
    import torch
    import transformers
    from generate_hf import finish_model
    config_class, model_class, fields = CONFIGS[name]
    cfg = getattr(transformers, config_class)(
        bos_token_id=1, eos_token_id=2, pad_token_id=0, use_cache=True,
        attention_dropout=0.0, **fields)
    torch.manual_seed(seed)
    with torch.device("cpu"):
        model = getattr(transformers, model_class)(cfg)
    return finish_model(model, seed)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("name", nargs="?")
    ap.add_argument("--out", default=os.path.join(HERE, ".cache", "hub"))
    ap.add_argument("--exporter", choices=("optimum", "dynamo"), default="optimum")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    if a.list or not a.name:
        for n, (_, cls, f) in CONFIGS.items():
            print("%-14s %s hidden %d, %d layers, %d/%d heads, vocab %d" % (
                n, cls, f["hidden_size"], f["num_hidden_layers"], f["num_attention_heads"],
                f["num_key_value_heads"], f["vocab_size"]))
        return 0
    if a.name not in CONFIGS:
        print("make_hub_model.py: unknown model %r (--list names them)" % a.name, file=sys.stderr)
        return 2
    d = os.path.join(a.out, "%s-%s" % (a.name, a.exporter))
    recipe = {"name": a.name, "config": CONFIGS[a.name], "exporter": a.exporter, "seed": a.seed,
              "version": 1}
    stamp = os.path.join(d, "recipe.json")
    if os.path.exists(stamp) and json.load(open(stamp)) == json.loads(json.dumps(recipe)):
        print(d)
        return 0
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    t0 = time.time()
    model = build(a.name, a.seed)
    hf = os.path.join(d, "hf")
    model.save_pretrained(hf, safe_serialization=True)
    print("built and saved %s in %.1f s" % (a.name, time.time() - t0), file=sys.stderr)
    t0 = time.time()
    if a.exporter == "optimum":
        from optimum.exporters.onnx import main_export
        tmp = os.path.join(d, "export")
        main_export(hf, tmp, task="text-generation-with-past", library_name="transformers",
                    device="cpu", no_post_process=True, do_validation=False,
                    local_files_only=True)
        for f in os.listdir(tmp):
            if f.startswith("model.onnx"):
                os.rename(os.path.join(tmp, f), os.path.join(d, f))
        shutil.rmtree(tmp)
    else:
        import torch
        ids = torch.zeros((1, 8), dtype=torch.int64)
        prog = torch.onnx.export(model, (ids,), dynamo=True, input_names=["input_ids"],
                                 output_names=["logits"],
                                 dynamic_shapes={"input_ids": {1: "sequence"}})
        prog.save(os.path.join(d, "model.onnx"), external_data=True)
    print("exported in %.1f s" % (time.time() - t0), file=sys.stderr)
    with open(stamp, "w") as f:
        json.dump(recipe, f, indent=1)
    print(d)
    return 0


if __name__ == "__main__":
    sys.exit(main())
