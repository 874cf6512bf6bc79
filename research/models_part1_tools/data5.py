from data1 import add, ENTRIES, ALIGN_L2, MLC, AIC, KERAS, ARITH, HFCNT
from data3 import llm
COH = "code-index excerpt 55805448694 (Cohere port config table: c4ai-command-r-v01 / -08-2024 / -plus, incl. tie_embeddings True)"
add(llm(id="command-r", name="Command R 35B (v01)", family="command-r", hf_id="CohereLabs/c4ai-command-r-v01", hf_ids=["CohereForAI/c4ai-command-r-v01"],
        aliases=["command-r:35b-v0.1", "command-r-v01", "command r v01", "c4ai-command-r-v01", "command r 35b", "command-r-35b", "cohereforai/c4ai-command-r-v01", "coherelabs/c4ai-command-r-v01"],
        params_b=34.981, params_source=f"{HFCNT} (CohereForCausalLM, tied): 34,980,831,232; card 'Model Size: 35 billion parameters'",
        layers=40, attention_heads=64, kv_heads=64, head_dim=128, hidden_size=8192, intermediate_size=22528, vocab_size=256000,
        tie_word_embeddings=True, context_max=8192, context_note="config max_position_embeddings 8192 but model_max_length 131072; card: 'Context length: 128K'",
        torch_dtype="float16", layer_pattern="all layers full attention; parallel attention+MLP block; logit_scale 0.0625; no GQA",
        source=("config: docs corpus huggingface.co/second-state/C4AI-Command-R-v01-GGUF/blob/bc7994e3/config.json (official config, _name_or_path .../HF_Final_weight_tie: CohereForCausalLM, 8192, 22528, max_position_embeddings 8192, model_max_length 131072, 64 heads, 40 layers, 64 KV heads, rope 8e6, fp16, vocab 256000, tie_word_embeddings true); "
                f"huggingface.co/CohereForAI/c4ai-command-r-v01-4bit/commit/d1d5cc4f (official 4-bit repo config, _name_or_path CohereForAI/c4ai-command-r-v01, max_position_embeddings 8192); {COH}; card huggingface.co/CohereForAI/c4ai-command-r-v01 README (pages corpus: '35 billion parameters', 'Context length: 128K')")),
    {"kv_heads": "MHA: 64 KV heads (no GQA) - 8x the KV cache of the 08-2024 release",
     "context_max": "raw config value; servers that want 128K must override it"})
add(llm(id="command-r-08-2024", name="Command R 32B (08-2024)", family="command-r", hf_id="CohereLabs/c4ai-command-r-08-2024", hf_ids=["CohereForAI/c4ai-command-r-08-2024"],
        aliases=["command-r:35b", "command-r", "command r", "commandr", "command-r-08-2024", "command r 08-2024", "c4ai-command-r-08-2024", "cohereforai/c4ai-command-r-08-2024", "coherelabs/c4ai-command-r-08-2024", "command-r-32b"],
        params_b=32.296, params_source=f"{HFCNT} (CohereForCausalLM, tied): 32,296,476,672",
        layers=40, attention_heads=64, kv_heads=8, head_dim=128, hidden_size=8192, intermediate_size=24576, vocab_size=256000,
        tie_word_embeddings=True, context_max=131072, layer_pattern="all layers full attention; parallel attention+MLP; GQA 64/8",
        source=(f"config: docs corpus huggingface.co/unsloth/c4ai-command-r-08-2024/blob/main/config.json (_name_or_path CohereForAI/c4ai-command-r-08-2024: 8192, 24576, max_position_embeddings 131072, 64 heads, 40 layers, 8 KV, rope 4e6, bf16, use_qk_norm false, vocab 256000); huggingface.co/SillyTilly/c4ai-command-r-08-2024 config (same); {COH} (mlp 24576, kv 8, tie True)")),
    {"aliases": "Ollama's 'command-r:35b' tag is the 08-2024 release (not re-verified here); params are 32.3B despite the 35B tag",
     "kv_heads": "08-2024 switched to GQA: 8 KV heads (v01 has 64)"})
