from data1 import add, ENTRIES, ALIGN_L2, MLC, AIC, KERAS, ARITH, HFCNT

def mistral(**kw):
    base = dict(family="mistral", kind="llm", tie_word_embeddings=False, torch_dtype="bfloat16", sliding_window=None,
                sliding_layers=0, layer_pattern="all layers full attention", mla=None, experts=None, vision_params_b=None,
                published_weights=None)
    base.update(kw)
    base.setdefault("active_params_b", base["params_b"])
    return base

add(mistral(id="mistral-7b", name="Mistral 7B (v0.1)", hf_id="mistralai/Mistral-7B-Instruct-v0.1", hf_ids=["mistralai/Mistral-7B-v0.1"],
            aliases=["mistral-7b", "mistral 7b", "mistral-7b-v0.1", "mistral 7b v0.1", "mistral:7b-v0.1", "mistral-7b-instruct-v0.1",
                     "mistralai/mistral-7b-v0.1", "mistralai/mistral-7b-instruct-v0.1", "mistral7b"],
            params_b=7.242, params_source="keras-hub mistral_7b_en / mistral_instruct_7b_en params 7241732096 (= config arithmetic); announcement '7.3B'",
            layers=32, attention_heads=32, kv_heads=8, head_dim=128, hidden_size=4096, intermediate_size=14336, vocab_size=32000,
            context_max=32768, context_note="rope_theta 10000; the 4096 window caps the cache", sliding_window=4096, sliding_layers=32,
            layer_pattern="sliding-window (4096) attention on every layer (rolling-buffer cache)",
            source=(f"config: code-index excerpt 68824890106 (verbatim JSON labelled https://huggingface.co/mistralai/Mistral-7B-v0.1/blob/main/config.json; via shared/reference/models.yaml); cross_check: {MLC} MODEL_PRESETS['mistral_7b']; {ALIGN_L2} name='Mistral-7B-{{}}v0.1' (sliding_window_size 4096); docs corpus huggingface.co/Capstone-lpx/mistral7b_instruct (Duplicate from mistralai/Mistral-7B-Instruct-v0.1: sliding_window 4096, tie false, vocab 32000, bf16); params: {KERAS}/mistral/mistral_presets.py mistral_7b_en 7241732096; code-index excerpt 28680071223 ('Mistral 7B is a 7.3B parameter model')")))
add(mistral(id="mistral-7b-v0.2", name="Mistral 7B v0.2", hf_id="mistralai/Mistral-7B-Instruct-v0.2", hf_ids=["mistral-community/Mistral-7B-v0.2"],
            aliases=["mistral-7b-v0.2", "mistral 7b v0.2", "mistral:7b-instruct-v0.2", "mistral-7b-instruct-v0.2", "mistral 7b instruct v0.2",
                     "mistralai/mistral-7b-instruct-v0.2"],
            params_b=7.242, params_source="keras-hub mistral_0.2_instruct_7b_en params 7241732096",
            layers=32, attention_heads=32, kv_heads=8, head_dim=128, hidden_size=4096, intermediate_size=14336, vocab_size=32000,
            context_max=32768, context_note="rope_theta 1e6, no sliding window (card: 'No Sliding-Window Attention')",
            source=(f"config: docs corpus huggingface.co/hiranb/mistralonnx/blob/10b6c0e3/config.json (_name_or_path mistralai/Mistral-7B-Instruct-v0.2: sliding_window null, rope 1e6, tie false, bf16, vocab 32000; via registry); cross_check: {ALIGN_L2} name='Mistral-7B-Instruct-v0.2' (block_size 32768, no sliding_window_size); github:Azure/azureml-assets Mistral-7B-Instruct-v0-2/description.md (card text); params: {KERAS}/mistral/mistral_presets.py mistral_0.2_instruct_7b_en 7241732096")),
    {"hf_ids": "the v0.2 base weights were published by Mistral as a raw download; mistral-community/Mistral-7B-v0.2 is the HF conversion (its config sets sliding_window 32768 = max_position_embeddings, i.e. no cap)"})
