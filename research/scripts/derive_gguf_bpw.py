"""Reproduces llama.cpp's per-tensor type choice (src/llama-quant.cpp @ 007dbbf3) for dense
llama-style models and predicts GGUF file sizes; compares with published file sizes.
Block sizes: ggml/src/ggml-common.h @ 01243c58 (llama.cpp) / d99724f2 (ggml)."""
import yaml, sys

# bytes per block, elements per block  (ggml-common.h static_asserts)
T = {
 'F32': (4, 1), 'F16': (2, 1), 'BF16': (2, 1),
 'Q4_0': (2 + 16, 32), 'Q4_1': (4 + 16, 32), 'Q5_0': (2 + 4 + 16, 32), 'Q5_1': (4 + 4 + 16, 32),
 'Q8_0': (2 + 32, 32), 'Q2_K': (4 + 16 + 64, 256), 'Q3_K': (32 + 64 + 12 + 2, 256),
 'Q4_K': (4 + 12 + 128, 256), 'Q5_K': (4 + 12 + 32 + 128, 256), 'Q6_K': (128 + 64 + 16 + 2, 256),
 'IQ2_XXS': (2 + 64, 256), 'IQ2_XS': (2 + 64 + 8, 256), 'IQ2_S': (2 + 64 + 8 + 8, 256),
 'IQ3_XXS': (2 + 96, 256), 'IQ3_S': (2 + 64 + 8 + 32 + 4, 256), 'IQ1_S': (2 + 32 + 16, 256),
 'IQ1_M': (32 + 16 + 8, 256), 'IQ4_NL': (2 + 16, 32), 'IQ4_XS': (2 + 2 + 4 + 128, 256),
 'TQ1_0': (48 + 4 + 2, 256), 'TQ2_0': (64 + 2, 256), 'MXFP4': (1 + 16, 32), 'NVFP4': (4 + 32, 64),
 'Q1_0': (2 + 16, 128), 'Q2_0': (2 + 16, 64),
}
def bpw(t):
    b, n = T[t]; return b * 8 / n
BLK = {t: T[t][1] for t in T}
FALLBACK = {'IQ1_S': 'IQ4_NL', 'IQ1_M': 'IQ4_NL', 'IQ2_XXS': 'IQ4_NL', 'IQ2_XS': 'IQ4_NL', 'IQ2_S': 'IQ4_NL',
            'IQ3_XXS': 'IQ4_NL', 'IQ3_S': 'IQ4_NL', 'IQ4_XS': 'IQ4_NL', 'Q2_K': 'Q4_0', 'Q3_K': 'Q4_0',
            'Q4_K': 'Q5_0', 'Q5_K': 'Q5_1', 'Q6_K': 'Q8_0'}
DEFAULT = {'Q4_0': 'Q4_0', 'Q4_1': 'Q4_1', 'Q5_0': 'Q5_0', 'Q5_1': 'Q5_1', 'Q8_0': 'Q8_0', 'F16': 'F16', 'BF16': 'BF16',
           'Q2_K_S': 'Q2_K', 'Q2_K': 'Q2_K', 'IQ3_XS': 'IQ3_S', 'Q3_K_S': 'Q3_K', 'Q3_K_M': 'Q3_K', 'Q3_K_L': 'Q3_K',
           'Q4_K_S': 'Q4_K', 'Q4_K_M': 'Q4_K', 'Q5_K_S': 'Q5_K', 'Q5_K_M': 'Q5_K', 'Q6_K': 'Q6_K',
           'IQ2_XXS': 'IQ2_XXS', 'IQ2_XS': 'IQ2_XS', 'IQ2_S': 'IQ2_XS', 'IQ2_M': 'IQ2_S', 'IQ3_XXS': 'IQ3_XXS',
           'IQ1_S': 'IQ1_S', 'IQ1_M': 'IQ1_M', 'IQ4_NL': 'IQ4_NL', 'IQ4_XS': 'IQ4_XS', 'IQ3_S': 'IQ3_S', 'IQ3_M': 'IQ3_S',
           'TQ1_0': 'TQ1_0', 'TQ2_0': 'TQ2_0'}
IQ_LOW = {'IQ2_XXS', 'IQ2_XS', 'IQ1_S', 'IQ2_S', 'IQ2_M', 'IQ1_M'}

def more_bits(i, n):
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2

def tensors(m):
    """(name, category, layer, ncols, nrows) for every 2D weight; 1D tensors returned separately."""
    L, D, H, KV, hd, F, V = (m[k] for k in ('num_hidden_layers', 'hidden_size', 'num_attention_heads',
                                            'num_key_value_heads', 'head_dim', 'intermediate_size', 'vocab_size'))
    out = [('token_embd', 'TOKEN_EMBD', -1, D, V)]
    if not m['tie_word_embeddings']:
        out.append(('output', 'OUTPUT', -1, D, V))
    for i in range(L):
        out += [('attn_q', 'Q', i, D, H * hd), ('attn_k', 'K', i, D, KV * hd), ('attn_v', 'V', i, D, KV * hd),
                ('attn_output', 'O', i, H * hd, D), ('ffn_gate', 'GATE', i, D, F), ('ffn_up', 'UP', i, D, F),
                ('ffn_down', 'DOWN', i, F, D)]
    n1d = L * D * m.get('norms_per_layer', 2) + D          # norms (F32)
    n1d += L * (H * hd + 2 * KV * hd) * (1 if m.get('qkv_bias') else 0)  # Qwen2 q/k/v biases (F32)
    return out, n1d

