from data1 import add, ENTRIES, ALIGN_L2, MLC, AIC, KERAS, ARITH, HFCNT
from data3 import llm
ONNX = "github:ThanatosShinji/onnx-tool@00f5f0a onnx_tool/model_configs.py"
def phi(**kw):
    kw.setdefault("family", "phi-3"); return llm(**kw)
MINI = dict(layers=32, attention_heads=32, kv_heads=32, head_dim=96, hidden_size=3072, intermediate_size=8192, vocab_size=32064, tie_word_embeddings=False)
add(phi(id="phi-3-mini-4k", name="Phi-3 Mini 4K", hf_id="microsoft/Phi-3-mini-4k-instruct", hf_ids=[],
        aliases=["phi3:3.8b", "phi3", "phi-3-mini", "phi 3 mini", "phi3 mini", "phi3-mini", "phi-3-mini-4k", "phi 3 mini 4k",
                 "phi-3-mini-4k-instruct", "microsoft/phi-3-mini-4k-instruct"],
        params_b=3.821, params_source="keras-hub phi3_mini_4k_instruct_en params 3821079552 (= config arithmetic); card '3.8B parameters'",
        **MINI, context_max=4096, sliding_window=2047, sliding_layers=32, layer_pattern="config sliding_window 2047 on every layer",
        source=(f"config: {ONNX} phi3_mini (HF config copy; via shared/reference/models.yaml); {ALIGN_L2} name='Phi-3-mini-4k-instruct'; params: {KERAS}/phi3/phi3_presets.py phi3_mini_4k_instruct_en 3821079552; code-index excerpt 33609247180 (card '3.8B')")),
    {"kv_heads": "MHA", "sliding_window": "caps the cache only where the runtime honours it"})
add(phi(id="phi-3-mini-128k", name="Phi-3 Mini 128K", hf_id="microsoft/Phi-3-mini-128k-instruct", hf_ids=[],
        aliases=["phi3:3.8b-mini-128k-instruct", "phi-3-mini-128k", "phi 3 mini 128k", "phi3 mini 128k", "phi3-mini-128k",
                 "phi-3-mini-128k-instruct", "microsoft/phi-3-mini-128k-instruct"],
        params_b=3.821, params_source="keras-hub phi3_mini_128k_instruct_en params 3821079552",
        **MINI, context_max=131072, context_note="LongRoPE (rope_scaling long/short factors, original_max_position_embeddings 4096)",
        layer_pattern="config sliding_window 262144 > max_position_embeddings: never caps (full attention)",
        source=("config: github:dotnet/machinelearning@6d1f7e2b src/Microsoft.ML.GenAI.Phi/Resource/Config/phi-3-mini-128k-instruct-config.json (verbatim HF config; via registry); "
                f"{ALIGN_L2} name='Phi-3-mini-128k-instruct' (block_size 131072); params: {KERAS}/phi3/phi3_presets.py phi3_mini_128k_instruct_en 3821079552")))
SMALL = dict(layers=32, attention_heads=32, kv_heads=8, head_dim=128, hidden_size=4096, intermediate_size=14336, vocab_size=100352, tie_word_embeddings=True)
SPAT = "blocksparse attention on every other layer (dense_attention_every_n_layers 2; 16 local blocks of 64 tokens + vertical stride 8); the cache still holds every token, so no window cap"
SSRC = ("params: HF file listing huggingface.co/microsoft/Phi-3-small-8k-instruct/tree/abd8229e (docs corpus): safetensors shards 4.83 + 4.8 + 4.8 + 0.352 GB = 14.78 GB in BF16 = about 7.39B, which matches the tied-embedding arithmetic 7,391,092,736 (untied would be 7.80B); card: '7B parameters'")
add(phi(id="phi-3-small-8k", name="Phi-3 Small 8K", hf_id="microsoft/Phi-3-small-8k-instruct", hf_ids=[],
        aliases=["phi-3-small", "phi 3 small", "phi3 small", "phi-3-small-8k", "phi-3-small-8k-instruct", "microsoft/phi-3-small-8k-instruct", "phi3:7b"],
        params_b=7.391, params_source="config arithmetic with tied embeddings 7,391,092,736, confirmed by the checkpoint size (14.78 GB BF16)",
        **SMALL, context_max=8192, context_note="rope_embedding_base 1e6", layer_pattern=SPAT,
        note="Phi3SmallForCausalLM (trust_remote_code): gegelu MLP, muP scaling, LayerNorm",
        source=f"config: {ONNX} Phi_3_small_8k_instruct (HF config copy: 32 layers, 4096, 32/8 heads, ff_intermediate_size 14336, vocab 100352, max_position_embeddings 8192, blocksparse_* keys, bf16); {SSRC}"),
    {"tie_word_embeddings": "not a config key; inferred from the checkpoint size (see params_source)"})