add(mistral(id="mistral-7b-v0.3", name="Mistral 7B v0.3", hf_id="mistralai/Mistral-7B-Instruct-v0.3", hf_ids=["mistralai/Mistral-7B-v0.3"],
            aliases=["mistral-7b-v0.3", "mistral 7b v0.3", "mistral:7b", "mistral:7b-v0.3", "mistral", "mistral-7b-instruct-v0.3",
                     "mistral 7b instruct v0.3", "mistralai/mistral-7b-v0.3", "mistralai/mistral-7b-instruct-v0.3"],
            params_b=7.248, params_source="keras-hub mistral_0.3_7b_en / mistral_0.3_instruct_7b_en params 7248023552 (= config arithmetic)",
            layers=32, attention_heads=32, kv_heads=8, head_dim=128, hidden_size=4096, intermediate_size=14336, vocab_size=32768,
            context_max=32768, context_note="rope_theta 1e6, sliding_window null",
            source=(f"config: {MLC} MODEL_PRESETS['mistral_7b_v03'] (HF config copy; via shared/reference/models.yaml); cross_check: {ALIGN_L2} name='Mistral-7B-v0.3' / 'Mistral-7B-Instruct-v0.3' (padded_vocab 32768, block_size 32768); docs corpus huggingface.co/leafspark/Mistral-7B-v0.3/blob/main/params.json (dim 4096, 32 layers, hidden 14336, 32/8 heads, vocab 32768, rope 1e6); params: {KERAS}/mistral/mistral_presets.py mistral_0.3_7b_en 7248023552")),
    {"aliases": "Ollama's plain 'mistral' / 'mistral:7b' tag points at v0.3 (not re-verified here)"})
add(mistral(id="mistral-nemo-12b", name="Mistral NeMo 12B (2407)", hf_id="mistralai/Mistral-Nemo-Instruct-2407", hf_ids=["mistralai/Mistral-Nemo-Base-2407"],
            aliases=["mistral-nemo:12b", "mistral-nemo", "mistral nemo", "mistral nemo 12b", "mistral-nemo-12b", "mistral-nemo-2407",
                     "mistral-nemo-instruct-2407", "mistral-nemo-base-2407", "mistralai/mistral-nemo-instruct-2407", "mistralai/mistral-nemo-base-2407",
                     "nemo 12b", "nemo-12b"],
            params_b=12.248, params_source="config arithmetic 12,247,782,400 (untied head; " + ARITH + "); Mistral docs '12B parameters'",
            layers=40, attention_heads=32, kv_heads=8, head_dim=128, hidden_size=5120, intermediate_size=14336, vocab_size=131072,
            context_max=131072, context_note="Instruct-2407 config now says 131072 (fine-tunes saved with transformers >= 4.46 carry 131072, older ones 1,024,000); Base-2407 keeps 1,024,000; card: 128k",
            source=("config: docs corpus huggingface.co/riple-saanvi-lab/Saanvi-C0-12B/blob/main/config.json and huggingface.co/sleepdeprived3/Reformed-Christian-Bible-Expert-v1.1-12B (both _name_or_path mistralai/Mistral-Nemo-Instruct-2407: MistralForCausalLM, head_dim 128, 5120, 14336, max_position_embeddings 131072, 32 heads, 40 layers, 8 KV, rope 1e6, sliding_window null, tie false, bf16, vocab 131072); "
                    "older copies huggingface.co/arushimgupta/final_checkpoint_dpo5 (_name_or_path mistralai/Mistral-Nemo-Instruct-2407, transformers 4.45.1) and huggingface.co/migtissera/Tess-3-Mistral-Nemo-12B (_name_or_path mistralai/Mistral-Nemo-Base-2407) say 1024000; "
                    "params.json copy huggingface.co/bigstorm/Mistral-Nemo-Base-2407-8.0bpw-8hb-exl2 (same dims); registry sources (nvidia/Mistral-NeMo-12B-Instruct README; code-index 261890981, 224192540, 3874440882); params: arithmetic; https://docs.mistral.ai/models/mistral-nemo-12b-24-07.md '12B parameters'")),
    {"context_max": "131072 for the Instruct repo (current config); use 1,024,000 only if the base config is what the user loads"})