add(llm(id="command-r-plus", name="Command R+ 104B (v01)", family="command-r", hf_id="CohereLabs/c4ai-command-r-plus", hf_ids=["CohereForAI/c4ai-command-r-plus"],
        aliases=["command-r-plus:104b-v0.1", "command-r-plus-v01", "c4ai-command-r-plus", "command r+ v01", "command-r-plus-104b", "cohereforai/c4ai-command-r-plus", "coherelabs/c4ai-command-r-plus"],
        params_b=103.811, params_source=f"{HFCNT} (CohereForCausalLM, tied, use_qk_norm true): 103,810,674,688; card 'Model Size: 104 billion parameters'",
        layers=64, attention_heads=96, kv_heads=8, head_dim=128, hidden_size=12288, intermediate_size=33792, vocab_size=256000,
        tie_word_embeddings=True, context_max=8192, context_note="config max_position_embeddings 8192, model_max_length 131072; card: 128K",
        torch_dtype="float16", layer_pattern="all layers full attention; parallel block; use_qk_norm true; logit_scale 0.8333",
        source=(f"config: docs corpus huggingface.co/FriendliAI/c4ai-command-r-plus-fp8/blame/bcdc7dde/config.json (_name_or_path CohereForAI/c4ai-command-r-plus: 12288, 33792, max_position_embeddings 8192, model_max_length 131072, 96 heads, 64 layers, 8 KV, rope 7.5e7, fp16, use_qk_norm true, vocab 256000); huggingface.co/PJMixers-Archive/CohereForAI_c4ai-command-r-plus-tokenizer config (same); {COH}; card via https://thecoli.com/threads/large-language-models-news-discussions.952923/page-78 (pages corpus)")),
    {"context_max": "raw config value (shared/reference had left it open); card 128K needs an override",
     "layer_pattern": "use_qk_norm is TRUE in the real config; the port table (55805448694) and shared/reference say False"})
RPA = "UNVERIFIED: assumed equal to Command R+ v01 (08-2024 config not found)"
add(llm(id="command-r-plus-08-2024", name="Command R+ 104B (08-2024)", family="command-r", hf_id="CohereLabs/c4ai-command-r-plus-08-2024", hf_ids=["CohereForAI/c4ai-command-r-plus-08-2024"],
        aliases=["command-r-plus:104b", "command-r-plus", "command r plus", "command r+", "command-r+", "commandr+", "command-r-plus-08-2024", "c4ai-command-r-plus-08-2024", "cohereforai/c4ai-command-r-plus-08-2024", "coherelabs/c4ai-command-r-plus-08-2024"],
        params_b=103.811, params_source="UNVERIFIED: v01 arithmetic (103,810,674,688) reused; no 08-2024 config or count read",
        layers=64, attention_heads=96, kv_heads=8, head_dim=128, hidden_size=12288, intermediate_size=33792, vocab_size=256000,
        tie_word_embeddings=True, context_max=None, torch_dtype=None,
        layer_pattern="assumed as v01: full attention, parallel block, GQA 96/8",
        note="every shape field is the v01 value; the 08-2024 refresh of Command R (35B) changed KV heads, widths and context, so treat this entry as provisional",
        source="UNVERIFIED: docs searches for c4ai-command-r-plus-08-2024 config.json returned only v01 / Command R 08-2024 configs and GGUF file listings (huggingface.co/bartowski/c4ai-command-r-plus-08-2024-GGUF, huggingface.co/legraphista/c4ai-command-r-plus-08-2024-IMat-GGUF); shape copied from command-r-plus (v01)"),
    {"layers": RPA, "attention_heads": RPA, "kv_heads": RPA, "intermediate_size": RPA, "vocab_size": RPA,
     "context_max": "UNVERIFIED: not read (Command R 08-2024 moved to 131072)", "torch_dtype": "UNVERIFIED: not read",
     "aliases": "Ollama's 'command-r-plus' / 'command-r-plus:104b' tag is the 08-2024 release (not re-verified here)"})
