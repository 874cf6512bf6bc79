import sys, torch
sys.path.insert(0, '/tmp/r/sgm')
from sgm.modules.diffusionmodules.model import Encoder, Decoder
dd = dict(attn_type='vanilla', double_z=True, z_channels=4, resolution=256, in_channels=3, out_ch=3, ch=128, ch_mult=[1,2,4,4], num_res_blocks=2, attn_resolutions=[], dropout=0.0)
with torch.device('meta'):
    e = Encoder(**dd); d = Decoder(**dd)
    q = torch.nn.Conv2d(2*4, 2*4, 1); pq = torch.nn.Conv2d(4, 4, 1)   # quant_conv / post_quant_conv (embed_dim 4)
n = lambda m: sum(p.numel() for p in m.parameters())
print('VAE enc', n(e), 'dec', n(d), 'total', n(e)+n(d)+n(q)+n(pq))