add(mistral(id="pixtral-12b", name="Pixtral 12B (2409)", kind="vlm", hf_id="mistralai/Pixtral-12B-2409", hf_ids=["mistral-community/pixtral-12b", "mistralai/Pixtral-12B-Base-2409"],
            aliases=["pixtral", "pixtral 12b", "pixtral-12b", "pixtral-12b-2409", "mistralai/pixtral-12b-2409", "mistral-community/pixtral-12b"],
            params_b=12.683, params_source=f"{HFCNT}: 12,682,739,712 (LlavaForConditionalGeneration with the mistral-community config; Pixtral vision defaults 1024 hidden/24 layers/16 heads/4096 MLP)",
            layers=40, attention_heads=32, kv_heads=8, head_dim=128, hidden_size=5120, intermediate_size=14336, vocab_size=131072,
            context_max=1024000, context_note="text_config max_position_embeddings 1,024,000 (same LM as NeMo; card: 128k)",
            vision_params_b=0.435,
            source=(f"config: docs corpus huggingface.co/tbmod/pixtral-12b/blob/main/config.json ('Duplicate from mistral-community/pixtral-12b': LlavaForConditionalGeneration; text hidden 5120, head_dim 128, 14336, max_position_embeddings 1024000, 40 layers, 8 KV, rope 1e9, sliding_window null, vocab 131072; vision pixtral head_dim 64, image_size 1024, patch_size 16); num_attention_heads 32 from huggingface.co/varb15/hf-internal-testing-pixtral-12b config; commit history huggingface.co/mistral-community/pixtral-12b/commits/.../config.json; params/vision: {HFCNT} (vision tower + projector 434,957,312)")),
    {"vision_params_b": "vision hidden/layers/heads are PixtralVisionConfig defaults (the config lists only the overrides)",
     "hf_id": "mistralai/Pixtral-12B-2409 ships Mistral-format weights (consolidated.safetensors); mistral-community/pixtral-12b is the transformers conversion"})
add(mistral(id="mistral-small-2409", name="Mistral Small 22B (2409)", hf_id="mistralai/Mistral-Small-Instruct-2409", hf_ids=[],
            aliases=["mistral-small:22b", "mistral small 22b", "mistral-small-22b", "mistral-small-2409", "mistral small 2409",
                     "mistral-small-instruct-2409", "mistralai/mistral-small-instruct-2409"],
            params_b=22.247, params_source="config arithmetic 22,247,282,688 (" + ARITH + ")",
            layers=56, attention_heads=48, kv_heads=8, head_dim=128, hidden_size=6144, intermediate_size=16384, vocab_size=32768,
            context_max=32768, context_note="rope_theta 1e6",
            source=("config: docs corpus huggingface.co/minchyeom/letta/blob/main/config.json (_name_or_path mistralai/Mistral-Small-Instruct-2409: MistralForCausalLM, head_dim 128, hidden 6144, intermediate 16384, max_position_embeddings 32768, 48 heads, 56 layers, 8 KV, rope 1e6, sliding_window null, tie false, vocab 32768); "
                    "params.json copy huggingface.co/Sicarius-Prototyping/Mistral-Small-Instruct-2409/blob/main/params.json (dim 6144, 56 layers, 48/8 heads, hidden_dim 16384, vocab 32768); params: arithmetic")),
    {"torch_dtype": "the fine-tune copy read says float16; Mistral releases are bf16 (UNVERIFIED for this repo)"})