add(llm(id="command-a", name="Command A 111B (03-2025)", family="command-a", hf_id="CohereLabs/c4ai-command-a-03-2025", hf_ids=["CohereForAI/c4ai-command-a-03-2025"],
        aliases=["command-a:111b", "command-a", "command a", "c4ai-command-a-03-2025", "command-a-03-2025", "command a 111b", "cohereforai/c4ai-command-a-03-2025", "coherelabs/c4ai-command-a-03-2025"],
        params_b=111.058, params_source="huggingface.co/datasets/eduagarcia-temp/llm_pt_leaderboard_requests commit 13972e7f (eval request for CohereLabs/c4ai-command-a-03-2025: 'params': 111.058, Cohere2ForCausalLM); card '111 billion parameters'",
        layers=64, attention_heads=96, kv_heads=8, head_dim=128, hidden_size=12288, intermediate_size=36864, vocab_size=256000,
        tie_word_embeddings=True, context_max=131072, context_note="card: 'supports a context length of 256K but it is configured in Hugging Face for 128K'",
        sliding_window=4096, sliding_layers=48, layer_pattern="Cohere2: 3 sliding-window (4096, RoPE) layers then 1 global layer without positional embeddings (_sliding_window_pattern 4)",
        source=("shape: docs corpus huggingface.co/hammh0a/command-a-translate-FP8-Dynamic/blob/main/config.json (Command A Translate, a Command A fine-tune: Cohere2ForCausalLM, head_dim 128, hidden 12288, intermediate 36864, _sliding_window_pattern 4, layer_types sliding x3 + full repeating); "
                "card: hf.898520.xyz/DBMe/c4ai-command-a-03-2025-exl3-4.25bpw mirror of the Command A card (docs corpus: 111B, 256K supported, 128K configured); params: leaderboard request above; "
                f"layers/heads/KV: not read - 64 layers x 96 heads x 8 KV heads (tied 256000 vocab) is what reproduces 111.058B exactly ({HFCNT}: 111,057,580,032)")),
    {"layers": "UNVERIFIED in a config: derived from the exact 111.058B count with the read hidden/intermediate/head_dim",
     "attention_heads": "UNVERIFIED in a config: 96 x head_dim 128 = hidden 12288 (q projection square), as in Command R+",
     "kv_heads": "UNVERIFIED in a config: 8 is the only KV count consistent with 111.058B (16 would give 111.86B)",
     "vocab_size": "UNVERIFIED: 256000 as in every Command R release (the count assumes it)",
     "sliding_window": "window 4096 from Cohere2 configs of the family (Command A Translate, Command R7B); sliding_layers = 3/4 of 64"})

add(llm(id="falcon-7b", name="Falcon 7B", family="falcon", hf_id="tiiuae/falcon-7b-instruct", hf_ids=["tiiuae/falcon-7b"],
        aliases=["falcon:7b", "falcon", "falcon 7b", "falcon-7b", "falcon-7b-instruct", "tiiuae/falcon-7b", "tiiuae/falcon-7b-instruct"],
        params_b=6.922, params_source=f"{HFCNT} (FalconForCausalLM: multi_query, parallel_attn, tied head): 6,921,720,704; card '7B parameters'",
        layers=32, attention_heads=71, kv_heads=1, head_dim=64, hidden_size=4544, intermediate_size=18176, vocab_size=65024,
        tie_word_embeddings=None, context_max=2048, layer_pattern="multi-query attention (1 KV head), parallel attention + MLP with one shared LayerNorm",
        source=(f"config: {ALIGN_L2} name='falcon-7b{{}}' (links tiiuae/falcon-7b config.json: block_size 2048, vocab 65024, n_layer 32, n_head 71, n_embd 4544, n_query_groups 1, shared_attention_norm); github:RahulSChand/gpu_poor@ad2fc0e public/all_configs.json['tiiuae/falcon-7b'] (RWForCausalLM, 4544, 71 heads, 32 layers, 65024); params: arithmetic")),
    {"tie_word_embeddings": "UNVERIFIED: not a key in the trimmed copies; the count assumes the tied head of the RW/Falcon code (+0.30B if untied)",
     "intermediate_size": "not a config key: Falcon MLP is 4 x hidden", "head_dim": "4544 / 71"})
