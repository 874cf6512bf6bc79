import torch, transformers as T
def cnt(m): return sum(p.numel() for p in m.parameters())
R={}
# Llama 4 text (from aiconfigurator configs)
for name, E, step in (('scout',16,1),('maverick',128,2)):
    tc = T.Llama4TextConfig(vocab_size=202048, hidden_size=5120, intermediate_size=8192, intermediate_size_mlp=16384,
        num_hidden_layers=48, num_attention_heads=40, num_key_value_heads=8, head_dim=128, num_local_experts=E,
        num_experts_per_tok=1, interleave_moe_layer_step=step, use_qk_norm=(name=='scout'), tie_word_embeddings=False)
    with torch.device('meta'):
        m = T.Llama4ForCausalLM(tc)
    R[f'llama4-{name} text'] = cnt(m)
    # active: non-expert params + 1 routed expert per MoE layer (+shared)
    tot=0; exp=0
    for n,p in m.named_parameters():
        if 'experts' in n and 'shared' not in n: exp += p.numel()
        tot += p.numel()
    n_moe = 48//step
    per_expert = exp // (E*n_moe)
    R[f'llama4-{name} text active (1 routed/layer, embeddings incl.)'] = tot - exp + n_moe*per_expert
    # with default vision config
    vc = T.Llama4VisionConfig()
    cfg = T.Llama4Config(text_config=tc.to_dict(), vision_config=vc.to_dict())
    with torch.device('meta'):
        mm = T.Llama4ForConditionalGeneration(cfg)
    R[f'llama4-{name} total w/ default vision'] = cnt(mm)
    R['llama4 default vision cfg'] = str({k: getattr(vc,k) for k in ('hidden_size','num_hidden_layers','num_attention_heads','intermediate_size','image_size','patch_size','vision_output_dim','projector_output_dim')})
# Mllama 11B
tc = dict(vocab_size=128256, hidden_size=4096, intermediate_size=14336, num_hidden_layers=40, num_attention_heads=32, num_key_value_heads=8, cross_attention_layers=[3,8,13,18,23,28,33,38], max_position_embeddings=131072)
vc = dict(hidden_size=1280, intermediate_size=5120, num_hidden_layers=32, num_attention_heads=16, image_size=560, patch_size=14, vision_output_dim=7680)
cfg = T.MllamaConfig(text_config=tc, vision_config=vc)
with torch.device('meta'):
    m = T.MllamaForConditionalGeneration(cfg)
R['mllama-11b total'] = cnt(m); R['mllama-11b vision+proj'] = sum(p.numel() for n,p in m.named_parameters() if 'vision' in n or 'multi_modal_projector' in n)
R['mllama-11b default vision global layers'] = T.MllamaVisionConfig(**vc).num_global_layers
tc90 = dict(vocab_size=128256, hidden_size=8192, intermediate_size=28672, num_hidden_layers=100, num_attention_heads=64, num_key_value_heads=8, cross_attention_layers=[3+5*i for i in range(20)], max_position_embeddings=131072)
cfg = T.MllamaConfig(text_config=tc90, vision_config=vc)
with torch.device('meta'):
    m = T.MllamaForConditionalGeneration(cfg)
R['mllama-90b total (cross layers every 5th assumed)'] = cnt(m); R['mllama-90b vision+proj'] = sum(p.numel() for n,p in m.named_parameters() if 'vision' in n or 'multi_modal_projector' in n)
# Mistral3 (Small 3.1)
tc = dict(model_type='mistral', vocab_size=131072, hidden_size=5120, intermediate_size=32768, num_hidden_layers=40, num_attention_heads=32, num_key_value_heads=8, head_dim=128, tie_word_embeddings=False)
vc = dict(model_type='pixtral', hidden_size=1024, intermediate_size=4096, num_hidden_layers=24, num_attention_heads=16, head_dim=64, image_size=1540, patch_size=14)
cfg = T.Mistral3Config(text_config=tc, vision_config=vc, multimodal_projector_bias=False, spatial_merge_size=2)
with torch.device('meta'):
    m = T.Mistral3ForConditionalGeneration(cfg)
R['mistral-small-3.1 total'] = cnt(m); R['mistral-small-3.1 vision+proj'] = sum(p.numel() for n,p in m.named_parameters() if 'vision' in n or 'multi_modal_projector' in n)
# Pixtral 12B (Llava + pixtral vision: defaults except image 1024 patch 16)
tc = dict(model_type='mistral', vocab_size=131072, hidden_size=5120, intermediate_size=14336, num_hidden_layers=40, num_attention_heads=32, num_key_value_heads=8, head_dim=128, tie_word_embeddings=False)
vcd = T.PixtralVisionConfig(image_size=1024, patch_size=16, head_dim=64)
R['pixtral vision default cfg'] = str({k: getattr(vcd,k) for k in ('hidden_size','num_hidden_layers','num_attention_heads','intermediate_size')})
cfg = T.LlavaConfig(text_config=tc, vision_config=vcd.to_dict(), projector_hidden_act='gelu', vision_feature_layer=-1, vision_feature_select_strategy='full', image_token_index=10)
with torch.device('meta'):
    m = T.LlavaForConditionalGeneration(cfg)
R['pixtral total'] = cnt(m); R['pixtral vision+proj'] = sum(p.numel() for n,p in m.named_parameters() if 'vision' in n or 'multi_modal_projector' in n)
for k,v in R.items(): print(f'{k:60s} {v:>18,}' if isinstance(v,int) else f'{k:60s} {v}')
