# Meta entries
from common import *

ENTRIES = []
def add(e, c=None): ENTRIES.append((e, c or {}))

ALIGN_L2 = "github:Lightning-AI/litgpt@26857050 litgpt/config.py"
MLC = "github:mlc-ai/mlc-llm@79d603f0 python/mlc_llm/model/model_preset.py"
AIC = "github:ai-dynamo/aiconfigurator@095f58a51 aic-core/src/aiconfigurator_core/model_configs"
KERAS = "github:keras-team/keras-hub@71453d08f keras_hub/src/models"
SKU = "github:meta-llama/llama-models@ab8f592c llama_models/sku_list.py"
CARDS = "github:meta-llama/llama-models@a9c89c4 models"
ARITH = "embeddings + attention + MLP + norms, head counted once if tied; the formula reproduces keras-hub exact counts for Llama-2-7B, Llama-3-8B, Mistral-7B, Phi-3-mini, Mixtral-8x7B, Magistral-Small"

def llama2(size, L, H, nq, nkv, I, params, psrc, ctx_note=None):
    hid = f"meta-llama/Llama-2-{size}-chat-hf"
    e = dict(id=f"llama-2-{size}", name=f"Llama 2 {size.upper()}", family="llama-2", kind="llm", hf_id=hid,
             hf_ids=[f"meta-llama/Llama-2-{size}-hf"],
             aliases=[f"llama2:{size}", f"llama2-{size}", f"llama 2 {size}", f"llama-2-{size}", f"llama-2-{size}-chat",
                      f"llama2 {size} chat", f"meta-llama/llama-2-{size}-hf", f"meta-llama/llama-2-{size}-chat-hf"],
             params_b=params, params_source=psrc, active_params_b=params, layers=L, attention_heads=nq, kv_heads=nkv,
             head_dim=128, hidden_size=H, intermediate_size=I, vocab_size=32000, tie_word_embeddings=False,
             context_max=4096, torch_dtype="float16", sliding_window=None, sliding_layers=0,
             layer_pattern="all layers full attention", mla=None, experts=None, vision_params_b=None, published_weights=None,
             source=(f"config: {AIC.split('@')[0]}, git history commit 38028ec80: src/aiconfigurator/model_configs/"
                     f"meta-llama--Llama-2-{size}-hf_config.json (verbatim HF config.json copy; via shared/reference/models.yaml);"
                     f" cross_check: {ALIGN_L2} name='Llama-2-{size}{{}}-hf' (n_layer {L}, intermediate {I}, vocab 32000);"
                     f" code-index excerpt 5379367949 (Llama-2 table, same L/D/F/H/G/V/Tie); card: {CARDS}/llama2/MODEL_CARD.md"
                     f" ('Params {size.upper()} | Context Length 4k | GQA {'yes' if nkv < nq else 'no'}'); params: {psrc}"))
    c = {}
    if size == "7b":
        c["kv_heads"] = "MHA: the llama-models sku_list entry that says n_kv_heads 8 for Llama 2 7B/13B is wrong (card: GQA only for 70B)"
    return e, c

add(*llama2("7b", 32, 4096, 32, 32, 11008, 6.738, "keras-hub llama2_7b_en params 6738415616 (= config arithmetic)"))
add(*llama2("13b", 40, 5120, 40, 40, 13824, 13.016, "config arithmetic 13,015,864,320 (" + ARITH + ")"))
add(*llama2("70b", 80, 8192, 64, 8, 28672, 68.977, "config arithmetic 68,976,648,192 (" + ARITH + ")"))