add(llm(id="falcon-40b", name="Falcon 40B", family="falcon", hf_id="tiiuae/falcon-40b-instruct", hf_ids=["tiiuae/falcon-40b"],
        aliases=["falcon:40b", "falcon-40b", "falcon-40b-instruct", "falcon 40b", "falcon 40b instruct", "tiiuae/falcon-40b", "tiiuae/falcon-40b-instruct"],
        params_b=41.303, params_source="config arithmetic 41,303,293,952 with tied head (shared/reference params_computed_b 41.303, 'tied-head lower bound'); card '40B parameters'",
        layers=60, attention_heads=128, kv_heads=8, head_dim=64, hidden_size=8192, intermediate_size=32768, vocab_size=65024,
        tie_word_embeddings=None, context_max=2048, layer_pattern="new_decoder_architecture: parallel attention + MLP, 8 KV groups",
        source=(f"config: {ALIGN_L2} name='falcon-40b{{}}' (n_query_groups 8, block_size 2048, bias False); github:RahulSChand/gpu_poor public/all_configs.json['tiiuae/falcon-40b']; params_total_b: code-index excerpt 24303298681 (tiiuae/falcon-40b README); via shared/reference/models.yaml")),
    {"tie_word_embeddings": "UNVERIFIED (shared/reference): +0.53B if untied", "intermediate_size": "4 x hidden (not a config key)"})
add(llm(id="falcon-180b", name="Falcon 180B", family="falcon", hf_id="tiiuae/falcon-180B-chat", hf_ids=["tiiuae/falcon-180B"],
        aliases=["falcon:180b", "falcon-180b", "falcon-180b-chat", "falcon 180b", "falcon 180b chat", "tiiuae/falcon-180b", "tiiuae/falcon-180b-chat"],
        params_b=178.557, params_source="config arithmetic 178,557,088,768 with tied head (shared/reference params_computed_b 178.557); card '180B parameters'",
        layers=80, attention_heads=232, kv_heads=8, head_dim=64, hidden_size=14848, intermediate_size=59392, vocab_size=65024,
        tie_word_embeddings=None, context_max=2048, layer_pattern="parallel attention/MLP with two layer norms (new_decoder_architecture), 8 KV groups",
        source=(f"config: code-index excerpt 47938588607 (falcon-180B README: 80 layers, d_model 14848, head_dim 64, vocab 65024, seq len 2048); code-index excerpt 5995251461 (TensorRT-LLM ckpt_config: 232 heads, 8 KV); {ALIGN_L2} name='falcon-180B{{}}'; via shared/reference/models.yaml")),
    {"tie_word_embeddings": "UNVERIFIED (shared/reference): +0.97B if untied", "intermediate_size": "4 x hidden (not a config key)"})
F3 = "docs corpus huggingface.co/tiiuae/Falcon3-7B-Instruct/blob/ca6ceed0f6d5852f44ac1fdf5f8403bccb4449c9/config.json (LlamaForCausalLM: head_dim 256, hidden 3072, intermediate 23040, max_position_embeddings 32768, 12 heads, 28 layers, 4 KV, rope 1000042, tie false, bf16, vocab 131072)"
add(llm(id="falcon3-7b", name="Falcon3 7B", family="falcon3", hf_id="tiiuae/Falcon3-7B-Instruct", hf_ids=["tiiuae/Falcon3-7B-Base"],
        aliases=["falcon3:7b", "falcon3", "falcon 3 7b", "falcon3-7b", "falcon3-7b-instruct", "falcon3-7b-base", "tiiuae/falcon3-7b-instruct", "tiiuae/falcon3-7b-base"],
        params_b=7.456, params_source="config arithmetic 7,455,550,464 (" + ARITH + ")",
        layers=28, attention_heads=12, kv_heads=4, head_dim=256, hidden_size=3072, intermediate_size=23040, vocab_size=131072,
        tie_word_embeddings=False, context_max=32768,
        source=f"config: {F3}; cross_check: {ALIGN_L2} name='Falcon3-7B{{}}' (block_size 32768, n_layer 28, n_head 12, n_query_groups 4, n_embd 3072, intermediate 23040, rope_base 1000042); params: arithmetic"))
