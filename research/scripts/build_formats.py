"""Builds formats.yaml: GGUF block types and mixes from the rule engine + published sizes, other families by hand."""
import yaml, statistics as st
import derive_gguf_bpw as d
from published_gguf import PUB, SRC, LLAMA8_TABLE
from ffn_down import ffn_down_bits
ref = {x['id']: x for x in yaml.safe_load(open('/work/shared/reference/models.yaml'))['models']}
EX = {'llama-3.1-8b':{}, 'llama-3.1-70b':{'llm_type_70b':True}, 'mistral-7b-v0.3':{}, 'qwen2.5-7b':{'qkv_bias':True},
      'qwen2.5-14b':{'qkv_bias':True}, 'qwen2.5-32b':{'qkv_bias':True}, 'qwen2.5-72b':{'qkv_bias':True,'llm_type_70b':True},
      'gemma-2-9b':{'norms_per_layer':4}}
def M(mid): m=dict(ref[mid]); m.update(EX[mid]); return m
GGML = "ggml/src/ggml-common.h at ggml-org/llama.cpp 01243c587feceaa5d6a6c2305535ef2f549c48b8 (same structs in ggml-org/ggml d99724f2b141fed9e1a9f402213506c081433465)"
QUANT = "src/llama-quant.cpp at ggml-org/llama.cpp 007dbbf3fd17eefe9b47fee45f48f7ba5e62b714 (llama_tensor_get_type_impl, llama_ftype_get_default_type, tensor_type_fallback)"
BLOCKS = [  # name, ggml struct, bytes formula text
 ('q2_k','block_q2_K','scales[16]+qs[64]+d,dmin fp16 = 84 B / 256'), ('q3_k','block_q3_K','hmask[32]+qs[64]+scales[12]+d = 110 B / 256'),
 ('q4_0','block_q4_0','d fp16 + qs[16] = 18 B / 32'), ('q4_1','block_q4_1','d,m fp16 + qs[16] = 20 B / 32'),
 ('q4_k','block_q4_K','d,dmin + scales[12] + qs[128] = 144 B / 256'), ('q5_0','block_q5_0','d + qh[4] + qs[16] = 22 B / 32'),
 ('q5_1','block_q5_1','d,m + qh[4] + qs[16] = 24 B / 32'), ('q5_k','block_q5_K','d,dmin + scales[12] + qh[32] + qs[128] = 176 B / 256'),
 ('q6_k','block_q6_K','ql[128]+qh[64]+scales[16]+d = 210 B / 256'), ('q8_0','block_q8_0','d + qs[32] = 34 B / 32'),
 ('iq1_s','block_iq1_s','d + qs[32] + qh[8 x u16] = 50 B / 256'), ('iq1_m','block_iq1_m','qs[32]+qh[16]+scales[8] = 56 B / 256 (scale packed in scales)'),
 ('iq2_xxs','block_iq2_xxs','d + qs[32 x u16] = 66 B / 256'), ('iq2_xs','block_iq2_xs','d + qs[32 x u16] + scales[8] = 74 B / 256'),
 ('iq2_s','block_iq2_s','d + qs[64] + qh[8] + scales[8] = 82 B / 256'), ('iq3_xxs','block_iq3_xxs','d + qs[96] = 98 B / 256'),
 ('iq3_s','block_iq3_s','d + qs[64] + qh[8] + signs[32] + scales[4] = 110 B / 256'), ('iq4_xs','block_iq4_xs','d + scales_h u16 + scales_l[4] + qs[128] = 136 B / 256'),
 ('iq4_nl','block_iq4_nl','d + qs[16] = 18 B / 32'), ('tq1_0','block_tq1_0','qs[48] + qh[4] + d = 54 B / 256 (ternary, 5 trits/byte)'),
 ('tq2_0','block_tq2_0','qs[64] + d = 66 B / 256 (ternary, 2 bits)'), ('mxfp4','block_mxfp4','e (E8M0) + qs[16] = 17 B / 32'),
 ('nvfp4','block_nvfp4','d[4] (UE4M3 per 16) + qs[32] = 36 B / 64'),
]
out = []
for name, struct, txt in BLOCKS:
    t = name.upper()
    out.append({'name': f'ggml_{name}', 'kind': 'ggml_block_type', 'aliases': [], 'family': 'gguf',
                'bits_per_weight': round(d.bpw(t), 4), 'bits_derivation': f'{struct}: {txt} -> {d.T[t][0]}*8/{d.T[t][1]} = {d.bpw(t)} bpw',
                'source': GGML})