def llama3(ver, size, L, H, nq, nkv, I, params, psrc, ctx, rope, src, extra_alias=(), hf=None, hf_ids=None, name=None):
    vid = ver.replace(" ", "")
    e = dict(id=f"llama-{ver}-{size}", name=name or f"Llama {ver} {size.upper()}", family=f"llama-{ver}", kind="llm",
             hf_id=hf, hf_ids=hf_ids or [],
             aliases=[f"llama{vid}:{size}", f"llama{vid}-{size}", f"llama {ver} {size}", f"llama-{ver}-{size}",
                      f"llama-{ver}-{size}-instruct", f"llama{vid} {size} instruct", f"meta-llama-{ver}-{size}",
                      (hf or "").lower()] + [x.lower() for x in (hf_ids or [])] + list(extra_alias),
             params_b=params, params_source=psrc, active_params_b=params, layers=L, attention_heads=nq, kv_heads=nkv,
             head_dim=H // nq if H // nq != 64 or size != "1b" else 64, hidden_size=H, intermediate_size=I,
             vocab_size=128256, tie_word_embeddings=size in ("1b", "3b"), context_max=ctx, context_note=rope,
             torch_dtype="bfloat16", sliding_window=None, sliding_layers=0, layer_pattern="all layers full attention",
             mla=None, experts=None, vision_params_b=None, published_weights=None, source=src)
    return e

add(llama3("3", "8b", 32, 4096, 32, 8, 14336, 8.030, "keras-hub llama3_presets llama3_8b_en params 8030261248 (= config arithmetic)",
           8192, "8k (no rope_scaling; rope_theta 500000)",
           f"config: {MLC} 'llama3_8b' (commented HF config copy: 32 layers, 4096, 32/8 heads, 14336, max_position_embeddings 8192, rope 500000, vocab 128256; via registry); {ALIGN_L2} name='Llama-3-8B{{}}' (block_size 8192, padded_vocab 128256, n_query_groups 8); card {CARDS}/llama3/MODEL_CARD.md ('two sizes — 8B and 70B', 'sequences of 8,192 tokens', GQA); params: {KERAS}/llama3/llama3_presets.py llama3_8b_en 8030261248",
           hf="meta-llama/Meta-Llama-3-8B-Instruct", hf_ids=["meta-llama/Meta-Llama-3-8B"], extra_alias=["llama3", "llama 3"]))
add(llama3("3", "70b", 80, 8192, 64, 8, 28672, 70.554, "config arithmetic 70,553,706,496 (" + ARITH + ")",
           8192, "8k (no rope_scaling)",
           f"config: {MLC} 'llama3_70b' (HF config copy: 80 layers, 8192, 64/8, 28672, max_position_embeddings 8192, vocab 128256; via registry); {ALIGN_L2} name='Llama-3-70B{{}}' (block_size 8192); params: arithmetic",
           hf="meta-llama/Meta-Llama-3-70B-Instruct", hf_ids=["meta-llama/Meta-Llama-3-70B"]))
R31 = "131072 via rope_scaling llama3 (factor 8, original_max_position_embeddings 8192)"
for size, L, H, nq, I, p, ps in (("8b", 32, 4096, 32, 14336, 8.030, "keras-hub llama3.1_8b params 8030261248 (= config arithmetic)"),
                                 ("70b", 80, 8192, 64, 28672, 70.554, "config arithmetic 70,553,706,496 (" + ARITH + ")"),
                                 ("405b", 126, 16384, 128, 53248, 405.853, "config arithmetic 405,853,388,800 (" + ARITH + ")")):
    add(llama3("3.1", size, L, H, nq, 8, I, p, ps, 131072, R31,
               f"config: {AIC}/meta-llama--Meta-Llama-3.1-{size.upper()}_config.json (verbatim HF config copy; via shared/reference/models.yaml); cross_check: {ALIGN_L2} name='Llama-3.1-{size.upper()}{{}}' (block_size 131072, rope_adjustments factor 8); {SKU} llama3_1_{size} arch_args; card {CARDS}/llama3_1/MODEL_CARD.md (GQA all sizes, 128k); params: {ps}",
               hf=f"meta-llama/Llama-3.1-{size.upper()}-Instruct", hf_ids=[f"meta-llama/Llama-3.1-{size.upper()}", f"meta-llama/Meta-Llama-3.1-{size.upper()}-Instruct"],
               extra_alias=(["llama 405b", "llama-405b"] if size == "405b" else [])))
