# FLUX.1 parameter count from black-forest-labs/flux src/flux/model.py + modules/layers.py
def lin(i,o,b=True): return i*o+(o if b else 0)
def flux(guidance):
    H=3072; heads=24; hd=H//heads; mlp=int(H*4.0); cin=64; vec=768; ctx=4096
    p=lin(cin,H)                       # img_in
    p+=lin(256,H)+lin(H,H)             # time_in
    p+=lin(vec,H)+lin(H,H)             # vector_in
    if guidance: p+=lin(256,H)+lin(H,H)
    p+=lin(ctx,H)                      # txt_in
    # double block
    mod=lin(H,6*H)
    attn=lin(H,3*H)+2*hd+lin(H,H)      # qkv(bias) + qknorm scales + proj
    mlpp=lin(H,mlp)+lin(mlp,H)
    dbl=2*(mod+attn+mlpp)
    p+=19*dbl
    sgl=lin(H,3*H+mlp)+lin(H+mlp,H)+2*hd+lin(H,3*H)
    p+=38*sgl
    p+=lin(H,2*H)+lin(H,1*1*cin)       # final layer (patch_size 1, out 64)
    return p
print("dev", flux(True), "schnell", flux(False))