add(phi(id="phi-3-small-128k", name="Phi-3 Small 128K", hf_id="microsoft/Phi-3-small-128k-instruct", hf_ids=[],
        aliases=["phi-3-small-128k", "phi 3 small 128k", "phi3 small 128k", "phi-3-small-128k-instruct", "microsoft/phi-3-small-128k-instruct"],
        params_b=7.391, params_source="same shape as phi-3-small-8k (config arithmetic, tied)",
        **SMALL, context_max=131072, context_note="LongRoPE, original_max_position_embeddings 8192", layer_pattern=SPAT,
        source=f"config: docs corpus huggingface.co/microsoft/Phi-3-small-128k-instruct/blob/refs%2Fpr%2F42/config.json (Phi3SmallForCausalLM, same blocksparse keys, ff 14336, 4096, max_position_embeddings 131072, 32/8 heads, 32 layers, original_max_position_embeddings 8192); {SSRC}"),
    {"tie_word_embeddings": "inferred from the 8k checkpoint size (same architecture)"})
MED = dict(layers=40, attention_heads=40, kv_heads=10, head_dim=128, hidden_size=5120, intermediate_size=17920, vocab_size=32064, tie_word_embeddings=False)
add(phi(id="phi-3-medium-4k", name="Phi-3 Medium 4K", hf_id="microsoft/Phi-3-medium-4k-instruct", hf_ids=[],
        aliases=["phi3:14b", "phi3:medium", "phi-3-medium", "phi 3 medium", "phi3 medium", "phi-3-medium-4k", "phi-3-medium-4k-instruct", "microsoft/phi-3-medium-4k-instruct"],
        params_b=13.960, params_source="config arithmetic 13,960,238,080 (" + ARITH + "); card '14B'",
        **MED, context_max=4096, sliding_window=2047, sliding_layers=40, layer_pattern="config sliding_window 2047 on every layer",
        source=f"config: {ONNX} Phi_3_medium_4k_instruct (HF config copy: 5120, 17920, max_position_embeddings 4096, 40/40/10, sliding_window 2047, tie false, bf16, vocab 32064); cross_check: docs corpus huggingface.co/fakezeta/Phi-3-medium-4k-instruct-ov-int8 config (_name_or_path microsoft/Phi-3-medium-4k-instruct, same); params: arithmetic"),
    {"kv_heads": "10 KV heads: TP=8 cannot shard them evenly"})
add(phi(id="phi-3-medium-128k", name="Phi-3 Medium 128K", hf_id="microsoft/Phi-3-medium-128k-instruct", hf_ids=[],
        aliases=["phi3:14b-medium-128k-instruct", "phi-3-medium-128k", "phi 3 medium 128k", "phi3 medium 128k", "phi-3-medium-128k-instruct", "microsoft/phi-3-medium-128k-instruct"],
        params_b=13.960, params_source="same shape as phi-3-medium-4k (config arithmetic)",
        **MED, context_max=131072, context_note="LongRoPE, original_max_position_embeddings 4096",
        layer_pattern="full attention (the 128k config's sliding_window was not visible in the excerpt)",
        source="config: docs corpus huggingface.co/microsoft/Phi-3-medium-128k-instruct/blob/refs%2Fpr%2F5/config.json (Phi3ForCausalLM 5120, 17920, max_position_embeddings 131072, 40/40/10, original 4096, rope_scaling long/short factors); huggingface.co/Defetya/phi-3-medium-comp config (_name_or_path microsoft/Phi-3-medium-128k-instruct, same)"),
    {"sliding_window": "UNVERIFIED: the value in this config was cut off in the excerpt; the mini-128k config uses 262144 (never caps)"})