R32 = "131072 via rope_scaling llama3 (factor 32, original 8192); card: 128k"
add(llama3("3.2", "1b", 16, 2048, 32, 8, 8192, 1.236, "config arithmetic 1,235,814,400 (tied embeddings); card '1B (1.23B)'", 131072, R32,
           f"config: {MLC} MODEL_PRESETS['llama3_2_1b'] (HF config copy, head_dim 64, tie true; via shared/reference/models.yaml); {ALIGN_L2} name='Llama-3.2-1B{{}}'; card {CARDS}/llama3_2/MODEL_CARD.md ('1B (1.23B)', 128k, GQA yes, Shared Embeddings yes); params: arithmetic (keras-hub llama3.2_1b 1498482688 counts the tied matrix twice)",
           hf="meta-llama/Llama-3.2-1B-Instruct", hf_ids=["meta-llama/Llama-3.2-1B"]))
add(llama3("3.2", "3b", 28, 3072, 24, 8, 8192, 3.213, "config arithmetic 3,212,749,824 (tied embeddings); card '3B (3.21B)'", 131072, R32,
           f"config: {MLC} MODEL_PRESETS['llama3_2_3b'] (HF config copy, head_dim 128, tie true; via shared/reference/models.yaml); docs corpus huggingface.co/datasets/lhpku20010120/Llama-3.2-3B-Instruct/blob/main/config.json (same fields, tie_word_embeddings true, rope factor 32); card {CARDS}/llama3_2/MODEL_CARD.md ('3B (3.21B)'); params: arithmetic",
           hf="meta-llama/Llama-3.2-3B-Instruct", hf_ids=["meta-llama/Llama-3.2-3B"]))
e = llama3("3.3", "70b", 80, 8192, 64, 8, 28672, 70.554, "config arithmetic 70,553,706,496 (" + ARITH + ")", 131072, R31,
           f"config: {AIC.split('@')[0]}, git history commit f577ab843: src/aiconfigurator/model_configs/meta-llama--Llama-3.3-70B-Instruct_config.json (verbatim HF config copy; via shared/reference/models.yaml); {ALIGN_L2} name='Llama-3.3-70B-Instruct'; card {CARDS}/llama3_3/MODEL_CARD.md ('70B', 128k, GQA yes); params: arithmetic",
           hf="meta-llama/Llama-3.3-70B-Instruct", extra_alias=["llama3.3", "llama 3.3"])
add(e)

