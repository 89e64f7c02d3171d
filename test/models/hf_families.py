"""The tiny Hugging Face `transformers` models of the tests, as data.

FAMILIES maps a name to how one model is made: a transformers config class
and its arguments (a config object, no hub download), the model class built
on it, and the fields meta.json records about it. generate_hf.py builds and
exports some of them (build_family, which also seeds and re-initialises the
weights); sweep_hf.py sweeps them all. Class names are strings, so the table
loads without torch or transformers.
"""


def family(config_class, model_class, name, dims, config, **meta):
    """transformers.<model_class> on transformers.<config_class>(**config).

    name, dims (layers, heads, kv_heads, hidden, intermediate, vocab,
    max_positions) and meta are what generate_hf.base_meta takes; a meta
    value that is a function is called with the config object.
    """
    return dict(config_class=config_class, model_class=model_class, name=name, dims=dims,
                config=config, meta=meta)


# Gemma 2, without and with past (below).
GEMMA2_CONFIG = dict(
    vocab_size=384, hidden_size=64, intermediate_size=144, num_hidden_layers=2,
    num_attention_heads=4, num_key_value_heads=2, head_dim=16, max_position_embeddings=64,
    rms_norm_eps=1e-6, query_pre_attn_scalar=16, sliding_window=8,
    final_logit_softcapping=30.0, attn_logit_softcapping=50.0, hidden_activation="gelu_pytorch_tanh",
    pad_token_id=0, bos_token_id=1, eos_token_id=2, tie_word_embeddings=True,
    attention_dropout=0.0, use_cache=False, attn_implementation="eager")
GEMMA2_META = dict(
    allreduces_per_layer=2, activation="gelu (tanh, GeGLU)",
    norm="RMSNorm (1 + w): pre and post attention/MLP, before the residual add",
    attention="rotary, GQA 4/2, sliding window 8 on layer 0, logit soft-capping 50",
    layer_types=lambda cfg: list(cfg.layer_types), final_logit_softcapping=30.0)

