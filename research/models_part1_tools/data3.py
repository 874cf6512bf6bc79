from data1 import add, ENTRIES, ALIGN_L2, MLC, AIC, KERAS, ARITH, HFCNT

def llm(**kw):
    base = dict(kind="llm", torch_dtype="bfloat16", sliding_window=None, sliding_layers=0,
                layer_pattern="all layers full attention", mla=None, experts=None, vision_params_b=None, published_weights=None)
    base.update(kw); base.setdefault("active_params_b", base["params_b"]); return base

G2 = "GemmaMLP (gated GELU); attention logit softcap 50, final logit softcap 30; alternating local/global: even layer indices slide over 4096 tokens, odd are global"
def gemma2(size, L, H, nq, nkv, hd, I, p, keras_name, sl):
    return llm(id=f"gemma-2-{size}", name=f"Gemma 2 {size.upper()}", family="gemma-2", hf_id=f"google/gemma-2-{size}-it", hf_ids=[f"google/gemma-2-{size}"],
               aliases=[f"gemma2:{size}", f"gemma2-{size}", f"gemma 2 {size}", f"gemma-2-{size}", f"gemma-2-{size}-it", f"gemma2 {size} it",
                        f"google/gemma-2-{size}", f"google/gemma-2-{size}-it"],
               params_b=p, params_source=f"keras-hub gemma_presets {keras_name} params (= Gemma 2 paper Table 2 embedding + non-embedding)",
               layers=L, attention_heads=nq, kv_heads=nkv, head_dim=hd, hidden_size=H, intermediate_size=I, vocab_size=256000,
               tie_word_embeddings=True, context_max=8192, sliding_window=4096, sliding_layers=sl, layer_pattern=G2,
               source=(f"config: {MLC} MODEL_PRESETS['gemma2_{size}'] (HF config copy; via shared/reference/models.yaml / registry); layer pattern: {ALIGN_L2} name='Gemma-2-{size}' (sliding_window_indices = 1 if i % 2 == 0, sliding_window_size 4096, block_size 8192, head_size {hd}); "
                       f"tie: Gemma 2 paper Table 1 'Tied embedding: yes' (code-index excerpt 54650675977); params: {KERAS}/gemma/gemma_presets.py {keras_name}"))
add(gemma2("2b", 26, 2304, 8, 4, 256, 9216, 2.614, "gemma2_2b_en 2614341888", 13), {"head_dim": "explicit 256; hidden/heads = 288"})
add(gemma2("9b", 42, 3584, 16, 8, 256, 14336, 9.242, "gemma2_9b_en 9241705984", 21), {"head_dim": "explicit 256; hidden/heads = 224"})
add(gemma2("27b", 46, 4608, 32, 16, 128, 36864, 27.227, "gemma2_27b_en 27227128320", 23), {"head_dim": "explicit 128; hidden/heads = 144 (query_pre_attn_scalar 144)"})

G3PAT = "sliding_window_pattern 6: 5 local (sliding) layers then 1 global; global when (i+1) % 6 == 0; local layers rope 1e4, global 1e6"
add(llm(id="gemma-3-270m", name="Gemma 3 270M", family="gemma-3", hf_id="google/gemma-3-270m-it", hf_ids=["google/gemma-3-270m"],
        aliases=["gemma3:270m", "gemma3-270m", "gemma 3 270m", "gemma-3-270m", "gemma-3-270m-it", "google/gemma-3-270m", "google/gemma-3-270m-it", "functiongemma"],
        params_b=0.268, params_source="keras-hub gemma3_presets gemma3_270m params 268098176 ('170m embedding, 100m transformer'); = transformers Gemma3ForCausalLM count from the config",
        layers=18, attention_heads=4, kv_heads=1, head_dim=256, hidden_size=640, intermediate_size=2048, vocab_size=262144,
        tie_word_embeddings=True, context_max=32768, sliding_window=512, sliding_layers=15, layer_pattern=G3PAT + " (layer_types: 15 sliding, 3 full)",
        source=("config: docs corpus huggingface.co/Codingstark/gemma3-270m-leetcode/blob/main/config.json and huggingface.co/mariocde/functiongemma-270m-onnx/blob/main/config.json (Gemma3ForCausalLM fine-tunes of the 270M: head_dim 256, hidden 640, intermediate 2048, layer_types 5 sliding : 1 full, max_position_embeddings 32768, 4 heads, 18 layers, 1 KV, query_pre_attn_scalar 256, sliding_window 512, vocab 262144); tie true: huggingface.co/jrcastropy/functiongemma-270m-it-simple-tool-calling config; "
                f"params: {KERAS}/gemma3/gemma3_presets.py gemma3_270m 268098176")),
    {"hf_id": "base model config read only via fine-tunes (same shape)"})