HFCNT = "transformers 5.24 model built on the meta device from the read config values, parameters() summed"
add(dict(id="llama-3.2-11b-vision", name="Llama 3.2 11B Vision", family="llama-3.2", kind="vlm",
         hf_id="meta-llama/Llama-3.2-11B-Vision-Instruct", hf_ids=["meta-llama/Llama-3.2-11B-Vision"],
         aliases=["llama3.2-vision:11b", "llama3.2-vision", "llama 3.2 vision 11b", "llama-3.2-11b-vision",
                  "llama-3.2-11b-vision-instruct", "llama3.2 11b vision", "meta-llama/llama-3.2-11b-vision-instruct",
                  "meta-llama/llama-3.2-11b-vision"],
         params_b=10.670, params_source=f"{HFCNT}: 10,670,220,835 (MllamaForConditionalGeneration); card '11B (10.6)'",
         active_params_b=10.670, layers=40, attention_heads=32, kv_heads=8, head_dim=128, hidden_size=4096,
         intermediate_size=14336, vocab_size=128256, tie_word_embeddings=False, context_max=131072,
         context_note="card: 128k", torch_dtype="bfloat16", sliding_window=None, sliding_layers=0,
         layer_pattern="40 text layers = 32 self-attention + 8 cross-attention (cross_attention_layers [3,8,13,18,23,28,33,38])",
         no_kv_layers=8, mla=None, experts=None, vision_params_b=0.895, published_weights=None,
         note="text-token KV cache lives in the 32 self-attention layers; the 8 cross-attention layers hold K/V of the image tokens (fixed per image: up to 4 tiles of 560x560), not of the text",
         source=(f"config: docs corpus huggingface.co/Aekanun/thai-handwriting-llm/blob/11aa08b2/config.json (_name_or_path meta-llama/Llama-3.2-11B-Vision-Instruct: text 4096/14336/32 heads/8 KV/40 layers/max_position_embeddings 131072/vocab 128256; vision 1280 hidden, 32 layers, 16 heads, image 560, patch 14, vision_output_dim 7680); cross_attention_layers: huggingface.co/bababababooey/llama-3.2-11b-vision-instruct-stheno-abliterated/blob/main/config.json; original params.json copy huggingface.co/LlamaFinetuneBase/Meta-Llama-3.2-11B-Vision (dim 4096, n_layers 32, vision_num_cross_attention_layers 8); {SKU} llama3_2_11b_vision; card {CARDS}/llama3_2/MODEL_CARD_VISION.md ('11B (10.6)', 128k, GQA); params/vision: {HFCNT} (vision tower + projector 895,028,755)")),
    {"tie_word_embeddings": "not a key in the excerpts read; untied is what reproduces the card's 10.6B (tied would give 10.15B)",
     "no_kv_layers": "cross-attention layers: no per-text-token KV"})
add(dict(id="llama-3.2-90b-vision", name="Llama 3.2 90B Vision", family="llama-3.2", kind="vlm",
         hf_id="meta-llama/Llama-3.2-90B-Vision-Instruct", hf_ids=["meta-llama/Llama-3.2-90B-Vision"],
         aliases=["llama3.2-vision:90b", "llama 3.2 vision 90b", "llama-3.2-90b-vision", "llama-3.2-90b-vision-instruct",
                  "llama3.2 90b vision", "meta-llama/llama-3.2-90b-vision-instruct", "meta-llama/llama-3.2-90b-vision"],
         params_b=88.8, params_source="card '90B (88.8)'; arithmetic with cross-attention every 5th layer gives 88.593 (layer positions not read)",
         active_params_b=88.8, layers=100, attention_heads=64, kv_heads=8, head_dim=128, hidden_size=8192,
         intermediate_size=28672, vocab_size=128256, tie_word_embeddings=False, context_max=131072,
         context_note="card: 128k", torch_dtype="bfloat16", sliding_window=None, sliding_layers=0,
         layer_pattern="100 text layers = 80 self-attention (sku n_layers 80) + 20 cross-attention (vision_num_cross_attention_layers 20)",
         no_kv_layers=20, mla=None, experts=None, vision_params_b=0.926, published_weights=None,
         note="the 20 cross-attention layers hold K/V of the image tokens (fixed per image), not of the text",
         source=(f"config: {SKU} llama3_2_90b_vision arch_args (dim 8192, n_layers 80, n_heads 64, n_kv_heads 8, ffn_dim_multiplier 1.3, multiple_of 4096 -> 28672, vocab 128256, vision_chunk_size 560, vision_num_cross_attention_layers 20); card {CARDS}/llama3_2/MODEL_CARD_VISION.md ('90B (88.8)', 128k); vision_params_b: {HFCNT} with the 11B vision config and a 8192-wide projector (926,490,131)")),
    {"layers": "HF text_config num_hidden_layers not read: 80 + 20 from the sku list",
     "vision_params_b": "derived (vision config of the 90B not read; same ViT-H as 11B assumed)",
     "tie_word_embeddings": "UNVERIFIED: not read for 90B; untied as in 11B",
     "intermediate_size": "from ffn_dim_multiplier 1.3 / multiple_of 4096 as for Llama 3.1 70B (28672)"})