add(llm(id="falcon3-10b", name="Falcon3 10B", family="falcon3", hf_id="tiiuae/Falcon3-10B-Instruct", hf_ids=["tiiuae/Falcon3-10B-Base"],
        aliases=["falcon3:10b", "falcon 3 10b", "falcon3-10b", "falcon3-10b-instruct", "falcon3-10b-base", "tiiuae/falcon3-10b-instruct", "tiiuae/falcon3-10b-base"],
        params_b=10.306, params_source="config arithmetic 10,305,653,760 (" + ARITH + ")",
        layers=40, attention_heads=12, kv_heads=4, head_dim=256, hidden_size=3072, intermediate_size=23040, vocab_size=131072,
        tie_word_embeddings=False, context_max=32768,
        source=(f"config: docs corpus huggingface.co/Daemontatox/RA_Reasoner/blob/4b784cb4/config.json (_name_or_path tiiuae/Falcon3-10B-Instruct: head_dim 256, 3072, 23040, max_position_embeddings 32768, 12 heads, 40 layers, 4 KV, rope 1000042, tie false, vocab 131072); {ALIGN_L2} name='Falcon3-10B{{}}' (n_layer 40, same widths); params: arithmetic")),
    {"layers": "depth up-scaled 7B: 40 layers of the same width"})

def yi(id_, name, hf, hf_ids, aliases, params, psrc, L, H, nq, nkv, I, ctx, src, note=None):
    e = llm(id=id_, name=name, family="yi" if id_ == "yi-34b" else "yi-1.5", hf_id=hf, hf_ids=hf_ids, aliases=aliases, params_b=params,
            params_source=psrc, layers=L, attention_heads=nq, kv_heads=nkv, head_dim=128, hidden_size=H, intermediate_size=I,
            vocab_size=64000, tie_word_embeddings=False, context_max=ctx, context_note="rope_theta 5e6", source=src)
    if note: e["context_note"] = note
    return e
add(yi("yi-34b", "Yi 34B", "01-ai/Yi-34B-Chat", ["01-ai/Yi-34B"], ["yi-34b", "yi 34b", "yi-34b-chat", "yi 34b chat", "01-ai/yi-34b", "01-ai/yi-34b-chat"],
       34.389, "config arithmetic 34,388,917,248 (shared/reference params_computed_b 34.389)", 60, 7168, 56, 8, 20480, 4096,
       "config: github:ThanatosShinji/onnx-tool@00f5f0a onnx_tool/model_configs.py yi_34B (HF config copy; via shared/reference/models.yaml); cross_check: https://apxml.com/models/yi-34b (pages corpus)"))
add(yi("yi-1.5-6b", "Yi-1.5 6B", "01-ai/Yi-1.5-6B-Chat", ["01-ai/Yi-1.5-6B"], ["yi:6b", "yi-1.5-6b", "yi 1.5 6b", "yi1.5 6b", "yi-1.5-6b-chat", "01-ai/yi-1.5-6b", "01-ai/yi-1.5-6b-chat"],
       6.061, "config arithmetic 6,061,035,520 (" + ARITH + ")", 32, 4096, 32, 4, 11008, 4096,
       "config: docs corpus huggingface.co/01-ai/Yi-1.5-6B-Chat/blob/dd86db5e101a25cc977f978735b4eaf5a9e5a5cf/config.json (LlamaForCausalLM: 4096, 11008, max_position_embeddings 4096, 32 heads, 32 layers, 4 KV, rope 5e6, tie false, bf16, vocab 64000); base: huggingface.co/hon9kon9ize/yi-1.5-6b-yue-vocab-expanded (_name_or_path 01-ai/Yi-1.5-6B, same layers); params: arithmetic"),
    {"aliases": "Ollama 'yi:6b' / 'yi:9b' / 'yi:34b' tags serve Yi-1.5 (not re-verified here)"})
add(yi("yi-1.5-9b", "Yi-1.5 9B", "01-ai/Yi-1.5-9B-Chat", ["01-ai/Yi-1.5-9B"], ["yi:9b", "yi-1.5-9b", "yi 1.5 9b", "yi1.5 9b", "yi-1.5-9b-chat", "01-ai/yi-1.5-9b", "01-ai/yi-1.5-9b-chat"],
       8.829, "config arithmetic 8,829,407,232 (" + ARITH + ")", 48, 4096, 32, 4, 11008, 4096,
       "config: docs corpus huggingface.co/01-ai/Yi-1.5-9B/blob/main/config.json (4096, 11008, max_position_embeddings 4096, 32 heads, 48 layers, 4 KV, rope 5e6, tie false, bf16, vocab 64000); chat: huggingface.co/fakezeta/Yi-1.5-9B-Chat-ov-int4 (_name_or_path 01-ai/Yi-1.5-9B-Chat, same); params: arithmetic"))