out.append({'name':'f16','kind':'ggml_block_type','aliases':['F16 (gguf)','f16.gguf','BF16 (gguf)'],'family':'gguf','notes':'user words fp16/bf16/16-bit resolve to the plain bf16 entry; for GGUF files the size is the same 16 bpw (+F32 1-D tensors)',
            'bits_per_weight':16.0,'bits_derivation':'ggml_half / ggml_bf16 2 bytes per weight; 1-D tensors (norms, biases) stay F32 in every GGUF mix',
            'keeps_16bit':['everything (2-D weights F16/BF16), norms/biases F32'],'engines':['llama.cpp','ollama (not verified here)'],'hardware':'any',
            'source': GGML + '; llama-quant.cpp: mixes are only applied when the default type is quantized; llama.cpp README table: F16 16.0005 bpw for Llama-3.1-8B'})

MIXES = {
 'Q2_K': (['Q2_K','q2_k','q2k'], 'default Q2_K; attn_v Q4_K if n_gqa>=4 else Q3_K; ffn_down Q3_K; attn_output Q3_K (non-8-expert)'),
 'Q2_K_S': (['Q2_K_S','q2_k_s'], 'default Q2_K; attn_v Q4_K if n_gqa>=4; ffn_down Q4_K in first n/8 layers; needs imatrix'),
 'Q3_K_S': (['Q3_K_S','q3_k_s','q3ks'], 'all Q3_K (70B: attn_v Q5_K)'),
 'Q3_K_M': (['Q3_K_M','q3_k_m','q3km','Q3_K','q3_k'], 'default Q3_K; attn_v Q5_K for first 2 layers then Q4_K; ffn_down Q5_K first n/16 layers else Q4_K; attn_output Q4_K; "Q3_K" is an alias (quantize.cpp)'),
 'Q3_K_L': (['Q3_K_L','q3_k_l','q3kl'], 'default Q3_K; attn_v, attn_output, ffn_down Q5_K'),
 'Q4_0': (['Q4_0','q4_0','q40'], 'default Q4_0; with imatrix ffn_down of first n/8 layers Q4_1'),
 'Q4_1': (['Q4_1','q4_1'], 'all Q4_1'),
 'Q4_K_S': (['Q4_K_S','q4_k_s','q4ks'], 'default Q4_K; attn_v Q5_K for first 4 layers; ffn_down Q5_K first n/8 layers (70B: attn_v Q5_K)'),
 'Q4_K_M': (['Q4_K_M','q4_k_m','q4km','Q4_K','q4_k','4-bit gguf'], 'default Q4_K; attn_v and ffn_down Q6_K in "use_more_bits" layers (first/last n/8 and every 3rd; ~half), else Q4_K (70B: attn_v Q5_K instead of Q4_K); "Q4_K" is an alias (quantize.cpp)'),
 'Q5_0': (['Q5_0','q5_0'], 'default Q5_0; with imatrix ffn_down of first n/8 layers Q5_1'),
 'Q5_1': (['Q5_1','q5_1'], 'all Q5_1'),
 'Q5_K_S': (['Q5_K_S','q5_k_s','q5ks'], 'all Q5_K'),
 'Q5_K_M': (['Q5_K_M','q5_k_m','q5km','Q5_K','q5_k'], 'default Q5_K; attn_v and ffn_down Q6_K in use_more_bits layers; "Q5_K" is an alias'),
 'Q6_K': (['Q6_K','q6_k','q6k'], 'all Q6_K'),
 'Q8_0': (['Q8_0','q8_0','q8','8-bit gguf'], 'all Q8_0, output.weight stays Q8_0'),
 'IQ1_S': (['IQ1_S','iq1_s'], 'default IQ1_S; attn_v Q4_K (n_gqa>=4) else Q2_K; ffn_down Q2_K first n/8; attn_output IQ2_XXS; token_embd Q2_K; output Q5_K; needs imatrix'),
 'IQ1_M': (['IQ1_M','iq1_m'], 'as IQ1_S with IQ1_M default'),
 'IQ2_XXS': (['IQ2_XXS','iq2_xxs'], 'default IQ2_XXS; attn_v Q4_K/Q2_K; ffn_down Q2_K first n/8; token_embd Q2_K; output Q5_K; needs imatrix'),
 'IQ2_XS': (['IQ2_XS','iq2_xs'], 'as IQ2_XXS with IQ2_XS default'),
 'IQ2_S': (['IQ2_S','iq2_s'], 'default IQ2_XS (sic, llama_ftype_get_default_type); attn_v Q4_K (n_gqa>=4) else IQ3_S; ffn_down IQ3_S first n/8; attn_output IQ3_S; token_embd IQ3_S; output Q5_K'),
 'IQ2_M': (['IQ2_M','iq2_m'], 'default IQ2_S; attn_v Q4_K (n_gqa>=4) else IQ3_S; ffn_down IQ3_S first n/8; attn_output IQ3_S; token_embd IQ3_S; output Q5_K. IQ2_M is a mix (ftype), there is no ggml IQ2_M block type'),
 'IQ3_XXS': (['IQ3_XXS','iq3_xxs'], 'default IQ3_XXS; attn_q/attn_k IQ2_S; attn_v Q4_K (n_gqa>=4); attn_output IQ3_S; token_embd IQ3_S; output Q5_K'),
 'IQ3_XS': (['IQ3_XS','iq3_xs'], 'default IQ3_S; attn_q/attn_k IQ3_XXS; ffn_gate/up IQ3_XXS in middle 3/4 layers; attn_v Q4_K (n_gqa>=4). Mix only, no ggml IQ3_XS type'),
 'IQ3_S': (['IQ3_S','iq3_s'], 'default IQ3_S; attn_v Q4_K (n_gqa>=4)'),
 'IQ3_M': (['IQ3_M','iq3_m'], 'default IQ3_S; attn_v Q4_K; attn_output Q4_K; ffn_down Q4_K first n/8. Mix only'),
 'IQ4_XS': (['IQ4_XS','iq4_xs'], 'default IQ4_XS; attn_v Q5_K (n_gqa>=4); ffn_down Q5_K first n/8 only WITHOUT imatrix'),
 'IQ4_NL': (['IQ4_NL','iq4_nl'], 'default IQ4_NL; attn_v Q5_K (n_gqa>=4); ffn_down Q5_K first n/8 only without imatrix'),
}
models6 = ['llama-3.1-8b','llama-3.1-70b','mistral-7b-v0.3','qwen2.5-7b','qwen2.5-32b','gemma-2-9b']
for ft, (aliases, rule) in MIXES.items():
    bodies = {mid: d.size(M(mid), ft)['body_bpw'] for mid in models6 + ['qwen2.5-14b']}
    r8 = d.size(M('llama-3.1-8b'), ft)
    emb_tied = d.size(M('gemma-2-9b'), ft)['emb']
    fdn = st.mean(ffn_down_bits(M(mid), ft, False)[0] for mid in models6)
    fdn_fb = st.mean(ffn_down_bits(M(mid), ft, True)[0] for mid in models6)
    fits = {}
    for mid, tab in PUB.items():
        if ft in tab:
            p = d.size(M(mid), ft)['params']
            fits[mid] = {'file_gb': tab[ft], 'file_bpw': round(tab[ft]*8e9/p, 3), 'predicted_gb': round(d.size(M(mid), ft, imatrix=not ((mid in ('qwen2.5-72b','qwen2.5-7b') and ft in ('IQ4_XS','IQ4_NL','Q4_0','Q5_0')) or (mid=='llama-3.1-8b' and ft in ('Q4_0','Q5_0'))))['bytes']/1e9, 2)}
    if ft in LLAMA8_TABLE:
        fits['llama-3.1-8b (llama.cpp table)'] = {'file_bpw': LLAMA8_TABLE[ft][0], 'predicted_bpw': round(d.size(M('llama-3.1-8b'), ft, imatrix=ft not in ('IQ4_XS','IQ4_NL'))['file_bpw'], 4)}
    fb = [v['file_bpw'] for k, v in fits.items()]
    q72 = d.size(M('qwen2.5-72b'), ft)
    entry = {
      'name': ft.lower(), 'kind': 'gguf_mix', 'aliases': aliases, 'family': 'gguf',
      'bits_per_weight': round(st.mean(bodies[m] for m in models6), 3),
      'bits_per_weight_range': [round(min(bodies[m] for m in models6), 3), round(max(bodies[m] for m in models6), 3)],
      'bits_derivation': ('Mean over the transformer-block 2-D weights (everything except token_embd/output) of the per-tensor types that '
                          'llama-quant.cpp assigns, computed by derive_gguf_bpw.py for Llama-3.1-8B/70B, Mistral-7B-v0.3, Qwen2.5-7B/32B, Gemma-2-9B '
                          '(range = min/max over those 6). The same engine reproduces all 23 rows of the llama.cpp Llama-3.1-8B bits/weight table to 4 decimals '
                          'and 114 published file sizes of 7 models within 0.4% (imatrix flag as used by the uploader; see file_bpw_fit). Mix rule: ' + rule),
      'keeps_16bit': ['none of the 2-D weights (token_embd and output.weight are quantized, see embedding_bits/output_layer_bits)',
                      '1-D tensors (norms, q/k/v biases) stay F32'],
      'output_layer_bits': round(d.bpw(r8['out']), 4),
      'embedding_bits': round(d.bpw(r8['emb']), 4),
      'tied_embedding_bits': round(d.bpw(emb_tied), 4),
      'ffn_down_bits': round(fdn, 4),
      'ffn_down_bits_if_ffn_not_multiple_of_256': round(fdn_fb, 4),
      'example_qwen2.5-72b_body_bpw': round(q72['body_bpw'], 3),
      'file_bpw_fit': fits,
      'file_bpw_spread': [round(min(fb), 3), round(max(fb), 3)] if fb else None,
      'engines': ['llama.cpp', 'ollama (GGUF; not verified here)', 'vLLM (GGUF support "highly experimental and under-optimized", single-file only; docs.vllm.ai/en/latest/features/quantization/gguf)'],
      'hardware': 'any (CPU, CUDA, Metal, ROCm via ggml backends); vLLM GGUF: Volta..Hopper + AMD per docs.vllm.ai v0.9.2 supported_hardware table',
      'source': f"{GGML}; {QUANT}; tools/quantize/quantize.cpp at 03161a4e (aliases); tools/quantize/README.md at 311c2c9f (Llama-3.1-8B table); file sizes: " + '; '.join(f'{k}: {v}' for k, v in SRC.items()),
    }
    if ft in ('IQ1_S','IQ1_M','IQ2_XXS','IQ2_XS','IQ2_S','Q2_K_S'):
        entry['notes'] = 'requires an importance matrix (tensor_requires_imatrix)'
    out.append(entry)
if __name__ == '__main__':
    other = yaml.safe_load(open('/work/research/other_families.yaml'))
    for e in other:
        if e['name'] == 'plain_8bit': e['aliases'] = ['8-bit', '8bit', 'int8 (unspecified)']
    for e in out + other:   # aliases are matched case-insensitively: keep the first spelling of each
        seen = set(); keep = []
        for a in e.get('aliases', []):
            if a.lower() not in seen: seen.add(a.lower()); keep.append(a)
        e['aliases'] = keep
    HDR = open('/work/research/formats_header.txt').read()
    open('/work/research/formats.yaml', 'w').write(HDR + yaml.safe_dump(out + other, sort_keys=False, width=200, allow_unicode=True))
    print(len(out) + len(other))
