import yaml, statistics as st, re
import derive_gguf_bpw as d
from ffn_down import ffn_down_bits, ref
src=open('compare_models.py').read(); q72=eval(re.search(r"q72 = (\{.*?\})", src, re.S).group(1))
m=dict(ref['qwen2.5-72b']); m.update({'qkv_bias':True,'llm_type_70b':True})
ts,n1d=d.tensors(m); L,D,F,V=m['num_hidden_layers'],m['hidden_size'],m['intermediate_size'],m['vocab_size']
down_n=L*F*D; body_n=sum(c*r for _,c2,_,c,r in [(0,x[1],0,x[3],x[4]) for x in ts] if c2 not in ('TOKEN_EMBD','OUTPUT'))
for ft,gb in q72.items():
    if ft in ('Q4_1','Q5_1'): continue
    rests=[]; downs=[]
    for mid,e in [('llama-3.1-8b',{}),('llama-3.1-70b',{'llm_type_70b':True}),('mistral-7b-v0.3',{}),('qwen2.5-7b',{}),('qwen2.5-32b',{}),('gemma-2-9b',{})]:
        mm=dict(ref[mid]); mm.update(e); a,b=ffn_down_bits(mm,ft,False); a2,_=ffn_down_bits(mm,ft,True); rests.append(b); downs.append(a2)
    r=d.size(m,ft,imatrix=False)
    est=((body_n-down_n)*st.mean(rests)+down_n*st.mean(downs)+V*D*(d.bpw(r['emb'])+d.bpw(r['out']))+n1d*32)/8e9
    print(ft, gb, round(est,2), f"{100*(est-gb)/gb:+.1f}%")