add(mistral(id="mistral-small-24b", name="Mistral Small 3 24B (2501)", hf_id="mistralai/Mistral-Small-24B-Instruct-2501", hf_ids=["mistralai/Mistral-Small-24B-Base-2501"],
            aliases=["mistral-small:24b", "mistral-small-24b", "mistral small 24b", "mistral small 3", "mistral-small-3", "mistral-small-2501",
                     "mistral-small-24b-instruct-2501", "mistral-small-24b-base-2501", "mistralai/mistral-small-24b-instruct-2501",
                     "mistralai/mistral-small-24b-base-2501"],
            params_b=23.572, params_source="config arithmetic 23,572,403,200 (= keras-hub magistral_small_2506_en, same text shape); card '24B parameters'",
            layers=40, attention_heads=32, kv_heads=8, head_dim=128, hidden_size=5120, intermediate_size=32768, vocab_size=131072,
            context_max=32768, context_note="rope_theta 1e8; card: 32k",
            source=("config: registry / shared/reference/models.yaml (code-index excerpts 59090948446, 55600701583: explicit head_dim 128, 40 layers, 32/8 heads, 32768, vocab 131072, max_position_embeddings 32768, rope 1e8); "
                    f"params_total_b: code-index excerpt 4646356041 (Mistral-Small-24B-Instruct-2501 card); params exact: arithmetic = {KERAS}/mistral/mistral_presets.py magistral_small_2506_en 23572403200")),
    {"head_dim": "explicit 128; hidden/heads would give 160"})
MS31_SRC = ("docs corpus huggingface.co/mistralai/Mistral-Small-3.1-24B-Instruct-2503/blob/main/config.json (Mistral3ForConditionalGeneration; text_config head_dim 128, hidden 5120, intermediate 32768, max_position_embeddings 131072, 32 heads, 40 layers, 8 KV, rope 1e9, sliding_window null, vocab 131072; vision_config pixtral hidden 1024, head_dim 64, image_size 1540; bf16); "
            "vision layers/heads/MLP: huggingface.co/AIPrep/gem-mid-ckpt config (Mistral3: vision 24 layers, 16 heads, 4096 intermediate, patch 14; text tie false)")
add(mistral(id="mistral-small-3.1", name="Mistral Small 3.1 24B (2503)", kind="vlm", hf_id="mistralai/Mistral-Small-3.1-24B-Instruct-2503",
            hf_ids=["mistralai/Mistral-Small-3.1-24B-Base-2503"],
            aliases=["mistral-small3.1:24b", "mistral-small3.1", "mistral small 3.1", "mistral-small-3.1", "mistral-small-2503",
                     "mistral-small-3.1-24b-instruct-2503", "mistralai/mistral-small-3.1-24b-instruct-2503", "mistralai/mistral-small-3.1-24b-base-2503"],
            params_b=24.011, params_source=f"text arithmetic 23,572,403,200 (untied) + vision/projector 438,958,080 ({HFCNT}); card 'With 24 billion parameters'",
            layers=40, attention_heads=32, kv_heads=8, head_dim=128, hidden_size=5120, intermediate_size=32768, vocab_size=131072,
            context_max=131072, context_note="card: 128k context window", vision_params_b=0.439,
            source=f"config: {MS31_SRC}; card huggingface.co/mistralai/Mistral-Small-3.1-24B-Base-2503 ('24 billion parameters', 'A 128k context window', 'Tekken tokenizer with a 131k vocabulary'); params: arithmetic"))
add(mistral(id="mistral-small-3.2", name="Mistral Small 3.2 24B (2506)", kind="vlm", hf_id="mistralai/Mistral-Small-3.2-24B-Instruct-2506", hf_ids=[],
            aliases=["mistral-small3.2:24b", "mistral-small3.2", "mistral small 3.2", "mistral-small-3.2", "mistral-small-2506",
                     "mistral-small-3.2-24b-instruct-2506", "mistralai/mistral-small-3.2-24b-instruct-2506"],
            params_b=24.011, params_source="as Mistral Small 3.1 (text shape read from a 3.2 text-only copy; vision part assumed unchanged)",
            layers=40, attention_heads=32, kv_heads=8, head_dim=128, hidden_size=5120, intermediate_size=32768, vocab_size=131072,
            context_max=131072, vision_params_b=0.439,
            source=("config: docs corpus huggingface.co/darkc0de/3.2test/blob/main/config.json ('Duplicate from arnomatic/Mistral-Small-3.2-24B-Instruct-2506-Text-Only-heretic': 5120, 32768, max_position_embeddings 131072, 32/8 heads, 40 layers, rope 1e9, tie false, vocab 131072); "
                    "code-index 52225735317 (Torch-Spyre utils labelled Mistral-Small-3.2 config) was NOT used: its values (MistralForCausalLM, 32768 positions, rope 1e8) are those of 2501")),
    {"vision_params_b": "UNVERIFIED: the 2506 vision_config was not read; 3.1 value assumed",
     "params_b": "UNVERIFIED beyond the text part: assumes the 3.1 vision tower"})