add(phi(id="phi-3.5-mini", name="Phi-3.5 Mini", family="phi-3.5", hf_id="microsoft/Phi-3.5-mini-instruct", hf_ids=[],
        aliases=["phi3.5:3.8b", "phi3.5", "phi-3.5-mini", "phi 3.5 mini", "phi3.5 mini", "phi-3.5-mini-instruct", "microsoft/phi-3.5-mini-instruct"],
        params_b=3.821, params_source="same config fields as Phi-3-mini-128k (config arithmetic 3,821,079,552)",
        **MINI, context_max=131072, context_note="LongRoPE (type longrope), original_max_position_embeddings 4096",
        layer_pattern="config sliding_window 262144 > max_position_embeddings: never caps",
        source=f"config: {MLC} MODEL_PRESETS['phi-3_5'] (_name_or_path Phi-3.5-mini-instruct: 3072, 8192, max_position_embeddings 131072, 32/32/32, original 4096, rope_scaling longrope, sliding_window 262144, tie false, bf16, vocab 32064); {ALIGN_L2} name='Phi-3.5-mini-instruct' (its block_size 4096 disagrees with the HF config)"))
add(phi(id="phi-3.5-moe", name="Phi-3.5 MoE (16x3.8B)", family="phi-3.5", hf_id="microsoft/Phi-3.5-MoE-instruct", hf_ids=[],
        aliases=["phi-3.5-moe", "phi 3.5 moe", "phi3.5 moe", "phi-3.5-moe-instruct", "microsoft/phi-3.5-moe-instruct", "phi-3.5-moe-42b"],
        params_b=41.873, params_source=f"{HFCNT} (PhimoeForCausalLM): 41,873,153,344; transformers doc: '16 x 3.8B MoE model with 6.6 billion active parameters'",
        active_params_b=6.6, layers=32, attention_heads=32, kv_heads=8, head_dim=128, hidden_size=4096, intermediate_size=6400,
        vocab_size=32064, tie_word_embeddings=False, context_max=131072, context_note="LongRoPE, original_max_position_embeddings 4096",
        layer_pattern="all layers full attention (config sliding_window 131072 = max, never caps); attention and lm_head biases",
        experts={"total": 16, "active": 2, "shared": 0, "moe_intermediate_size": 6400},
        source=("config: PhiMoEConfig docstring (docs corpus huggingface.co/microsoft/Phi-tiny-MoE-instruct/blob/refs%2Fpr%2F6/configuration_slimmoe.py: 'defaults ... similar to microsoft/Phi-3.5-MoE-instruct', vocab 32064, hidden 4096, intermediate 6400, 32 layers); "
                "pruned derivatives with _name_or_path Phi-3.5-MoE-instruct (huggingface.co/Pearush/phi_moe_22_attn, phi_moe_2e: attention_bias true, lm_head_bias true, 32 heads, 8 KV, 16 experts, 2 per token, max_position_embeddings 131072, original 4096, tie false, vocab 32064); "
                "active: huggingface.co/docs/transformers/v4.49.0/model_doc/phimoe ('16 x 3.8B MoE model with 6.6 billion active parameters')")),
    {"intermediate_size": "per-expert width (PhiMoEConfig default = Phi-3.5-MoE)"})
add(phi(id="phi-3.5-vision", name="Phi-3.5 Vision", family="phi-3.5", kind="vlm", hf_id="microsoft/Phi-3.5-vision-instruct", hf_ids=[],
        aliases=["phi-3.5-vision", "phi 3.5 vision", "phi3.5 vision", "phi-3.5-vision-instruct", "microsoft/phi-3.5-vision-instruct"],
        params_b=None, params_source="UNVERIFIED: not read (card figure 4.2B not found in the sources searched); LM part = 3.821B (Phi-3-mini shape)",
        **MINI, context_max=131072, context_note="LongRoPE ('su'), original 4096",
        layer_pattern="config sliding_window 262144 > max_position_embeddings: never caps",
        vision_params_b=None,
        note="Phi3VForCausalLM (trust_remote_code): Phi-3-mini LM + CLIP ViT-L/14-336 image encoder (img_processor clip_vision_model, image_dim_out 1024, num_img_tokens 144) with an MLP projector",
        source=f"config: {MLC} MODEL_PRESETS['phi-3_5-vision'] (_name_or_path Phi-3.5-vision-instruct: Phi3VForCausalLM, 3072, 8192, max_position_embeddings 131072, 32/32/32, sliding_window 262144, tie false, vocab 32064, img_processor openai/clip-vit-large-patch14-336)"),
    {"params_b": "UNVERIFIED: total not read", "vision_params_b": "UNVERIFIED: CLIP ViT-L/14-336 tower + projector, count not read"})
