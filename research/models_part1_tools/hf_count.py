import torch, json, sys
import transformers as T
def count(model_cls, cfg):
    with torch.device('meta'):
        m = model_cls(cfg)
    tot = sum(p.numel() for p in m.parameters())
    # tied params counted once by parameters()
    return tot
R = {}
def llama(name, **kw):
    cfg = T.LlamaConfig(**kw); R[name] = count(T.LlamaForCausalLM, cfg)
# Gemma 3 text
def g3(name, **kw):
    cfg = T.Gemma3TextConfig(**kw); R[name] = count(T.Gemma3ForCausalLM, cfg)
g3('gemma3-270m', vocab_size=262144, hidden_size=640, intermediate_size=2048, num_hidden_layers=18, num_attention_heads=4, num_key_value_heads=1, head_dim=256)
g3('gemma3-1b', vocab_size=262144, hidden_size=1152, intermediate_size=6912, num_hidden_layers=26, num_attention_heads=4, num_key_value_heads=1, head_dim=256)
g3('gemma3-4b-text(262208)', vocab_size=262208, hidden_size=2560, intermediate_size=10240, num_hidden_layers=34, num_attention_heads=8, num_key_value_heads=4, head_dim=256)
g3('gemma3-12b-text(262208)', vocab_size=262208, hidden_size=3840, intermediate_size=15360, num_hidden_layers=48, num_attention_heads=16, num_key_value_heads=8, head_dim=256)
g3('gemma3-27b-text(262208)', vocab_size=262208, hidden_size=5376, intermediate_size=21504, num_hidden_layers=62, num_attention_heads=32, num_key_value_heads=16, head_dim=128)
# OLMo 2
def olmo2(name, **kw):
    cfg = T.Olmo2Config(**kw); R[name] = count(T.Olmo2ForCausalLM, cfg)
olmo2('olmo2-7b', vocab_size=100352, hidden_size=4096, intermediate_size=11008, num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=32, tie_word_embeddings=False)
olmo2('olmo2-13b', vocab_size=100352, hidden_size=5120, intermediate_size=13824, num_hidden_layers=40, num_attention_heads=40, num_key_value_heads=40, tie_word_embeddings=False)
olmo2('olmo2-32b', vocab_size=100352, hidden_size=5120, intermediate_size=27648, num_hidden_layers=64, num_attention_heads=40, num_key_value_heads=8, tie_word_embeddings=False)
# Phi-3.5 MoE
cfg = T.PhimoeConfig(vocab_size=32064, hidden_size=4096, intermediate_size=6400, num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=8, num_local_experts=16, num_experts_per_tok=2, attention_bias=True, lm_head_bias=True, tie_word_embeddings=False)
R['phi3.5-moe'] = count(T.PhimoeForCausalLM, cfg)
# Cohere
def cohere(name, **kw):
    cfg = T.CohereConfig(**kw); R[name] = count(T.CohereForCausalLM, cfg)
cohere('command-r-v01', vocab_size=256000, hidden_size=8192, intermediate_size=22528, num_hidden_layers=40, num_attention_heads=64, num_key_value_heads=64, tie_word_embeddings=True, use_qk_norm=False)
cohere('command-r-08-2024', vocab_size=256000, hidden_size=8192, intermediate_size=24576, num_hidden_layers=40, num_attention_heads=64, num_key_value_heads=8, tie_word_embeddings=True, use_qk_norm=False)
cohere('command-r-plus-v01', vocab_size=256000, hidden_size=12288, intermediate_size=33792, num_hidden_layers=64, num_attention_heads=96, num_key_value_heads=8, tie_word_embeddings=True, use_qk_norm=True)
cfg = T.Cohere2Config(vocab_size=256000, hidden_size=12288, intermediate_size=36864, num_hidden_layers=64, num_attention_heads=96, num_key_value_heads=8, head_dim=128, tie_word_embeddings=True)
R['command-a (assumed 64L/96h/8kv)'] = count(T.Cohere2ForCausalLM, cfg)
# Falcon 7B (RW: multi_query, parallel attn, tied)
cfg = T.FalconConfig(vocab_size=65024, hidden_size=4544, num_hidden_layers=32, num_attention_heads=71, multi_query=True, parallel_attn=True, new_decoder_architecture=False, bias=False, alibi=False, tie_word_embeddings=True)
R['falcon-7b'] = count(T.FalconForCausalLM, cfg)
cfg = T.FalconConfig(vocab_size=65024, hidden_size=8192, num_hidden_layers=60, num_attention_heads=128, num_kv_heads=8, new_decoder_architecture=True, parallel_attn=True, bias=False, tie_word_embeddings=True)
R['falcon-40b(tied)'] = count(T.FalconForCausalLM, cfg)
cfg = T.FalconConfig(vocab_size=65024, hidden_size=14848, num_hidden_layers=80, num_attention_heads=232, num_kv_heads=8, new_decoder_architecture=True, parallel_attn=True, bias=False, tie_word_embeddings=True)
R['falcon-180b(tied)'] = count(T.FalconForCausalLM, cfg)
# Granite
def gran(name, **kw):
    cfg = T.GraniteConfig(**kw); R[name] = count(T.GraniteForCausalLM, cfg)
gran('granite-3.1-2b', vocab_size=49155, hidden_size=2048, intermediate_size=8192, num_hidden_layers=40, num_attention_heads=32, num_key_value_heads=8, tie_word_embeddings=True)
gran('granite-3.1-8b', vocab_size=49155, hidden_size=4096, intermediate_size=12800, num_hidden_layers=40, num_attention_heads=32, num_key_value_heads=8, tie_word_embeddings=True)
for k,v in R.items(): print(f'{k:40s} {v:>15,d}')