L4SRC = f"{AIC}/meta-llama--Llama-4-{{}}-Instruct_config.json (text_config: attention_chunk_size 8192, head_dim 128, hidden 5120, intermediate_size 8192, intermediate_size_mlp 16384, max_position_embeddings {{}}, 40 heads, 8 KV, 48 layers, num_local_experts {{}}, num_experts_per_tok 1, interleave_moe_layer_step {{}}, rope llama3 {{}}, use_qk_norm {{}}, vocab 202048, bf16; vision_config not in this copy)"
L4PAT = "iRoPE: every 4th layer (no_rope_layer_interval 4) is a NoPE global-attention layer; the other 3 of 4 use chunked local attention with attention_chunk_size 8192"
L4PSRC = "code-index 46400540717 (Llama4TextConfig docstring: no_rope_layer_interval default 4, attention_chunk_size 8192); code-index 60687760548 (Llama4Attention: NoPE every no_rope_layer_interval-th layer with full causal mask, chunked causal mask on RoPE layers)"
add(dict(id="llama-4-scout", name="Llama 4 Scout 17B-16E", family="llama-4", kind="vlm",
         hf_id="meta-llama/Llama-4-Scout-17B-16E-Instruct", hf_ids=["meta-llama/Llama-4-Scout-17B-16E"],
         aliases=["llama4:scout", "llama4:16x17b", "llama 4 scout", "llama-4-scout", "llama4 scout", "llama-4-scout-17b-16e",
                  "llama-4-scout-17b-16e-instruct", "meta-llama/llama-4-scout-17b-16e-instruct"],
         params_b=109, params_source="card (llama4/MODEL_CARD.md): '17B (Activated) 109B (Total)'; text-only config arithmetic 107.770 (transformers Llama4ForCausalLM)",
         active_params_b=17, layers=48, attention_heads=40, kv_heads=8, head_dim=128, hidden_size=5120,
         intermediate_size=8192, vocab_size=202048, tie_word_embeddings=False, context_max=10485760,
         context_note="card: 10M; rope_scaling llama3 factor 16, original_max_position_embeddings 8192", torch_dtype="bfloat16",
         sliding_window=8192, sliding_layers=36, layer_pattern=L4PAT, mla=None,
         experts={"total": 16, "active": 1, "shared": 1, "moe_intermediate_size": 8192, "moe_layers": 48},
         vision_params_b=None, published_weights=None,
         note="chunked layers attend within fixed 8192-token chunks, so a runtime with chunked-local attention needs at most 8192 tokens of KV in 36 of 48 layers; the 12 NoPE layers keep the full context",
         source=(f"config: {L4SRC.format('Scout-17B-16E', 10485760, 16, 1, 'factor 16', 'true')}; pattern: {L4PSRC}; params/active: {CARDS}/llama4/MODEL_CARD.md table ('Llama 4 Scout (17Bx16E) | 17B (Activated) 109B (Total) | 10M'); text-only arithmetic total 107,769,861,120, active (1 routed + shared expert per layer) 17,172,894,720")),
    {"intermediate_size": "every layer is MoE (interleave_moe_layer_step 1): routed and shared experts are 8192 wide; intermediate_size_mlp 16384 is unused in Scout",
     "vision_params_b": "UNVERIFIED: vision_config not in the config copy read; card total 109B minus text arithmetic 107.77B suggests ~1B but card figures are rounded",
     "tie_word_embeddings": "no tie key in the copy read; Llama4TextConfig default (untied) assumed",
     "sliding_window": "attention_chunk_size (chunked, not sliding): caps KV in chunked layers where the runtime implements it"})
