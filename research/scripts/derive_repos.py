"""Derived checkpoint sizes (decimal GB) for the quantized repos, from the reference configs in
/work/shared/reference/models.yaml and the tensor layouts cited in formats.yaml."""
import yaml, math
ref = {x['id']: x for x in yaml.safe_load(open('/work/shared/reference/models.yaml'))['models']}

def layers(m, F=None):
    """per-layer linear (in,out) list, per-layer router params, 1-D params; MoE aware."""
    D,H,KV,hd = m['hidden_size'],m['num_attention_heads'],m['num_key_value_heads'],m['head_dim']
    attn = [(D,H*hd),(D,KV*hd),(D,KV*hd),(H*hd,D)]
    moe = m.get('moe')
    if moe:
        Fe = moe['moe_intermediate_size'] if 'moe_intermediate_size' in moe else m['intermediate_size']
        mlp = [(D,Fe),(D,Fe),(Fe,D)] * moe['num_experts']
        router = D*moe['num_experts']
    else:
        F = F or m['intermediate_size']; mlp = [(D,F),(D,F),(F,D)]; router = 0
    return attn, mlp, router

def ckpt_bytes(mid, fmt, F=None, qkv_bias=False, qk_norm=False):
    m = ref[mid]; L,D,V = m['num_hidden_layers'],m['hidden_size'],m['vocab_size']
    attn, mlp, router = layers(m, F)
    lin = attn + mlp
    def wbytes(i,o):
        n=i*o
        if fmt=='bf16': return 2*n
        if fmt in ('awq','gptq4'): return n/2 + (i//128)*o*(2+0.5) + (i*4 if fmt=='gptq4' else 0)
        if fmt=='gptq8': return n + (i//128)*o*(2+1) + i*4
        if fmt=='w4a16': return n/2 + (i//128)*o*2          # compressed-tensors pack-quantized, symmetric, bf16 scales
        if fmt=='fp8_channel': return n + o*4
        if fmt=='fp8_tensor': return n + 8
        if fmt=='fp8_block': return n + math.ceil(i/128)*math.ceil(o/128)*4
        if fmt=='nf4_dq': return n/2 + n/64 + n/64/256*4
        raise ValueError(fmt)
    b = L*sum(wbytes(i,o) for i,o in lin)
    b += L*router*2                               # routers stay bf16 in every format here
    H,KV,hd = m['num_attention_heads'],m['num_key_value_heads'],m['head_dim']
    b += (L*2*D + D)*2                            # RMSNorms
    if qkv_bias: b += L*(H*hd+2*KV*hd)*2
    if qk_norm: b += L*2*hd*2
    b += V*D*2*(1 if m['tie_word_embeddings'] else 2)
    return b

def params(mid, qkv_bias=False, qk_norm=False):
    m=ref[mid]; L,D,V=m['num_hidden_layers'],m['hidden_size'],m['vocab_size']
    attn,mlp,router=layers(m)
    p=L*(sum(i*o for i,o in attn+mlp)+router)+L*2*D+D+V*D*(1 if m['tie_word_embeddings'] else 2)
    H,KV,hd=m['num_attention_heads'],m['num_key_value_heads'],m['head_dim']
    if qkv_bias: p+=L*(H*hd+2*KV*hd)
    if qk_norm: p+=L*2*hd
    return p

if __name__=='__main__':
    for mid in ['qwen3-8b','qwen3-32b','qwen3-30b-a3b','qwen3-235b-a22b']:
        print(mid, 'params', params(mid, qk_norm=True)/1e9, 'ref', ref[mid]['params_computed_b'])
    rows = [
     ('Qwen/Qwen2.5-7B-Instruct-AWQ','qwen2.5-7b','awq',{}),('Qwen/Qwen2.5-14B-Instruct-AWQ','qwen2.5-14b','awq',{}),
     ('Qwen/Qwen2.5-32B-Instruct-AWQ','qwen2.5-32b','awq',{}),('Qwen/Qwen2.5-72B-Instruct-AWQ','qwen2.5-72b','awq',{'F':29696}),
     ('Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4','qwen2.5-7b','gptq4',{}),('Qwen/Qwen2.5-14B-Instruct-GPTQ-Int4','qwen2.5-14b','gptq4',{}),
     ('Qwen/Qwen2.5-32B-Instruct-GPTQ-Int4','qwen2.5-32b','gptq4',{}),('Qwen/Qwen2.5-72B-Instruct-GPTQ-Int4','qwen2.5-72b','gptq4',{'F':29696}),
     ('Qwen/Qwen2.5-7B-Instruct-GPTQ-Int8','qwen2.5-7b','gptq8',{}),('Qwen/Qwen2.5-14B-Instruct-GPTQ-Int8','qwen2.5-14b','gptq8',{}),
     ('Qwen/Qwen2.5-32B-Instruct-GPTQ-Int8','qwen2.5-32b','gptq8',{}),('Qwen/Qwen2.5-72B-Instruct-GPTQ-Int8','qwen2.5-72b','gptq8',{'F':29696}),
     ('Qwen/Qwen3-8B-FP8','qwen3-8b','fp8_block',{}),('Qwen/Qwen3-32B-FP8','qwen3-32b','fp8_block',{}),
     ('Qwen/Qwen3-30B-A3B-FP8','qwen3-30b-a3b','fp8_block',{}),('Qwen/Qwen3-235B-A22B-FP8','qwen3-235b-a22b','fp8_block',{}),
     ('Qwen/Qwen3-8B-AWQ','qwen3-8b','awq',{}),('Qwen/Qwen3-32B-AWQ','qwen3-32b','awq',{}),
     ('meta-llama/Llama-3.1-405B-Instruct-FP8','llama-3.1-405b','fp8_channel',{}),
     ('RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8','llama-3.1-8b','fp8_tensor',{}),('RedHatAI/Meta-Llama-3.1-70B-Instruct-FP8','llama-3.1-70b','fp8_tensor',{}),
     ('RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w4a16','llama-3.1-8b','w4a16',{}),('RedHatAI/Meta-Llama-3.1-70B-Instruct-quantized.w4a16','llama-3.1-70b','w4a16',{}),
     ('hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4','llama-3.1-8b','awq',{}),('hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4','llama-3.1-70b','awq',{}),
     ('hugging-quants/Meta-Llama-3.1-405B-Instruct-AWQ-INT4','llama-3.1-405b','awq',{}),
     ('hugging-quants/Meta-Llama-3.1-8B-Instruct-GPTQ-INT4','llama-3.1-8b','gptq4',{}),('hugging-quants/Meta-Llama-3.1-70B-Instruct-GPTQ-INT4','llama-3.1-70b','gptq4',{}),
     ('hugging-quants/Meta-Llama-3.1-405B-Instruct-GPTQ-INT4','llama-3.1-405b','gptq4',{}),
     ('unsloth/Meta-Llama-3.1-8B-Instruct-bnb-4bit','llama-3.1-8b','nf4_dq',{}),('unsloth/Meta-Llama-3.1-70B-Instruct-bnb-4bit','llama-3.1-70b','nf4_dq',{}),
    ]
    for hf, mid, fmt, kw in rows:
        bias = mid.startswith('qwen2.5'); qkn = mid.startswith('qwen3')
        print(f"{hf:60s} {fmt:12s} {ckpt_bytes(mid, fmt, kw.get('F'), qkv_bias=bias, qk_norm=qkn)/1e9:8.2f}")
