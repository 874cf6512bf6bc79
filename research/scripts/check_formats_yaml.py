"""Sizes GGUF files using ONLY formats.yaml + config fields (what Cardfit's engine would do) and compares with published sizes."""
import yaml
from published_gguf import PUB
ref = {x['id']: x for x in yaml.safe_load(open('/work/shared/reference/models.yaml'))['models']}
F = {e['name']: e for e in yaml.safe_load(open('/work/research/formats.yaml'))}
BIAS = {'qwen2.5-7b','qwen2.5-32b','qwen2.5-72b'}; NORMS = {'gemma-2-9b': 4}
def est(mid, mix):
    m = ref[mid]; f = F[mix.lower()]
    L,D,H,KV,hd,Fi,V = (m[k] for k in ('num_hidden_layers','hidden_size','num_attention_heads','num_key_value_heads','head_dim','intermediate_size','vocab_size'))
    body = L*(D*H*hd + 2*D*KV*hd + H*hd*D + 3*D*Fi); down = L*Fi*D
    one_d = L*NORMS.get(mid,2)*D + D + (L*(H*hd+2*KV*hd) if mid in BIAS else 0)
    bits = body*f['bits_per_weight'] + one_d*32
    if Fi % 256: bits += down*(f['ffn_down_bits_if_ffn_not_multiple_of_256'] - f['ffn_down_bits'])
    bits += V*D*(f['tied_embedding_bits'] if m['tie_word_embeddings'] else f['embedding_bits'] + f['output_layer_bits'])
    return bits/8e9
errs = []
for mid, tab in PUB.items():
    for mix, gb in tab.items():
        if mix.lower() not in F or F[mix.lower()]['kind'] != 'gguf_mix': continue
        e = 100*(est(mid, mix)-gb)/gb; errs.append((abs(e), mid, mix, gb, round(est(mid, mix),2)))
errs.sort(reverse=True)
print(len(errs), 'max abs err %', round(errs[0][0],2), errs[:5])
print('Llama-3.1-70B Q4_K_M:', round(est('llama-3.1-70b','Q4_K_M'),2), 'GB (published 42.52)')