add(dict(id="llama-4-maverick", name="Llama 4 Maverick 17B-128E", family="llama-4", kind="vlm",
         hf_id="meta-llama/Llama-4-Maverick-17B-128E-Instruct", hf_ids=["meta-llama/Llama-4-Maverick-17B-128E", "meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8"],
         aliases=["llama4:maverick", "llama4:128x17b", "llama 4 maverick", "llama-4-maverick", "llama4 maverick",
                  "llama-4-maverick-17b-128e", "llama-4-maverick-17b-128e-instruct", "meta-llama/llama-4-maverick-17b-128e-instruct"],
         params_b=400, params_source="card (llama4/MODEL_CARD.md): '17B (Activated) 400B (Total)'; text-only config arithmetic 400.712",
         active_params_b=17, layers=48, attention_heads=40, kv_heads=8, head_dim=128, hidden_size=5120,
         intermediate_size=16384, vocab_size=202048, tie_word_embeddings=False, context_max=1048576,
         context_note="card: 1M; rope_scaling null", torch_dtype="bfloat16",
         sliding_window=8192, sliding_layers=36, layer_pattern=L4PAT + "; MoE on every 2nd layer (interleave_moe_layer_step 2), dense MLP 16384 (intermediate_size_mlp) on the others", mla=None,
         experts={"total": 128, "active": 1, "shared": 1, "moe_intermediate_size": 8192, "moe_layers": 24},
         vision_params_b=None, published_weights=None,
         source=(f"config: {L4SRC.format('Maverick-17B-128E', 1048576, 128, 2, 'none', 'false')}; pattern: {L4PSRC}; params/active: {CARDS}/llama4/MODEL_CARD.md table ('Llama 4 Maverick (17Bx128E) | 17B (Activated) 400B (Total) | 1M'); text-only arithmetic total 400,711,848,960, active 17,184,691,200")),
    {"vision_params_b": "UNVERIFIED: vision_config not in the config copy read",
     "hf_ids": "the -FP8 repo is a separately quantized release of the same architecture",
     "tie_word_embeddings": "no tie key in the copy read; Llama4TextConfig default (untied) assumed"})

def codellama(size, L, H, nq, nkv, I, V, params, psrc, extra_src):
    S = size.upper() if size != "7b" else "7b"
    return dict(id=f"codellama-{size}", name=f"Code Llama {size.upper()}", family="codellama", kind="llm",
                hf_id=f"codellama/CodeLlama-{size}-Instruct-hf", hf_ids=[f"codellama/CodeLlama-{size}-hf", f"codellama/CodeLlama-{size}-Python-hf"],
                aliases=[f"codellama:{size}", f"codellama-{size}", f"code llama {size}", f"code-llama-{size}", f"codellama {size} instruct",
                         f"codellama-{size}-instruct", f"codellama-{size}-python", f"codellama/codellama-{size}-hf", f"codellama/codellama-{size}-instruct-hf"],
                params_b=params, params_source=psrc, active_params_b=params, layers=L, attention_heads=nq, kv_heads=nkv, head_dim=128,
                hidden_size=H, intermediate_size=I, vocab_size=V, tie_word_embeddings=False, context_max=16384,
                context_note="rope_theta 1e6; card: trained on 16k, stable up to 100k", torch_dtype="bfloat16",
                sliding_window=None, sliding_layers=0, layer_pattern="all layers full attention", mla=None, experts=None,
                vision_params_b=None, published_weights=None,
                source=(f"config: {ALIGN_L2} name='CodeLlama-{size}-hf' (block_size 16384, vocab_size {V}, n_layer {L}, n_query_groups {nkv}, intermediate {I}, rope_base 1000000); "
                        f"github:RahulSChand/gpu_poor@ad2fc0e public/all_configs.json['codellama/CodeLlama-{size}-hf'] (trimmed HF config) " + extra_src + f"; params: {psrc}"))