FAMILIES = {
    "phi3": family(
        "Phi3Config", "Phi3ForCausalLM", "phi3", (2, 4, 4, 64, 160, 384, 64),
        dict(vocab_size=384, hidden_size=64, intermediate_size=160, num_hidden_layers=2,
             num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=64,
             original_max_position_embeddings=64, rms_norm_eps=1e-5, tie_word_embeddings=False,
             resid_pdrop=0.0, embd_pdrop=0.0, attention_dropout=0.0, sliding_window=None,
             pad_token_id=0, bos_token_id=1, eos_token_id=2, use_cache=False, attn_implementation="eager"),
        allreduces_per_layer=2, activation="silu (SwiGLU, fused gate_up_proj)", norm="RMSNorm (pre)",
        attention="fused qkv_proj [q|k|v], rotary"),
    # Falcon's new decoder architecture: grouped fused QKV (per KV group
    # [q.. q, k, v]), two LNs, parallel attention + MLP.
    "falcon_gqa": family(
        "FalconConfig", "FalconForCausalLM", "falcon", (2, 8, 2, 64, 192, 320, 64),
        dict(vocab_size=320, hidden_size=64, num_hidden_layers=2, num_attention_heads=8, num_kv_heads=2,
             new_decoder_architecture=True, multi_query=False, parallel_attn=True, bias=False, alibi=False,
             max_position_embeddings=64, hidden_dropout=0.0, attention_dropout=0.0, ffn_hidden_size=192,
             bos_token_id=1, eos_token_id=2, use_cache=False, attn_implementation="eager"),
        allreduces_per_layer=1,
        layout="new_decoder_architecture (grouped fused query_key_value, ln_attn + ln_mlp)",
        parallel_attn=True, activation="gelu (erf)", norm="LayerNorm (pre, parallel)",
        attention="rotary, GQA 8/2"),
    # Falcon multi-query (heads + 2 slots in query_key_value), one LN,
    # parallel attention + MLP, biases.
    "falcon_mqa": family(
        "FalconConfig", "FalconForCausalLM", "falcon", (2, 4, 1, 64, 128, 320, 64),
        dict(vocab_size=320, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
             new_decoder_architecture=False, multi_query=True, parallel_attn=True, bias=True, alibi=False,
             max_position_embeddings=64, hidden_dropout=0.0, attention_dropout=0.0, ffn_hidden_size=128,
             bos_token_id=1, eos_token_id=2, use_cache=False, attn_implementation="eager"),
        allreduces_per_layer=1,
        layout="multi_query (query_key_value = [4 q heads | k | v]), single input_layernorm",
        parallel_attn=True, bias=True, activation="gelu (erf)", norm="LayerNorm (pre, parallel)",
        attention="rotary, MQA 4/1"),
    "bloom": family(
        "BloomConfig", "BloomForCausalLM", "bloom", (2, 4, 4, 64, 256, 320, None),
        dict(vocab_size=320, hidden_size=64, n_layer=2, n_head=4, hidden_dropout=0.0, attention_dropout=0.0,
             layer_norm_epsilon=1e-5, apply_residual_connection_post_layernorm=False,
             bos_token_id=1, eos_token_id=2, pad_token_id=3, use_cache=False, attn_implementation="eager"),
        allreduces_per_layer=2, activation="gelu (tanh, bloom_gelu)",
        norm="LayerNorm (pre) + embedding LayerNorm",
        attention="ALiBi, fused query_key_value per head [q k v] x heads"),
    "gemma2": family(
        "Gemma2Config", "Gemma2ForCausalLM", "gemma2", (2, 4, 2, 64, 144, 384, 64),
        GEMMA2_CONFIG, **GEMMA2_META),
    # Gemma 2 for optimum's with-past export: positions from the past length
    # (no position_ids input), a sliding window shorter than a generation. No
    # attention soft-capping: optimum exports with sdpa, which has none.
    "gemma2_past": family(
        "Gemma2Config", "Gemma2ForCausalLM", "gemma2", (2, 4, 2, 64, 144, 384, 64),
        dict(GEMMA2_CONFIG, attn_logit_softcapping=None, use_cache=True),
        **dict(GEMMA2_META, attention="rotary, GQA 4/2, sliding window 8 on layer 0")),
    "gptneox": family(
        "GPTNeoXConfig", "GPTNeoXForCausalLM", "gpt_neox", (2, 4, 4, 64, 192, 320, 64),
        dict(vocab_size=320, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=192,
             rotary_pct=0.5, max_position_embeddings=64, use_parallel_residual=True, hidden_act="gelu",
             attention_dropout=0.0, hidden_dropout=0.0, tie_word_embeddings=False, attention_bias=True,
             bos_token_id=1, eos_token_id=2, use_cache=False, attn_implementation="eager"),
        allreduces_per_layer=1, use_parallel_residual=True, activation="gelu (erf)",
        norm="LayerNorm (pre, separate for attention and MLP, parallel residual)",
        attention="fused query_key_value per head [q k v] x heads, partial rotary 50%"),
    "gptj": family(
        "GPTJConfig", "GPTJForCausalLM", "gptj", (2, 4, 4, 64, 192, 320, 64),
        dict(vocab_size=320, n_embd=64, n_layer=2, n_head=4, n_inner=192, rotary_dim=8, n_positions=64,
             activation_function="gelu_new", resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
             tie_word_embeddings=False, bos_token_id=1, eos_token_id=2, use_cache=False,
             attn_implementation="eager"),
        allreduces_per_layer=1, activation="gelu_new (tanh)",
        norm="LayerNorm (pre, one shared by attention and MLP)",
        attention="separate q/k/v (no bias), interleaved rotary on 8 of 16 dims, biased MLP"),
    "gpt2_past": family(
        "GPT2Config", "GPT2LMHeadModel", "gpt2", (2, 4, 4, 64, 256, 320, 64),
        dict(vocab_size=320, n_embd=64, n_layer=2, n_head=4, n_positions=64, activation_function="gelu_new",
             resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=0, eos_token_id=0,
             tie_word_embeddings=True, use_cache=True, attn_implementation="eager"),
        allreduces_per_layer=2, activation="gelu_new (tanh)", norm="LayerNorm (pre)",
        attention="Conv1D c_attn [q|k|v]"),
    "llama_past": family(
        "LlamaConfig", "LlamaForCausalLM", "llama", (2, 4, 2, 64, 160, 320, 64),
        dict(vocab_size=320, hidden_size=64, intermediate_size=160, num_hidden_layers=2,
             num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64, rms_norm_eps=1e-6,
             tie_word_embeddings=False, bos_token_id=1, eos_token_id=2, use_cache=True,
             attn_implementation="eager"),
        allreduces_per_layer=2, activation="silu (SwiGLU)", norm="RMSNorm (pre)", attention="rotary, GQA 4/2"),
    "qwen2_past": family(
        "Qwen2Config", "Qwen2ForCausalLM", "qwen2", (2, 4, 2, 64, 160, 320, 64),
        dict(vocab_size=320, hidden_size=64, intermediate_size=160, num_hidden_layers=2,
             num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64, rms_norm_eps=1e-6,
             tie_word_embeddings=False, bos_token_id=1, eos_token_id=2, use_cache=True,
             use_sliding_window=False, attn_implementation="eager"),
        allreduces_per_layer=2, activation="silu (SwiGLU)", norm="RMSNorm (pre)",
        attention="rotary, GQA 4/2, q/k/v biases"),
    # Mixtral: sparse mixture of experts (router + top-2 of 4 SwiGLU
    # experts), GQA 4/2, rotary.
    "mixtral": family(
        "MixtralConfig", "MixtralForCausalLM", "mixtral", (2, 4, 2, 64, 96, 320, 64),
        dict(vocab_size=320, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
             num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
             num_local_experts=4, num_experts_per_tok=2, rms_norm_eps=1e-5, tie_word_embeddings=False,
             sliding_window=None, attention_dropout=0.0, router_jitter_noise=0.0,
             bos_token_id=1, eos_token_id=2, use_cache=False, attn_implementation="eager"),
        allreduces_per_layer=2, activation="silu (SwiGLU experts)", norm="RMSNorm (pre)",
        attention="rotary, GQA 4/2", experts=4, experts_per_token=2),
    # Qwen3-MoE through optimum, which loops over every expert (torch.where
    # per expert, no traced count).
    "qwen3moe_past": family(
        "Qwen3MoeConfig", "Qwen3MoeForCausalLM", "qwen3_moe", (2, 4, 2, 64, 48, 320, 64),
        dict(vocab_size=320, hidden_size=64, intermediate_size=96, moe_intermediate_size=48, num_hidden_layers=2,
             num_attention_heads=4, num_key_value_heads=2, head_dim=16, num_experts=4, num_experts_per_tok=2,
             decoder_sparse_step=1, norm_topk_prob=True, max_position_embeddings=64, rms_norm_eps=1e-6,
             tie_word_embeddings=False, bos_token_id=1, eos_token_id=2, use_cache=True, attn_implementation="eager"),
        allreduces_per_layer=2, activation="silu (SwiGLU experts)", norm="RMSNorm (pre, q/k norms)",
        attention="rotary, GQA 4/2", experts=4, experts_per_token=2),
    # generate.py's Llama (GQA 8/2, intermediate 172) with SDPA attention, for
    # the opset-23 export. torch.onnx.export(dynamo=True, opset_version=23,
    # optimize=True) runs onnxscript's onnx_fusions, which turn the RMSNorm
    # pattern into RMSNormalization-23 and q/k * cos + rotate_half(q/k) * sin
    # into RotaryEmbedding-23 (4-D x, 3-D cos/sin caches, no position_ids);
    # torch's SDPA is exported as Attention-23 (4-D q/k/v, k/v already
    # repeated to 8 heads by Expand/Reshape, boolean causal mask).
    "llama_op23": family(
        "LlamaConfig", "LlamaForCausalLM", "llama", (2, 8, 2, 64, 172, 512, 128),
        dict(vocab_size=512, hidden_size=64, intermediate_size=172, num_hidden_layers=2,
             num_attention_heads=8, num_key_value_heads=2, max_position_embeddings=128, rms_norm_eps=1e-6,
             tie_word_embeddings=False, bos_token_id=1, eos_token_id=2, pad_token_id=None, use_cache=False,
             attn_implementation="sdpa"),
        allreduces_per_layer=2, activation="silu (SwiGLU)", norm="RMSNorm (pre) as RMSNormalization-23",
        attention="rotary as RotaryEmbedding-23, GQA 8/2 (k/v expanded before Attention-23)",
        position_ids="arange(sequence) expanded to [batch, sequence] by the wrapper"),
    # The families below are only in the sweep (sweep_hf.py).
    "mistral": family(
        "MistralConfig", "MistralForCausalLM", "mistral", (2, 8, 4, 128, 256, 320, 64),
        dict(vocab_size=320, hidden_size=128, intermediate_size=256, num_hidden_layers=2,
             num_attention_heads=8, num_key_value_heads=4, head_dim=16, max_position_embeddings=64,
             rms_norm_eps=1e-5, sliding_window=None, tie_word_embeddings=False, attention_dropout=0.0,
             bos_token_id=1, eos_token_id=2, use_cache=True, attn_implementation="eager")),
    "qwen3": family(
        "Qwen3Config", "Qwen3ForCausalLM", "qwen3", (2, 8, 4, 128, 256, 320, 64),
        dict(vocab_size=320, hidden_size=128, intermediate_size=256, num_hidden_layers=2,
             num_attention_heads=8, num_key_value_heads=4, head_dim=16, max_position_embeddings=64,
             rms_norm_eps=1e-6, tie_word_embeddings=False, use_sliding_window=False, attention_bias=False,
             bos_token_id=1, eos_token_id=2, use_cache=True, attn_implementation="eager")),
    "gemma": family(
        "GemmaConfig", "GemmaForCausalLM", "gemma", (2, 4, 1, 64, 160, 320, 64),
        dict(vocab_size=320, hidden_size=64, intermediate_size=160, num_hidden_layers=2,
             num_attention_heads=4, num_key_value_heads=1, head_dim=16, max_position_embeddings=64,
             rms_norm_eps=1e-6, hidden_activation="gelu_pytorch_tanh", tie_word_embeddings=True,
             attention_dropout=0.0, pad_token_id=0, bos_token_id=1, eos_token_id=2, use_cache=True,
             attn_implementation="eager")),
    "gemma3": family(
        "Gemma3TextConfig", "Gemma3ForCausalLM", "gemma3_text", (2, 4, 2, 64, 160, 320, 64),
        dict(vocab_size=320, hidden_size=64, intermediate_size=160, num_hidden_layers=2,
             num_attention_heads=4, num_key_value_heads=2, head_dim=16, max_position_embeddings=64,
             rms_norm_eps=1e-6, query_pre_attn_scalar=16, sliding_window=8, sliding_window_pattern=2,
             layer_types=["sliding_attention", "full_attention"], rope_local_base_freq=10000.0,
             final_logit_softcapping=None, attn_logit_softcapping=None, hidden_activation="gelu_pytorch_tanh",
             tie_word_embeddings=True, attention_dropout=0.0, pad_token_id=0, bos_token_id=1, eos_token_id=2,
             use_cache=True, attn_implementation="eager")),
    "opt": family(
        "OPTConfig", "OPTForCausalLM", "opt", (2, 4, 4, 64, 256, 320, 64),
        dict(vocab_size=320, hidden_size=64, num_hidden_layers=2, ffn_dim=256, num_attention_heads=4,
             max_position_embeddings=64, do_layer_norm_before=True, activation_function="relu",
             dropout=0.0, attention_dropout=0.0, layerdrop=0.0, enable_bias=True, tie_word_embeddings=True,
             pad_token_id=1, bos_token_id=2, eos_token_id=2, use_cache=True, attn_implementation="eager")),
    "stablelm": family(
        "StableLmConfig", "StableLmForCausalLM", "stablelm", (2, 4, 4, 64, 160, 320, 64),
        dict(vocab_size=320, hidden_size=64, intermediate_size=160, num_hidden_layers=2,
             num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=64, layer_norm_eps=1e-5,
             partial_rotary_factor=0.25, use_qkv_bias=False, qk_layernorm=False, use_parallel_residual=False,
             hidden_dropout=0.0, attention_dropout=0.0, tie_word_embeddings=False,
             bos_token_id=1, eos_token_id=2, use_cache=True, attn_implementation="eager")),
    "starcoder2": family(
        "Starcoder2Config", "Starcoder2ForCausalLM", "starcoder2", (2, 4, 2, 64, 256, 320, 64),
        dict(vocab_size=320, hidden_size=64, intermediate_size=256, num_hidden_layers=2,
             num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64, norm_epsilon=1e-5,
             hidden_act="gelu_pytorch_tanh", use_bias=True, sliding_window=None, residual_dropout=0.0,
             embedding_dropout=0.0, attention_dropout=0.0, tie_word_embeddings=True,
             bos_token_id=1, eos_token_id=2, use_cache=True, attn_implementation="eager")),
    "bert": family(
        "BertConfig", "BertForMaskedLM", "bert", (2, 4, 4, 64, 128, 512, 64),
        dict(vocab_size=512, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
             max_position_embeddings=64, hidden_act="gelu", hidden_dropout_prob=0.0,
             attention_probs_dropout_prob=0.0, pad_token_id=0, attn_implementation="eager")),
    "roberta": family(
        "RobertaConfig", "RobertaForMaskedLM", "roberta", (2, 4, 4, 64, 128, 512, 66),
        dict(vocab_size=512, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
             max_position_embeddings=66, hidden_act="gelu", hidden_dropout_prob=0.0,
             attention_probs_dropout_prob=0.0, pad_token_id=1, bos_token_id=0, eos_token_id=2,
             type_vocab_size=1, attn_implementation="eager")),
    "distilbert": family(
        "DistilBertConfig", "DistilBertForMaskedLM", "distilbert", (2, 4, 4, 64, 128, 512, 64),
        dict(vocab_size=512, dim=64, n_layers=2, n_heads=4, hidden_dim=128, max_position_embeddings=64,
             dropout=0.0, attention_dropout=0.0, activation="gelu", sinusoidal_pos_embds=False,
             pad_token_id=0, attn_implementation="eager")),
    "t5": family(
        "T5Config", "T5ForConditionalGeneration", "t5", (4, 4, 4, 64, 128, 320, None),
        dict(vocab_size=320, d_model=64, d_kv=16, d_ff=128, num_layers=2, num_decoder_layers=2, num_heads=4,
             relative_attention_num_buckets=8, relative_attention_max_distance=32, dropout_rate=0.0,
             feed_forward_proj="relu", tie_word_embeddings=True, pad_token_id=0, eos_token_id=1,
             decoder_start_token_id=0, use_cache=True, attn_implementation="eager"),
        encoder_layers=2, decoder_layers=2),
    "bart": family(
        "BartConfig", "BartForConditionalGeneration", "bart", (4, 4, 4, 64, 128, 320, 64),
        dict(vocab_size=320, d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
             decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128, max_position_embeddings=64,
             activation_function="gelu", dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
             encoder_layerdrop=0.0, decoder_layerdrop=0.0, scale_embedding=False, pad_token_id=1,
             bos_token_id=0, eos_token_id=2, decoder_start_token_id=2, forced_eos_token_id=2,
             tie_word_embeddings=True, use_cache=True, attn_implementation="eager"),
        encoder_layers=2, decoder_layers=2),
}