add(mistral(id="mistral-large-2", name="Mistral Large 2 123B (2407 / 2411)", hf_id="mistralai/Mistral-Large-Instruct-2407", hf_ids=["mistralai/Mistral-Large-Instruct-2411"],
            aliases=["mistral-large:123b", "mistral-large", "mistral large 2", "mistral-large-2", "mistral-large2", "mistral-large-2407",
                     "mistral-large-2411", "mistral large 2411", "mistral-large-instruct-2407", "mistral-large-instruct-2411",
                     "mistralai/mistral-large-instruct-2407", "mistralai/mistral-large-instruct-2411", "mistral large 123b", "mistral-large-123b"],
            params_b=122.610, params_source="config arithmetic 122,610,069,504 assuming an untied head (shared/reference params_computed_b 122.61); card '123B parameters'",
            layers=88, attention_heads=96, kv_heads=8, head_dim=128, hidden_size=12288, intermediate_size=28672, vocab_size=32768,
            tie_word_embeddings=None, context_max=131072,
            context_note="2407 config shipped max_position_embeddings 32768 and was corrected to 131072 (HF commit 5c9ce5b5); litgpt still lists 32768 for both 2407 and 2411",
            source=(f"config: {ALIGN_L2} name='Mistral-Large-Instruct-2407' and 'Mistral-Large-Instruct-2411' (identical: 88 layers, 96 heads, 12288, 8 query groups, 28672, vocab 32768, rope 1e6); code-index excerpt 69577338197 (config dict 12288/28672/88/96/8/32768; via shared/reference/models.yaml); "
                    "context: docs corpus huggingface.co/casperhansen/mistral-large-instruct-2407-awq/commit/1b91a828 ('Correct max_position_embeddings (32k -> 128k)', citing huggingface.co/mistralai/Mistral-Large-Instruct-2407/commit/5c9ce5b5f7a7ad62d03e8c66c719b66d586de26b: 32768 -> 131072); params_total_b: code-index excerpt 20069420423 (2407 card '123B')")),
    {"tie_word_embeddings": "UNVERIFIED: not in the sources read (shared/reference also UNVERIFIED)",
     "hf_ids": "2411 shape-identical per litgpt; its max_position_embeddings was not read (UNVERIFIED for 2411)"})
add(mistral(id="mixtral-8x7b", name="Mixtral 8x7B", hf_id="mistralai/Mixtral-8x7B-Instruct-v0.1", hf_ids=["mistralai/Mixtral-8x7B-v0.1"],
            aliases=["mixtral:8x7b", "mixtral", "mixtral 8x7b", "mixtral-8x7b", "mixtral-8x7b-instruct", "mixtral-8x7b-v0.1",
                     "mixtral-8x7b-instruct-v0.1", "mistralai/mixtral-8x7b-v0.1", "mistralai/mixtral-8x7b-instruct-v0.1"],
            params_b=46.703, params_source="keras-hub mixtral_8_7b_en params 46702792704 (= config arithmetic); Mistral blog '46.7B total ... 12.9B per token'",
            active_params_b=12.9, layers=32, attention_heads=32, kv_heads=8, head_dim=128, hidden_size=4096, intermediate_size=14336,
            vocab_size=32000, context_max=32768, context_note="rope_theta 1e6",
            experts={"total": 8, "active": 2, "shared": 0, "moe_intermediate_size": 14336},
            source=(f"config: {AIC}/mistralai--Mixtral-8x7B-v0.1_config.json (verbatim HF config copy; via shared/reference/models.yaml); {ALIGN_L2} name='Mixtral-8x7B-{{}}v0.1' (n_expert 8, n_expert_per_token 2); params: {KERAS}/mixtral/mixtral_presets.py mixtral_8_7b_en 46702792704; code-index excerpt 58329954303 (Mistral blog quote 46.7B / 12.9B); active arithmetic 12.88B")))
