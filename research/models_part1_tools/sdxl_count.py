import sys, torch
sys.path.insert(0, '/tmp/r/sgm')
from sgm.modules.diffusionmodules.openaimodel import UNetModel
p = dict(adm_in_channels=2816, num_classes='sequential', use_checkpoint=False, in_channels=4, out_channels=4,
         model_channels=320, attention_resolutions=[4, 2], num_res_blocks=2, channel_mult=[1, 2, 4],
         num_head_channels=64, use_linear_in_transformer=True, transformer_depth=[1, 2, 10], context_dim=2048,
         spatial_transformer_attn_type='softmax')
with torch.device('meta'):
    m = UNetModel(**p)
print('SDXL UNet params', sum(x.numel() for x in m.parameters()))