def choose(ft, cat, i, n, m, imatrix, ctr, tied):
    t = DEFAULT[ft]
    if t in ('F16', 'BF16'):
        return t  # llama_tensor_get_type only applies mixes when the default type is quantized
    gqa = m['num_attention_heads'] // m['num_key_value_heads']
    is70b = m.get('llm_type_70b', False)
    if cat == 'OUTPUT' or (tied and cat == 'TOKEN_EMBD'):
        if ft in IQ_LOW or ft == 'IQ3_XXS': return 'Q5_K'
        return t if t == 'Q8_0' else 'Q6_K'
    if cat == 'TOKEN_EMBD':
        if ft in ('IQ2_XXS', 'IQ2_XS', 'IQ1_S', 'IQ1_M'): return 'Q2_K'
        if ft in ('IQ2_S', 'IQ2_M', 'IQ3_XXS'): return 'IQ3_S'
        return t
    if ft in IQ_LOW:
        if cat == 'V':
            t = 'Q4_K' if gqa >= 4 else ('IQ3_S' if ft in ('IQ2_S', 'IQ2_M') else 'Q2_K')
        elif cat == 'DOWN':
            if i < n // 8: t = 'IQ3_S' if ft in ('IQ2_S', 'IQ2_M') else 'Q2_K'
        elif cat == 'O':
            if ft in ('IQ1_S', 'IQ1_M'): t = 'IQ2_XXS'
            elif ft in ('IQ2_S', 'IQ2_M'): t = 'IQ3_S'
        return t
    if cat == 'V':
        iv = ctr['v']; ctr['v'] += 1; nv = n
        if ft == 'Q2_K': t = 'Q4_K' if gqa >= 4 else 'Q3_K'
        elif ft == 'Q2_K_S' and gqa >= 4: t = 'Q4_K'
        elif ft == 'IQ3_XXS': t = 'Q4_K' if gqa >= 4 else ('IQ3_S' if not imatrix else 'IQ3_XXS')
        elif ft in ('IQ3_XS', 'IQ3_S') and gqa >= 4: t = 'Q4_K'
        elif ft == 'IQ3_M': t = 'Q4_K'
        elif ft == 'Q3_K_M': t = 'Q5_K' if iv < 2 else 'Q4_K'
        elif ft == 'Q3_K_L': t = 'Q5_K'
        elif ft in ('IQ4_NL', 'IQ4_XS') and gqa >= 4: t = 'Q5_K'
        elif ft in ('Q4_K_M', 'Q5_K_M') and more_bits(iv, nv): t = 'Q6_K'
        elif ft == 'Q4_K_S' and iv < 4: t = 'Q5_K'
        if is70b and t in ('Q3_K', 'Q4_K'): t = 'Q5_K'
        return t
    if cat in ('K', 'Q'):
        if ft == 'IQ3_XS': return 'IQ3_XXS'
        if ft == 'IQ3_XXS': return 'IQ2_S'
        return t
    if cat == 'DOWN':
        if ft == 'Q2_K': t = 'Q3_K'
        elif ft == 'Q2_K_S':
            if i < n // 8: t = 'Q4_K'
        elif ft == 'IQ3_XXS' and not imatrix: t = 'Q4_K' if i < n // 8 else 'Q3_K'
        elif ft == 'Q3_K_M': t = 'Q5_K' if i < n // 16 else 'Q4_K'
        elif ft == 'IQ3_M' and i < n // 8: t = 'Q4_K'
        elif ft == 'Q3_K_L': t = 'Q5_K'
        elif ft == 'Q4_K_M':
            if more_bits(i, n): t = 'Q6_K'
        elif i < n // 8 and ft in ('IQ4_NL', 'IQ4_XS') and not imatrix: t = 'Q5_K'
        elif ft == 'Q5_K_M' and more_bits(i, n): t = 'Q6_K'
        elif ft == 'Q4_K_S' and i < n // 8: t = 'Q5_K'
        elif ft in ('Q4_0', 'Q5_0') and imatrix and i < n // 8: t = 'Q4_1' if ft == 'Q4_0' else 'Q5_1'
        return t
    if cat == 'O':
        return {'Q2_K': 'Q3_K', 'IQ3_XXS': 'IQ3_S', 'Q3_K_M': 'Q4_K', 'Q3_K_L': 'Q5_K', 'IQ3_M': 'Q4_K'}.get(ft, t)
    if cat in ('GATE', 'UP'):
        if ft == 'IQ3_XS' and n // 8 <= i < 7 * n // 8: return 'IQ3_XXS'
        return t
    return t

def size(m, ft, imatrix=True, detail=False):
    ts, n1d = tensors(m)
    tied = m['tie_word_embeddings']
    ctr = {'v': 0}
    L = m['num_hidden_layers']
    tot_bits = n1d * 32
    body_bits = body_n = 0
    emb = out = None
    for name, cat, i, ncols, nrows in ts:
        t = choose(ft, cat, i, L, m, imatrix, ctr, tied)
        if t not in ('F16', 'BF16', 'F32') and ncols % BLK[t] != 0:
            t = FALLBACK[t]
            if ncols % BLK[t] != 0: t = 'F16'
        b = ncols * nrows * bpw(t)
        tot_bits += b
        if cat == 'TOKEN_EMBD': emb = t
        elif cat == 'OUTPUT': out = t
        else:
            body_bits += b; body_n += ncols * nrows
    params = sum(c * r for _, _, _, c, r in ts) + n1d
    return dict(bytes=tot_bits / 8, params=params, file_bpw=tot_bits / params,
                body_bpw=body_bits / body_n, emb=emb, out=out)

if __name__ == '__main__':
    ref = {x['id']: x for x in yaml.safe_load(open('/work/shared/reference/models.yaml'))['models']}
    for mid in sys.argv[1:]:
        m = dict(ref[mid])
        print(mid, size(m, 'F16'))