add(mistral(id="mixtral-8x22b", name="Mixtral 8x22B", hf_id="mistralai/Mixtral-8x22B-Instruct-v0.1", hf_ids=["mistralai/Mixtral-8x22B-v0.1"],
            aliases=["mixtral:8x22b", "mixtral 8x22b", "mixtral-8x22b", "mixtral-8x22b-instruct", "mixtral-8x22b-v0.1",
                     "mixtral-8x22b-instruct-v0.1", "mistralai/mixtral-8x22b-v0.1", "mistralai/mixtral-8x22b-instruct-v0.1"],
            params_b=140.621, params_source="config arithmetic 140,620,634,112 for the base (vocab 32000); Instruct (vocab 32768) 140,630,071,296; Mistral: '39B active parameters out of 141B'",
            active_params_b=39, layers=56, attention_heads=48, kv_heads=8, head_dim=128, hidden_size=6144, intermediate_size=16384,
            vocab_size=32000, context_max=65536, context_note="rope_theta 1e6",
            experts={"total": 8, "active": 2, "shared": 0, "moe_intermediate_size": 16384},
            source=(f"config: {AIC}/mistralai--Mixtral-8x22B-v0.1_config.json (verbatim HF config copy, vocab 32000; via shared/reference/models.yaml); {ALIGN_L2} name='Mixtral-8x22B-{{}}v0.1' built from the Instruct config (padded_vocab_size 32768, block_size 65536); params: code-index excerpt 10988320416 ('39B active parameters out of 141B'); arithmetic")),
    {"vocab_size": "base 32000; the Instruct-v0.1 config has 32768 (litgpt) - 0.01B difference"})
add(mistral(id="ministral-8b", name="Ministral 8B (2410)", hf_id="mistralai/Ministral-8B-Instruct-2410", hf_ids=[],
            aliases=["ministral 8b", "ministral-8b", "ministral-8b-2410", "ministral-8b-instruct-2410", "mistralai/ministral-8b-instruct-2410", "ministral"],
            params_b=8.020, params_source="config arithmetic 8,019,808,256 (" + ARITH + ")",
            layers=36, attention_heads=32, kv_heads=8, head_dim=128, hidden_size=4096, intermediate_size=12288, vocab_size=131072,
            context_max=32768, context_note="HF config max_position_embeddings 32768 with sliding_window 32768; Mistral advertises 128k with interleaved sliding-window attention (vLLM/mistral format only)",
            sliding_window=None, sliding_layers=0,
            layer_pattern="HF config: sliding_window 32768 on all layers (= max_position_embeddings, never caps)",
            source=("config: docs corpus huggingface.co/rivaon/sydney/blob/main/config.json and huggingface.co/Spestly/Ava-1.0-8B/blob/aca72869/config.json (both _name_or_path mistralai/Ministral-8B-Instruct-2410: MistralForCausalLM, head_dim 128, hidden 4096, intermediate 12288, max_position_embeddings 32768, 32 heads, 36 layers, 8 KV, rope 1e8, sliding_window 32768, tie false, vocab 131072, bf16); params: arithmetic")),
    {"sliding_window": "config value 32768 equals max_position_embeddings, so it never caps the cache; the interleaved 128k pattern is not expressed in the HF config"})
