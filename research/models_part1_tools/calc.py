"""Parameter arithmetic from config fields (llama-style decoder)."""
def dense(V,H,L,nq,nkv,hd,I,tie,norms_per_layer=2,qkv_bias=False,mlp='gated',extra_per_layer=0,final_norm=True,norm_bias=False):
    attn = H*nq*hd + 2*H*nkv*hd + nq*hd*H
    if qkv_bias: attn += nq*hd + 2*nkv*hd
    mlpp = 3*H*I if mlp=='gated' else 2*H*I
    norms = norms_per_layer*H*(2 if norm_bias else 1)
    per = attn+mlpp+norms+extra_per_layer
    emb = V*H*(1 if tie else 2)
    return emb + L*per + (H*(2 if norm_bias else 1) if final_norm else 0)
def moe(V,H,L,nq,nkv,hd,I,E,tie,shared_I=0,router=True):
    attn = H*nq*hd + 2*H*nkv*hd + nq*hd*H
    per = attn + E*3*H*I + (E*H if router else 0) + shared_I*3*H + 2*H
    return V*H*(1 if tie else 2) + L*per + H
if __name__=='__main__':
    print('llama2-7b', dense(32000,4096,32,32,32,128,11008,False), 'keras 6738415616')
    print('mistral7b', dense(32000,4096,32,32,8,128,14336,False), 'keras 7241732096')
    print('llama3-8b', dense(128256,4096,32,32,8,128,14336,False), 'keras 8030261248')
    print('phi3mini', dense(32064,3072,32,32,32,96,8192,False), 'keras 3821079552')
    print('mixtral', moe(32000,4096,32,32,8,128,14336,8,False), 'keras 46702792704')
    print('magistral', dense(131072,5120,40,32,8,128,32768,False), 'keras 23572403200')