add(yi("yi-1.5-34b", "Yi-1.5 34B", "01-ai/Yi-1.5-34B-Chat", ["01-ai/Yi-1.5-34B", "01-ai/Yi-1.5-34B-32K"], ["yi:34b", "yi-1.5-34b", "yi 1.5 34b", "yi1.5 34b", "yi-1.5-34b-chat", "01-ai/yi-1.5-34b", "01-ai/yi-1.5-34b-chat"],
       34.389, "config arithmetic 34,388,917,248 (same shape as Yi-34B)", 60, 7168, 56, 8, 20480, 4096,
       "config: docs corpus huggingface.co/adamo1139/Yi-1.5-34B-base-mirror/blob/main/config.json (7168, 20480, max_position_embeddings 4096, 56 heads, 60 layers, 8 KV, rope 5e6, tie false, bf16, vocab 64000); 32K variant: huggingface.co/DazzlingXeno/Mystery-Magnum config (_name_or_path 01-ai/Yi-1.5-34B-32K: max_position_embeddings 32768, same shape); params: arithmetic",
       note="4096 for base/chat; the -32K repos set 32768"),
    {"hf_ids": "01-ai/Yi-1.5-34B-32K: same weights shape, context 32768"})

OLMO = f"{MLC} MODEL_PRESETS['olmo2_{{}}'] (Olmo2ForCausalLM: hidden {{}}, intermediate {{}}, max_position_embeddings 4096, {{}} heads, {{}} layers, {{}} KV, rope 5e5, tie false, torch_dtype float32, vocab 100352)"
def olmo(size, L, H, nq, nkv, I, p, hf, hf_ids, extra=""):
    return llm(id=f"olmo-2-{size}", name=f"OLMo 2 {size.upper()}", family="olmo-2", hf_id=hf, hf_ids=hf_ids,
               aliases=[f"olmo2:{size}", f"olmo2-{size}", f"olmo 2 {size}", f"olmo-2-{size}", f"olmo2 {size}", hf.lower()] + [x.lower() for x in hf_ids],
               params_b=p, params_source=f"{HFCNT} (Olmo2ForCausalLM incl. q/k RMSNorms): {int(round(p*1e9)):,}".replace(f"{int(round(p*1e9)):,}", {"7b": "7,298,617,344", "13b": "13,716,198,400", "32b": "32,234,279,936"}[size]),
               layers=L, attention_heads=nq, kv_heads=nkv, head_dim=128, hidden_size=H, intermediate_size=I, vocab_size=100352,
               tie_word_embeddings=False, context_max=4096, torch_dtype="float32",
               layer_pattern="all layers full attention; post-attention/post-MLP RMSNorm + q/k norm (OLMo 2)",
               source=f"config: {OLMO.format(size, H, I, nq, L, nkv)}" + extra + "; params: transformers count")
add(olmo("7b", 32, 4096, 32, 32, 11008, 7.299, "allenai/OLMo-2-1124-7B-Instruct", ["allenai/OLMo-2-1124-7B"],
         f"; {ALIGN_L2} name='OLMo-2-1124-7B{{}}' (vocab 100278 padded to 100352, block_size 4096, n_query_groups 32)"), {"kv_heads": "MHA"})
add(olmo("13b", 40, 5120, 40, 40, 13824, 13.716, "allenai/OLMo-2-1124-13B-Instruct", ["allenai/OLMo-2-1124-13B"],
         f"; {ALIGN_L2} name='OLMo-2-1124-13B{{}}' (block_size 4096, n_query_groups 40)"), {"kv_heads": "MHA"})
add(olmo("32b", 64, 5120, 40, 8, 27648, 32.234, "allenai/OLMo-2-0325-32B-Instruct", ["allenai/OLMo-2-0325-32B"]),
    {"kv_heads": "the 32B uses GQA (8 KV heads) while 7B/13B are MHA", "hf_id": "UNVERIFIED: repo name not read in a source (mlc preset is keyed 'olmo2_32b')"})