add(mistral(id="codestral-22b", name="Codestral 22B (v0.1)", hf_id="mistralai/Codestral-22B-v0.1", hf_ids=[],
            aliases=["codestral:22b", "codestral", "codestral 22b", "codestral-22b", "codestral-22b-v0.1", "mistralai/codestral-22b-v0.1"],
            params_b=22.247, params_source="config arithmetic 22,247,282,688 (same shape as Mistral-Small-Instruct-2409), untied head assumed",
            layers=56, attention_heads=48, kv_heads=8, head_dim=128, hidden_size=6144, intermediate_size=16384, vocab_size=32768,
            tie_word_embeddings=None, context_max=None,
            source=("config: docs corpus huggingface.co/bigstorm/Codestral-22B-v0.1-8.0bpw-8hb-exl2/blob/690d00ea/params.json (copy of the Mistral-format params.json: dim 6144, n_layers 56, head_dim 128, hidden_dim 16384, n_heads 48, n_kv_heads 8, vocab 32768, rope 1e6); params: arithmetic")),
    {"context_max": "UNVERIFIED: params.json has no max_seq_len and the HF config was not read (card: 32k)",
     "tie_word_embeddings": "UNVERIFIED: no tie key in params.json"})
DEV = "text shape of Mistral Small 3.1 (Devstral is a fine-tune of it)"
add(mistral(id="devstral-small", name="Devstral Small 24B (2505 / 2507)", hf_id="mistralai/Devstral-Small-2507", hf_ids=["mistralai/Devstral-Small-2505"],
            aliases=["devstral:24b", "devstral", "devstral small", "devstral-small", "devstral-small-2505", "devstral-small-2507",
                     "devstral small 1.1", "devstral-small-1.1", "mistralai/devstral-small-2505", "mistralai/devstral-small-2507"],
            params_b=23.572, params_source="UNVERIFIED: assumes the text-only Mistral Small 3.1 shape (23,572,403,200); no Devstral config or count was read",
            layers=40, attention_heads=32, kv_heads=8, head_dim=128, hidden_size=5120, intermediate_size=32768, vocab_size=131072,
            context_max=None,
            source=("UNVERIFIED shape: no Devstral config found (docs search for Devstral-Small-2505 config.json returned only unrelated Mistral configs); "
                    "docs corpus huggingface.co/ngxson/Devstral-Small-Vision-2505-GGUF ('The vision encoder is taken from Mistral Small' - i.e. Devstral ships without one); shape taken from mistral-small-3.1 text_config")),
    {"layers": "UNVERIFIED: " + DEV, "attention_heads": "UNVERIFIED: " + DEV, "kv_heads": "UNVERIFIED: " + DEV,
     "context_max": "UNVERIFIED: not read (card: 128k)"})
add(mistral(id="magistral-small", name="Magistral Small 24B (2506 / 2507)", hf_id="mistralai/Magistral-Small-2507", hf_ids=["mistralai/Magistral-Small-2506", "mistralai/Magistral-Small-2509"],
            aliases=["magistral:24b", "magistral", "magistral small", "magistral-small", "magistral-small-2506", "magistral-small-2507",
                     "mistralai/magistral-small-2506", "mistralai/magistral-small-2507"],
            params_b=23.572, params_source="keras-hub mistral_presets magistral_small_2506_en and magistral_small_2507_en params 23572403200 (= Mistral Small 24B text arithmetic)",
            layers=40, attention_heads=32, kv_heads=8, head_dim=128, hidden_size=5120, intermediate_size=32768, vocab_size=131072,
            context_max=None,
            source=(f"params: {KERAS}/mistral/mistral_presets.py ('Magistral Small 2506 model' / '2507' params 23572403200, converted with the Mistral backbone); the count equals the 40-layer/5120/32768/131072-vocab text arithmetic exactly, which pins the shape to Mistral Small 3.x text; config.json not read")),
    {"context_max": "UNVERIFIED: Magistral config not found in the docs corpus",
     "hf_ids": "2509 added a vision encoder (UNVERIFIED); 2506/2507 are text-only per the keras-hub count",
     "layers": "shape inferred from the exact keras-hub parameter count (not from a config)"})
