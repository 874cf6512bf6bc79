import yaml, statistics as st
import derive_gguf_bpw as d
ref = {x['id']: x for x in yaml.safe_load(open('/work/shared/reference/models.yaml'))['models']}
def ffn_down_bits(m, ft, fallback):
    ts, n1d = d.tensors(m); ctr={'v':0}; L=m['num_hidden_layers']; bits=n=0; rest_bits=rest_n=0
    for name,cat,i,nc,nr in ts:
        t = d.choose(ft,cat,i,L,m,True,ctr,m['tie_word_embeddings'])
        if cat=='DOWN':
            if fallback: t = d.FALLBACK.get(t,t)
            bits += nc*nr*d.bpw(t); n += nc*nr
        elif cat not in ('TOKEN_EMBD','OUTPUT'):
            rest_bits += nc*nr*d.bpw(t); rest_n += nc*nr
    return bits/n, rest_bits/rest_n
if __name__ == '__main__':
  out = {}
  for ft in ['Q2_K','Q3_K_S','Q3_K_M','Q3_K_L','Q4_K_S','Q4_K_M','Q5_K_S','Q5_K_M','Q6_K','Q8_0','Q4_0','Q5_0','IQ1_S','IQ1_M','IQ2_XXS','IQ2_XS','IQ2_S','IQ2_M','IQ3_XXS','IQ3_XS','IQ3_S','IQ3_M','IQ4_XS','IQ4_NL']:
      vals=[]
      for mid, e in [('llama-3.1-8b',{}),('llama-3.1-70b',{'llm_type_70b':True}),('mistral-7b-v0.3',{}),('qwen2.5-7b',{}),('qwen2.5-32b',{}),('gemma-2-9b',{})]:
          m=dict(ref[mid]); m.update(e)
          vals.append((ffn_down_bits(m,ft,False)[0], ffn_down_bits(m,ft,True)[0]))
      a=st.mean(v[0] for v in vals); b=st.mean(v[1] for v in vals)
      out[ft]=(round(a,4), round(b,4))
      print(ft, out[ft])
  # check qwen72 with table+fallback
  m=dict(ref['qwen2.5-72b']); m.update({'qkv_bias':True,'llm_type_70b':True})
  ts,n1d=d.tensors(m)
  L,D,F=m['num_hidden_layers'],m['hidden_size'],m['intermediate_size']
  down_n=L*F*D
  pass