add(llm(id="gemma-3-1b", name="Gemma 3 1B", family="gemma-3", hf_id="google/gemma-3-1b-it", hf_ids=["google/gemma-3-1b-pt"],
        aliases=["gemma3:1b", "gemma3-1b", "gemma 3 1b", "gemma-3-1b", "gemma-3-1b-it", "google/gemma-3-1b-it", "google/gemma-3-1b-pt"],
        params_b=1.000, params_source="keras-hub gemma3_1b params 999885952 (= transformers count from the config); paper Table 1: 302M embedding + 698M non-embedding",
        layers=26, attention_heads=4, kv_heads=1, head_dim=256, hidden_size=1152, intermediate_size=6912, vocab_size=262144,
        tie_word_embeddings=True, context_max=32768, sliding_window=512, sliding_layers=22, layer_pattern=G3PAT + " (layers 5,11,17,23 global)",
        source=(f"config: {MLC} 'gemma3_1b_it' (HF config copy: 26 layers, 1152, 4/1 heads, head_dim 256, sliding_window 512, sliding_window_pattern 6, max_position_embeddings 32768; via registry); huggingface.co/MatanBT/mia-target-model config (Gemma3ForCausalLM 1152/6912/26 layers/32768); {ALIGN_L2} name='Gemma-3-1b-it' (vocab 262144, 512 window; its block_size 131072 disagrees with the HF 32768); params: {KERAS}/gemma3/gemma3_presets.py gemma3_1b 999885952")))
def gemma3(size, L, H, nq, nkv, hd, I, total, text, vision, sl, ksrc):
    return llm(id=f"gemma-3-{size}", name=f"Gemma 3 {size.upper()}", family="gemma-3", kind="vlm", hf_id=f"google/gemma-3-{size}-it", hf_ids=[f"google/gemma-3-{size}-pt"],
               aliases=[f"gemma3:{size}", f"gemma3-{size}", f"gemma 3 {size}", f"gemma-3-{size}", f"gemma-3-{size}-it", f"gemma3 {size} it",
                        f"google/gemma-3-{size}-it", f"google/gemma-3-{size}-pt"],
               params_b=total, params_source=ksrc, layers=L, attention_heads=nq, kv_heads=nkv, head_dim=hd, hidden_size=H,
               intermediate_size=I, vocab_size=262208, tie_word_embeddings=True, context_max=131072,
               context_note="global layers: rope 1e6 with linear factor 8", sliding_window=1024, sliding_layers=sl, layer_pattern=G3PAT,
               vision_params_b=vision,
               note=f"language model {text:.3f}B + SigLIP vision tower/projector {vision:.3f}B in one checkpoint",
               source=(f"config: registry gemma-3-{size} sources ({ALIGN_L2} name='Gemma-3-{size}-it': {L} layers, {nq} heads / {nkv} query groups, head_size {hd}, n_embd {H}, intermediate {I}, sliding_window_size 1024, local unless (i+1) % 6 == 0, block_size 131072); "
                       f"vocab 262208: HF text_config (code-index excerpt 53983210377 for 27B, 28221805148 for 4B; litgpt's 262144 is the un-padded text vocab); params: {ksrc}"))
add(gemma3("4b", 34, 2560, 8, 4, 256, 10240, 4.300, 3.880, 0.420, 29,
           "keras-hub gemma3_4b 4299915632 (vocab 262144) + 64 x 2560 image-token rows = 4,300,079,472 (= keras-hub medgemma_4b, same HF-converted architecture); text 3,880,263,168 by transformers count; paper Table 1: 417M vision, 675M embedding, 3,209M non-embedding"),
    {"head_dim": "explicit 256; hidden/heads = 320"})
add(gemma3("12b", 48, 3840, 16, 8, 256, 15360, 12.187, 11.766, 0.421, 40,
           "keras-hub gemma3_12b 12187079280 (vocab 262144) + 64 x 3840 = 12,187,325,040; text 11,766,034,176 by transformers count; paper Table 1: 417M vision, 1,012M embedding, 10,759M non-embedding"),
    {"head_dim": "explicit 256; hidden/heads = 240"})
add(gemma3("27b", 62, 5376, 32, 16, 128, 21504, 27.432, 27.009, 0.423, 52,
           "keras-hub medgemma_instruct_27b 27432406640 (= gemma3_27b 27432062576 + 64 x 5376); text 27,009,346,304 by transformers count (shared/reference params_computed_b 27.009); paper Table 1: 417M vision + 27,016M LM"),
    {"head_dim": "explicit 128; hidden/heads = 168 (query_pre_attn_scalar 168)"})