P4 = dict(layers=40, attention_heads=40, kv_heads=10, head_dim=128, hidden_size=5120, intermediate_size=17920, vocab_size=100352, tie_word_embeddings=False)
add(phi(id="phi-4", name="Phi-4 14B", family="phi-4", hf_id="microsoft/phi-4", hf_ids=[],
        aliases=["phi4:14b", "phi4", "phi-4", "phi 4", "phi-4-14b", "phi4 14b", "microsoft/phi-4"],
        params_b=14.660, params_source="config arithmetic 14,659,507,200 (shared/reference params_computed_b 14.66); card '14B parameters'",
        **P4, context_max=16384, context_note="rope_theta 250000; card: 16K",
        source=(f"config: code-index excerpt 58256788114 (annotated verbatim phi-4 config.json: phi3, 40/40/10, 17920, 16384, tie false, bf16, 100352; via shared/reference/models.yaml); {ALIGN_L2} name='phi-4'; params_total_b: code-index excerpt 467494666")),
    {"kv_heads": "10 KV heads: TP=8 cannot shard them evenly"})
add(phi(id="phi-4-reasoning", name="Phi-4-reasoning 14B", family="phi-4", hf_id="microsoft/Phi-4-reasoning", hf_ids=["microsoft/Phi-4-reasoning-plus"],
        aliases=["phi4-reasoning:14b", "phi4-reasoning", "phi-4-reasoning", "phi 4 reasoning", "phi-4-reasoning-plus", "phi4-reasoning-plus", "microsoft/phi-4-reasoning", "microsoft/phi-4-reasoning-plus"],
        params_b=14.660, params_source="same layer shapes as phi-4 (config arithmetic 14,659,507,200)",
        **P4, context_max=32768, context_note="rope_theta 500000 (phi-4: 16384 / 250000)",
        note="weights shape-identical to phi-4; a separate entry because the context window and rope base differ",
        source=f"config: {ALIGN_L2} name='Phi-4-reasoning' and 'Phi-4-reasoning-plus' (links the HF config.json: block_size 32768, rope_base 500000, n_layer 40, n_head 40, n_query_groups 10, n_embd 5120, intermediate 17920, vocab 100352)"),
    {"context_max": "from litgpt block_size (HF config not read directly)"})
add(phi(id="phi-4-mini", name="Phi-4-mini 3.8B", family="phi-4", hf_id="microsoft/Phi-4-mini-instruct", hf_ids=["microsoft/Phi-4-mini-reasoning"],
        aliases=["phi4-mini:3.8b", "phi4-mini", "phi-4-mini", "phi 4 mini", "phi-4-mini-instruct", "microsoft/phi-4-mini-instruct", "phi-4-mini-reasoning"],
        params_b=3.836, params_source="config arithmetic 3,836,021,760 (tied embeddings; " + ARITH + ")",
        layers=32, attention_heads=24, kv_heads=8, head_dim=128, hidden_size=3072, intermediate_size=8192, vocab_size=200064,
        tie_word_embeddings=True, context_max=131072, context_note="LongRoPE, original 4096; partial_rotary_factor 0.75",
        layer_pattern="config sliding_window 262144 > max_position_embeddings: never caps",
        source=f"config: {MLC} MODEL_PRESETS['phi-4'] (_name_or_path Phi-4-mini-instruct: Phi3ForCausalLM, 3072, 8192, max_position_embeddings 131072, 24 heads, 32 layers, 8 KV, original 4096, partial_rotary_factor 0.75, sliding_window 262144, tie true, bf16, vocab 200064); {ALIGN_L2} name='Phi-4-mini-instruct' / 'Phi-4-mini-reasoning' (same shape, padded_vocab 200064)"))