add(codellama("7b", 32, 4096, 32, 32, 11008, 32016, 6.739, "config arithmetic 6,738,546,688 (" + ARITH + ")",
              f"(4096/11008/32 heads/32 layers/vocab 32016); {MLC} 'codellama_7b' (_name_or_path codellama/CodeLlama-7b-hf, max_position_embeddings 16384, 32 KV heads, tie false, bf16)"),
    {"kv_heads": "MHA (32 KV heads)"})
add(codellama("13b", 40, 5120, 40, 40, 13824, 32016, 13.016, "config arithmetic 13,016,028,160 (" + ARITH + ")",
              f"(5120/13824/40/40/vocab 32016); {MLC} 'codellama_13b' (max_position_embeddings 16384, 40 KV heads, tie false)"),
    {"kv_heads": "MHA (40 KV heads)"})
add(codellama("34b", 48, 8192, 64, 8, 22016, 32000, 33.744, "config arithmetic 33,743,970,304 (shared/reference/models.yaml params_computed_b 33.744)",
              f"(8192/22016/64 heads/48 layers/vocab 32000); {MLC} MODEL_PRESETS['codellama_34b'] (via shared/reference/models.yaml; that preset's vocab 32016 is the 7B/13B infilling vocab, litgpt and gpu_poor say 32000)"))
add(codellama("70b", 80, 8192, 64, 8, 28672, 32016, 68.977, "config arithmetic 68,976,910,336 (" + ARITH + ")",
              f"(not in gpu_poor); litgpt CodeLlama-70b-Instruct-hf notes 32016 rows (32015 + 1 added token, padding_multiple 16)"),
    {"source": None})
ENTRIES[-1][0]["source"] = ENTRIES[-1][0]["source"].replace("github:RahulSChand/gpu_poor@ad2fc0e public/all_configs.json['codellama/CodeLlama-70b-hf'] (trimmed HF config) ", "")

add(dict(id="llama-guard-3-8b", name="Llama Guard 3 8B", family="llama-3.1", kind="llm", hf_id="meta-llama/Llama-Guard-3-8B",
         hf_ids=["meta-llama/Llama-Guard-3-8B-INT8"],
         aliases=["llama-guard3:8b", "llama-guard3", "llama guard 3", "llama guard 3 8b", "llama-guard-3-8b", "llamaguard3", "meta-llama/llama-guard-3-8b"],
         params_b=8.030, params_source="keras-hub llama3_presets llama3.1_guard_8b params 8030261248 ('LLaMA 3.1 fine-tuned for consent safety classification')",
         active_params_b=8.030, layers=32, attention_heads=32, kv_heads=8, head_dim=128, hidden_size=4096, intermediate_size=14336,
         vocab_size=128256, tie_word_embeddings=False, context_max=None, torch_dtype="bfloat16", sliding_window=None, sliding_layers=0,
         layer_pattern="all layers full attention", mla=None, experts=None, vision_params_b=None, published_weights=None,
         note="a classifier: generates a few tokens ('safe' / 'unsafe' + categories), so long outputs are never needed",
         source=(f"shape: {SKU} llama_guard_3_8b arch_args (dim 4096, n_layers 32, n_heads 32, n_kv_heads 8, ffn_dim_multiplier 1.3, multiple_of 1024, vocab 128256, rope_theta 500000, use_scaled_rope False); card github:meta-llama/PurpleLlama Llama-Guard3/8B/MODEL_CARD.md ('Llama Guard 3-8B is a Llama-3.1-8B pretrained model, fine-tuned for content safety classification'); params: {KERAS}/llama3/llama3_presets.py llama3.1_guard_8b 8030261248 (= Llama 3.1 8B arithmetic)")),
    {"context_max": "UNVERIFIED: the Llama-Guard-3-8B config.json was not found (docs search returned only Llama 3/3.1 fine-tunes); base Llama-3.1-8B has 131072, but the sku list says use_scaled_rope False",
     "tie_word_embeddings": "as Llama 3.1 8B (8.03B count is the untied figure)",
     "hf_ids": "INT8 repo = same architecture, int8 weights"})
