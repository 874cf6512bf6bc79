import torch
from diffusers import FluxTransformer2DModel
for g in (True, False):
    with torch.device('meta'):
        m = FluxTransformer2DModel(patch_size=1, in_channels=64, num_layers=19, num_single_layers=38, attention_head_dim=128,
                                   num_attention_heads=24, joint_attention_dim=4096, pooled_projection_dim=768, guidance_embeds=g)
    print('guidance', g, sum(p.numel() for p in m.parameters()))
