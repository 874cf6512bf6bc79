"""Predicted safetensors checkpoint bytes for weight-only int formats (AWQ/GPTQ/bnb/FP8) on dense llama-style
models, from the tensor layouts in AutoAWQ awq/modules/linear/gemm.py, vLLM gptq.py, bitsandbytes functional.py."""
import yaml
ref = {x['id']: x for x in yaml.safe_load(open('/work/shared/reference/models.yaml'))['models']}

def linears(m, F=None):
    L, D, H, KV, hd, V = (m[k] for k in ('num_hidden_layers','hidden_size','num_attention_heads','num_key_value_heads','head_dim','vocab_size'))
    F = F or m['intermediate_size']
    per = [(D, H*hd), (D, KV*hd), (D, KV*hd), (H*hd, D), (D, F), (D, F), (F, D)]  # (in, out)
    return L, per, D, V, H, KV, hd

def awq_bytes(m, F=None, g=128, bits=4, qkv_bias=False, gptq=False):
    L, per, D, V, H, KV, hd = linears(m, F)
    b = 0
    for i, o in per:
        b += i*o*bits/8                 # qweight int32 packed
        b += (i//g)*o*bits/8            # qzeros packed
        b += (i//g)*o*2                 # fp16 scales
        if gptq: b += i*4               # g_idx int32
    b *= L
    b += L*2*D*2 + D*2                  # norms fp16
    if qkv_bias: b += L*(H*hd+2*KV*hd)*2
    b += V*D*2 * (1 if m['tie_word_embeddings'] else 2)   # embed + lm_head fp16
    return b

def bf16_bytes(m, qkv_bias=False):
    L, per, D, V, H, KV, hd = linears(m)
    b = L*sum(i*o for i,o in per)*2 + L*2*D*2 + D*2 + V*D*2*(1 if m['tie_word_embeddings'] else 2)
    if qkv_bias: b += L*(H*hd+2*KV*hd)*2
    return b

def fp8_bytes(m, scale='channel', qkv_bias=False, block=128):
    L, per, D, V, H, KV, hd = linears(m)
    b = 0
    for i, o in per:
        b += i*o
        if scale == 'channel': b += o*4          # fp32 per-output-channel (compressed-tensors weight_scale)
        elif scale == 'tensor': b += 4 + 4       # weight_scale + input_scale
        elif scale == 'block': b += -(-i//block)*-(-o//block)*4
    b *= L
    b += L*2*D*2 + D*2 + V*D*2*(1 if m['tie_word_embeddings'] else 2)
    if qkv_bias: b += L*(H*hd+2*KV*hd)*2
    return b

def nf4_bytes(m, double_quant=True, blocksize=64):
    L, per, D, V, H, KV, hd = linears(m)
    b = 0
    for i, o in per:
        n = i*o
        b += n/2
        if double_quant: b += n/blocksize + (n/blocksize/256)*4 + 4 + 256*4   # uint8 absmax, fp32 absmax2, offset, code
        else: b += n/blocksize*4
        b += 16*4  # nested quant_state code table etc (small)
    b *= L
    b += L*2*D*2 + D*2 + V*D*2*(1 if m['tie_word_embeddings'] else 2)
    return b

if __name__ == '__main__':
    for mid, bias in [('qwen2.5-7b',True),('qwen2.5-14b',True),('qwen2.5-32b',True),('qwen2.5-72b',True),('llama-3.1-8b',False),('llama-3.1-70b',False),('llama-3.1-405b',False)]:
        m = ref[mid]
        print(f"{mid:14s} bf16 {bf16_bytes(m,bias)/1e9:7.2f}  awq {awq_bytes(m,qkv_bias=bias)/1e9:6.2f}  gptq4 {awq_bytes(m,qkv_bias=bias,gptq=True)/1e9:6.2f}  gptq8 {awq_bytes(m,bits=8,qkv_bias=bias,gptq=True)/1e9:6.2f}  fp8ch {fp8_bytes(m,'channel',bias)/1e9:6.2f} fp8blk {fp8_bytes(m,'block',bias)/1e9:6.2f} nf4 {nf4_bytes(m)/1e9:6.2f}")
    m = ref['qwen2.5-72b']
    print('qwen72 awq F=29696', awq_bytes(m, F=29696, qkv_bias=True)/1e9, 'gptq4 F=29696', awq_bytes(m, F=29696, qkv_bias=True, gptq=True)/1e9, 'gptq8', awq_bytes(m, F=29696, bits=8, qkv_bias=True, gptq=True)/1e9)
