def t5(V,d,dkv,h,ff,L,gated=True):
    inner=dkv*h
    attn=4*d*inner
    ffp=(3 if gated else 2)*d*ff
    enc = L*(attn+ffp+2*d) + 32*h + d            # rel-pos bias in first layer only, final LN
    dec = L*(2*attn+ffp+3*d) + 32*h + d
    shared=V*d
    return shared+enc, shared+enc+dec+V*d        # encoder-only (with shared emb), full (untied lm_head)
e,f=t5(32128,4096,64,64,10240,24)
print('t5-v1.1-xxl encoder', e, 'full', f, 'keras t5_1.1_xxl 11135332352')
def clip_text(V,H,L,I,ctx=77,proj=None):
    per=4*(H*H+H)+2*2*H+(H*I+I)+(I*H+H)
    p=V*H+ctx*H+L*per+2*H
    if proj: p+=H*proj
    return p
print('clip-L text', clip_text(49408,768,12,3072))
print('openclip bigG text + proj', clip_text(49408,1280,32,5120,proj=1280))
print('sum', clip_text(49408,768,12,3072)+clip_text(49408,1280,32,5120,proj=1280))