GRAN = "layer_pattern"
add(llm(id="granite-3.1-2b", name="Granite 3.1 2B", family="granite-3", hf_id="ibm-granite/granite-3.1-2b-instruct", hf_ids=["ibm-granite/granite-3.1-2b-base"],
        aliases=["granite3.1-dense:2b", "granite 3.1 2b", "granite-3.1-2b", "granite-3.1-2b-instruct", "ibm-granite/granite-3.1-2b-instruct"],
        params_b=2.534, params_source=f"{HFCNT} (GraniteForCausalLM, tied): 2,533,531,648",
        layers=40, attention_heads=32, kv_heads=8, head_dim=64, hidden_size=2048, intermediate_size=8192, vocab_size=49155,
        tie_word_embeddings=True, context_max=131072, context_note="rope_theta 5e6",
        source="config: docs corpus huggingface.co/SpaceYL/Engine_Finetuned_V1/blob/main/config.json and huggingface.co/NikIman1/companio_test (both _name_or_path ibm-granite/granite-3.1-2b-instruct: GraniteForCausalLM, 2048, 8192, max_position_embeddings 131072, 32 heads, 40 layers, 8 KV, rope 5e6, tie true, bf16, vocab 49155); params: transformers count"))
add(llm(id="granite-3.1-8b", name="Granite 3.1 8B", family="granite-3", hf_id="ibm-granite/granite-3.1-8b-instruct", hf_ids=["ibm-granite/granite-3.1-8b-base"],
        aliases=["granite3.1-dense:8b", "granite3.1-dense", "granite 3.1 8b", "granite-3.1-8b", "granite-3.1-8b-instruct", "ibm-granite/granite-3.1-8b-instruct"],
        params_b=8.171, params_source=f"{HFCNT} (GraniteForCausalLM, tied): 8,170,848,256",
        layers=40, attention_heads=32, kv_heads=8, head_dim=128, hidden_size=4096, intermediate_size=12800, vocab_size=49155,
        tie_word_embeddings=True, context_max=131072, context_note="rope_theta 1e7",
        source="config: docs corpus huggingface.co/huihui-ai/granite-3.2-8b-instruct-abliterated/blob/main/config.json (Granite 3.2 8B, which IBM built on 3.1 8B: 4096, 12800, max_position_embeddings 131072, 32 heads, 40 layers, 8 KV, rope 1e7, tie true, bf16, vocab 49155); 3.0 8B has the same widths with 4096 context (huggingface.co/rh-rad-ai-roadshow/parasol-chat commit, _name_or_path ibm-granite/granite-3.0-8b-instruct); params: transformers count"),
    {"source": None, "layers": "read from a granite-3.2-8b copy (3.1-8b config itself not found; same architecture family)"})
add(llm(id="granite-3.3-8b", name="Granite 3.3 8B", family="granite-3", hf_id="ibm-granite/granite-3.3-8b-instruct", hf_ids=["ibm-granite/granite-3.3-8b-base"],
        aliases=["granite3.3:8b", "granite3.3", "granite 3.3 8b", "granite-3.3-8b", "granite-3.3-8b-instruct", "ibm-granite/granite-3.3-8b-instruct"],
        params_b=8.171, params_source="UNVERIFIED: assumes the Granite 3.1/3.2 8B shape (8,170,848,256)",
        layers=40, attention_heads=32, kv_heads=8, head_dim=128, hidden_size=4096, intermediate_size=12800, vocab_size=None,
        tie_word_embeddings=True, context_max=131072,
        source="UNVERIFIED: no granite-3.3-8b config found (docs and code searches returned only 3.0/3.1/3.2 configs); values copied from granite-3.1-8b"),
    {"layers": "UNVERIFIED: assumed = granite 3.1/3.2 8B", "kv_heads": "UNVERIFIED: assumed = granite 3.1/3.2 8B",
     "vocab_size": "UNVERIFIED: 3.3 added tokens (think/response tags); exact vocab not read", "context_max": "UNVERIFIED: assumed 131072 as 3.1"})
